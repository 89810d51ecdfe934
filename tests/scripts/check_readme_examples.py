#!/usr/bin/env python3
"""ctest: every example the README shows runs, and every link resolves.

    check_readme_examples.py REPO BUILD_DIR [--python] [--budget SECONDS]

What it checks in README.md:

* Every command of every ```sh block runs against BUILD_DIR and exits 0,
  or the status a comment line `# expect exit N` right before it names. A
  command is a line (with its `\\` continuations); `VAR=value` lines set a
  variable for the rest of the block. Commands run in a scratch folder
  whose entries link to the repository's (`build` to BUILD_DIR), so
  relative paths read the repository's files while the files a command
  writes land in the scratch folder. Each must finish within --budget
  seconds (default 60): the README's examples are the light ones.
  A few commands are not run, each for a reason given in NOT_RUN below.
* Every ```python block runs (with PYTHONPATH=BUILD_DIR/python) when
  --python is given, i.e. when the build has the Python module.
* A code block after `<!-- readme-test: file PATH -->` is PATH's text.
* A code block after `<!-- readme-test: output [ARG...] -->` is exactly what
  the last command before it prints on stdout, run again with ARG... added
  (e.g. --no-wall-time, so that the report cannot go stale).
* A code block after `<!-- readme-test: output-lines -->`: each of its
  lines is among the lines the last command printed (stdout and stderr);
  a line ending in " ..." is the start of one.

And in README.md, CHANGELOG.md and docs/*.md: every relative link points to
a file or folder that exists, and every #anchor to a heading of its page.

Prints `ok` when everything passed; otherwise each failure, and exits 1.
"""

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Commands the README shows that this test does not run, by their first word.
NOT_RUN = {
    "scripts/test": "it runs the whole suite, this test included",
}

MARKER = re.compile(r"<!--\s*readme-test:\s*(\S+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^```\s*([A-Za-z0-9_+-]*)\s*$")
EXPECT = re.compile(r"^#\s*expect exit (\d+)\s*$")
ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def blocks(text):
    """Yields (language, body, marker, line) for each fenced code block, the
    marker being the (kind, args) of a readme-test comment on the last
    non-blank line before it, if any."""
    lines = text.split("\n")
    i = 0
    last_marker = None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            mm = MARKER.search(lines[i])
            if mm:
                last_marker = (mm.group(1), mm.group(2), i + 1)
            elif lines[i].strip():
                last_marker = None
            i += 1
            continue
        lang, start = m.group(1), i
        i += 1
        body = []
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i])
            i += 1
        marker = last_marker
        last_marker = None
        yield lang, "\n".join(body), marker, start + 1
        i += 1


def commands(body):
    """Yields (command, expected_exit) for a ```sh block; assignments come
    as ("VAR=value", None)."""
    expect = 0
    pending = ""
    for raw in body.split("\n"):
        line = raw.rstrip()
        if pending:
            pending += "\n" + line
            if not line.endswith("\\"):
                yield pending, expect
                pending, expect = "", 0
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            m = EXPECT.match(stripped)
            if m:
                expect = int(m.group(1))
            continue
        if ASSIGN.match(stripped):
            yield stripped, None
            continue
        if line.endswith("\\"):
            pending = line
            continue
        yield line, expect
        expect = 0
    if pending:
        yield pending, expect


