#!/usr/bin/env python3
"""ctest: every example the README shows runs, and every link resolves.

    check_readme_examples.py REPO BUILD_DIR [--python] [--budget SECONDS]
    check_readme_examples.py REPO BUILD_DIR --docs [--python] [--budget SECONDS]

What it checks in README.md (or, with --docs, in docs/*.md):

* Every command of every ```sh block runs against BUILD_DIR and exits 0,
  or the status a comment line `# expect exit N` right before it names. A
  command is a line (with its `\\` continuations); `VAR=value` lines set a
  variable for the rest of the page. Commands run in a scratch folder
  whose entries link to the repository's (`build` to BUILD_DIR), so
  relative paths read the repository's files while the files a command
  writes land in the scratch folder; a command that changes what `git
  status` says of the repository is a failure. Each must finish within
  --budget seconds (default 60): the README's examples are the light ones.
* Some commands are not run, each for a reason printed: those of NOT_RUN
  below (the README may skip only `scripts/test`); in docs pages also
  commands with a placeholder for the user's own file (PLACEHOLDER), that
  need GPUs or other tools (NEEDS), that use a variable set from a command
  substitution (the user's measurements folder), and a command after a
  comment line `# not run by the docs test: REASON`.
* Every ```python block runs (with PYTHONPATH=BUILD_DIR/python) when
  --python is given, i.e. when the build has the Python module.
* A code block after `<!-- readme-test: file PATH -->` is PATH's text.
* A code block after `<!-- readme-test: output [ARG...] -->` is exactly what
  the last command before it prints on stdout, run again with ARG... added
  (e.g. --no-wall-time, so that the report cannot go stale).
* A code block after `<!-- readme-test: output-lines -->`: each of its
  lines is among the lines the last command printed (stdout and stderr);
  a line ending in " ..." is the start of one.

Without --docs it also checks, in README.md, CHANGELOG.md and docs/*.md,
that every relative link points to a file or folder that exists and every
#anchor to a heading of its page.

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

# Commands that this test does not run, by their first word.
NOT_RUN = {
    "scripts/test": "it runs the whole suite, this test included",
    "scripts/bench": "benchmarks take minutes (docs/performance.md has their figures)",
    "build/bin/engine_bench": "a benchmark",
    "torchrun": "needs GPUs",
    "mpirun": "needs several processes (tests/scripts/check_sweep_mpi.sh checks mpirun)",
    "AstraSim_Analytical_Congestion_Aware": "needs ASTRA-sim",
}
# In docs pages: names that stand for the user's own files and options.
PLACEHOLDER = re.compile(r"\b(SCENARIO|PREFIX|MEASUREMENTS|my\.yaml|my_cluster\.yaml|"
                         r"my_profiled_run\.yaml|my_all_reduce_perf\.txt|my_runs\.csv)\b|\[--")
# In docs pages: what needs a GPU machine.
NEEDS = re.compile(r"scripts/microbench/")
NOT_RUN_MARK = re.compile(r"^#\s*not run by the docs test:\s*(.+)$")

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
    """Yields (command, expected_exit, skip_reason) for a ```sh block;
    assignments come as ("VAR=value", None, None)."""
    expect, skip = 0, None
    pending = ""
    for raw in body.split("\n"):
        line = raw.rstrip()
        if pending:
            pending += "\n" + line
            if not line.endswith("\\"):
                yield pending, expect, skip
                pending, expect, skip = "", 0, None
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            m = EXPECT.match(stripped)
            if m:
                expect = int(m.group(1))
            m = NOT_RUN_MARK.match(stripped)
            if m:
                skip = m.group(1)
            continue
        if ASSIGN.match(stripped) or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\$\(", stripped):
            yield stripped, None, None
            continue
        if line.endswith("\\"):
            pending = line
            continue
        yield line, expect, skip
        expect, skip = 0, None
    if pending:
        yield pending, expect, skip


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


def git_status(repo):
    try:
        r = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=all"],
                           capture_output=True, text=True)
    except OSError:
        return None
    return r.stdout if r.returncode == 0 else None


class Runner:
    """Runs the code blocks of one page in the scratch folder."""

    def __init__(self, repo, work, env, args, failures):
        self.repo, self.work, self.env, self.args = repo, work, env, args
        self.failures = failures
        self.ran = 0

    def run(self, cmd, variables):
        return subprocess.run(["bash", "-c", cmd], cwd=self.work, env={**self.env, **variables},
                              capture_output=True, text=True, timeout=self.args.budget)

    def skip_reason(self, cmd, variables, docs, marked):
        first = shlex.split(cmd, comments=True)[0] if cmd.strip() else ""
        if first in NOT_RUN:
            return f"{first}: {NOT_RUN[first]}"
        if not docs:
            return None
        if marked:
            return marked
        if PLACEHOLDER.search(cmd):
            return "a placeholder for your own file or options"
        if NEEDS.search(cmd):
            return "needs a GPU machine"
        for name, value in variables.items():
            if "$(" in value and ("$" + name) in cmd:
                return f"${name} is a folder of your own measurements"
        return None

    def page(self, path, docs):
        text = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, self.repo)
        last = None  # (command, variables, stdout, stderr) of the last command run
        variables = {}  # set by `VAR=value` lines, for the rest of the page
        for lang, body, marker, line in blocks(text):
            where = f"{rel}:{line}"
            if marker:
                self.marked(where, body, marker, last)
                continue
            if lang == "python":
                self.python(where, body)
                continue
            if lang not in ("sh", "bash", "shell"):
                continue
            for cmd, expect, marked in commands(body):
                if expect is None:
                    name, value = cmd.split("=", 1)
                    variables = dict(variables)
                    variables[name] = value if "$(" in value else os.path.expandvars(value)
                    continue
                reason = self.skip_reason(cmd, variables, docs, marked)
                if reason:
                    print(f"{where}: not run: {cmd.splitlines()[0]}  ({reason})")
                    if not docs and not cmd.startswith("scripts/test"):
                        self.failures.append(f"{where}: the README shows a command no test runs")
                    last = None
                    continue
                start = time.monotonic()
                try:
                    r = self.run(cmd, variables)
                except subprocess.TimeoutExpired:
                    self.failures.append(f"{where}: `{cmd}` took more than "
                                         f"{self.args.budget:.0f} s: examples should be light")
                    last = None
                    continue
                self.ran += 1
                print(f"{where}: exit {r.returncode} in {time.monotonic() - start:.1f} s: {cmd}")
                if r.returncode != expect:
                    self.failures.append(f"{where}: `{cmd}` exited {r.returncode}, expected "
                                         f"{expect}:\n{r.stderr[-2000:]}")
                last = (cmd, variables, r.stdout, r.stderr)

    def python(self, where, body):
        if not self.args.python:
            print(f"{where}: python block not run (this build has no Python module)")
            return
        start = time.monotonic()
        try:
            r = subprocess.run([sys.executable, "-c", body], cwd=self.work, env=self.env,
                               capture_output=True, text=True, timeout=self.args.budget)
        except subprocess.TimeoutExpired:
            self.failures.append(f"{where}: python block took more than {self.args.budget:.0f} s")
            return
        self.ran += 1
        print(f"{where}: python block, {time.monotonic() - start:.1f} s")
        if r.returncode != 0:
            self.failures.append(f"{where}: python block exited {r.returncode}:\n{r.stderr}")

    def marked(self, where, body, marker, last):
        kind, margs, _ = marker
        if kind == "file":
            want = open(os.path.join(self.repo, margs), encoding="utf-8").read()
            if body.strip("\n") != want.strip("\n"):
                self.failures.append(f"{where}: the block is not the text of {margs}")
            return
        if kind not in ("output", "output-lines"):
            self.failures.append(f"{where}: unknown readme-test marker '{kind}'")
            return
        if last is None:
            self.failures.append(f"{where}: an output block with no command run before it")
            return
        cmd, variables, out, err = last
        if kind == "output":
            again = cmd + (" " + margs if margs else "")
            r = self.run(again, variables)
            if r.stdout.rstrip("\n") != body.rstrip("\n"):
                diff = difflib.unified_diff(body.rstrip("\n").split("\n"),
                                            r.stdout.rstrip("\n").split("\n"),
                                            "page", "now", lineterm="")
                self.failures.append(f"{where}: `{again}` now prints something else "
                                     "(update the page):\n" + "\n".join(diff))
            return
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
                self.failures.append(f"{where}: `{cmd}` no longer prints: {want}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("build")
    ap.add_argument("--python", action="store_true")
    ap.add_argument("--docs", action="store_true", help="run the examples of docs/*.md")
    ap.add_argument("--budget", type=float, default=60.0)
    args = ap.parse_args()
    repo = os.path.abspath(args.repo)
    failures = []
    docs = os.path.join(repo, "docs")
    doc_pages = sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))

    if not args.docs:
        for page in [os.path.join(repo, "README.md"), os.path.join(repo, "CHANGELOG.md")] + doc_pages:
            if os.path.exists(page):
                check_links(repo, page, failures)

    work = scratch_folder(repo, args.build)
    env = dict(os.environ)
    env["PATH"] = os.path.join(work, "build", "bin") + os.pathsep + env.get("PATH", "")
    env["CLUSTERSIM_BUILD_DIR"] = os.path.abspath(args.build)
    env["CLUSTERSIM_NO_BUILD"] = "1"  # scripts/run: run this build as it is
    env["PYTHONPATH"] = os.path.join(os.path.abspath(args.build), "python")
    env["MPLBACKEND"] = "Agg"
    status_before = git_status(repo)

    runner = Runner(repo, work, env, args, failures)
    try:
        if args.docs:
            for page in doc_pages:
                runner.page(page, docs=True)
        else:
            runner.page(os.path.join(repo, "README.md"), docs=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if runner.ran == 0:
        failures.append("no command found in a ```sh block")
    status_after = git_status(repo)
    if status_before is not None and status_after != status_before:
        failures.append("an example changed the repository (git status):\n" + status_after)
    for f in failures:
        print("FAIL " + f)
    if failures:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