def slug(heading):
    """GitHub's anchor for a heading."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    out = set()
    counts = {}
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line.rstrip("\n")):
                in_code = not in_code
                continue
            if in_code:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = counts.get(s, 0)
                counts[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
    return out


def check_links(repo, page, failures):
    text = open(page, encoding="utf-8").read()
    # Links inside code blocks and inline code are not links.
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    rel = os.path.relpath(page, repo)
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            failures.append(f"{rel}: link to {target}: no such file")
            continue
        if anchor and dest.endswith(".md") and anchor not in anchors(dest):
            failures.append(f"{rel}: link to {target}: no heading with that anchor")


def scratch_folder(repo, build):
    """A folder whose entries link to the repository's, `build` to BUILD_DIR."""
    tmp = tempfile.mkdtemp(prefix="readme_examples_")
    for name in os.listdir(repo):
        if name in (".git", "build") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(repo, name), os.path.join(tmp, name))
    os.symlink(os.path.abspath(build), os.path.join(tmp, "build"))
    return tmp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("build")
    ap.add_argument("--python", action="store_true")
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    readme = os.path.join(repo, "README.md")
    failures = []

    pages = [readme, os.path.join(repo, "CHANGELOG.md")]
    docs = os.path.join(repo, "docs")
    pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    for page in pages:
        if os.path.exists(page):
            check_links(repo, page, failures)

    work = scratch_folder(repo, args.build)
    env = dict(os.environ)
    env["PATH"] = os.path.join(work, "build", "bin") + os.pathsep + env.get("PATH", "")
    env["CLUSTERSIM_BUILD_DIR"] = os.path.abspath(args.build)
    env["CLUSTERSIM_NO_BUILD"] = "1"  # scripts/run: run this build as it is
    env["PYTHONPATH"] = os.path.join(os.path.abspath(args.build), "python")
    env["MPLBACKEND"] = "Agg"

    text = open(readme, encoding="utf-8").read()
    last = None  # (command, block variables, stdout, stderr) of the last command run
    ran = 0
    for lang, body, marker, line in blocks(text):
        where = f"README.md:{line}"
        if marker:
            kind, margs, _ = marker
            if kind == "file":
                want = open(os.path.join(repo, margs), encoding="utf-8").read()
                if body.strip("\n") != want.strip("\n"):
                    failures.append(f"{where}: the block is not the text of {margs}")
                continue
            if kind in ("output", "output-lines"):
                if last is None:
                    failures.append(f"{where}: an output block with no command before it")
                    continue
                cmd, variables, out, err = last
                if kind == "output":
                    again = cmd + (" " + margs if margs else "")
                    r = subprocess.run(["bash", "-c", again], cwd=work, env={**env, **variables},
                                       capture_output=True, text=True, timeout=args.budget)
                    if r.stdout.rstrip("\n") != body.rstrip("\n"):
                        diff = difflib.unified_diff(body.rstrip("\n").split("\n"),
                                                    r.stdout.rstrip("\n").split("\n"),
                                                    "README.md", "now", lineterm="")
                        failures.append(f"{where}: `{again}` now prints something else "
                                        "(update the README):\n" + "\n".join(diff))
                else:
                    printed = [l.rstrip() for l in (out + err).split("\n")]
                    for want in body.split("\n"):
                        want = want.rstrip()
                        if not want:
                            continue
                        if want.endswith(" ..."):  # the line shown is the start of one printed
                            found = any(l.startswith(want[:-3]) for l in printed)
                        else:
                            found = want in printed
                        if not found:
                            failures.append(f"{where}: `{cmd}` no longer prints: {want}")
                continue
            failures.append(f"{where}: unknown readme-test marker '{kind}'")
            continue
        if lang == "python":
            if not args.python:
                print(f"{where}: python block not run (this build has no Python module)")
                continue
            start = time.monotonic()
            try:
                r = subprocess.run([sys.executable, "-c", body], cwd=work, env=env,
                                   capture_output=True, text=True, timeout=args.budget)
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: python block took more than {args.budget:.0f} s")
                continue
            print(f"{where}: python block, {time.monotonic() - start:.1f} s")
            if r.returncode != 0:
                failures.append(f"{where}: python block exited {r.returncode}:\n{r.stderr}")
            continue
        if lang not in ("sh", "bash", "shell"):
            continue
        variables = {}
        for cmd, expect in commands(body):
            if expect is None:
                name, value = cmd.split("=", 1)
                variables[name] = os.path.expandvars(value)
                continue
            first = shlex.split(cmd, comments=True)[0] if cmd.strip() else ""
            if first in NOT_RUN:
                print(f"{where}: not run: {first}: {NOT_RUN[first]}")
                continue
            start = time.monotonic()
            try:
                r = subprocess.run(["bash", "-c", cmd], cwd=work, env={**env, **variables},
                                   capture_output=True, text=True, timeout=args.budget)
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: `{cmd}` took more than {args.budget:.0f} s: "
                                "README examples should run in seconds")
                last = None
                continue
            took = time.monotonic() - start
            ran += 1
            print(f"{where}: exit {r.returncode} in {took:.1f} s: {cmd}")
            if r.returncode != expect:
                failures.append(f"{where}: `{cmd}` exited {r.returncode}, expected {expect}:\n"
                                f"{r.stderr[-2000:]}")
            last = (cmd, variables, r.stdout, r.stderr)

    if ran == 0:
        failures.append("README.md: no command found in a ```sh block")
    shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
