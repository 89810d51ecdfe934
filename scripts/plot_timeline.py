#!/usr/bin/python3
"""Draw the step timeline of traced ranks from a `clustersim run --trace` file.

    /usr/bin/python3 scripts/plot_timeline.py TRACE.json -o FILE.png
        [--ranks 0,8] [--start MS] [--end MS] [--title TEXT]

TRACE.json is the Chrome/Perfetto trace `run --trace` (or `replay
--trace-out`) writes: one process per rank, one track per stream. Each
(rank, stream) becomes a row, ranks in order and streams as the trace
orders them (host, compute, comm, reduce, tp, pcie, then the others); each
kernel, collective or copy a bar coloured by its kind (GEMM, attention,
other compute; all-gather, reduce-scatter, all-reduce, other
communication; copies, host). The part of a collective a rank spent
waiting for the group's last member (args.wait_us) is drawn hatched
before it, so that exposed waiting stands out. --ranks picks ranks (default:
all in the trace), --start/--end a window in milliseconds. The image is
12 x (1.4 + 0.32 per row) inches at 120 dpi.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import save_figure  # noqa: E402

# Colour by kind: (label, colour); the kind of an event from its category.
KINDS = {
    "gemm": ("GEMM", "#1f77b4"),
    "attention": ("attention", "#9467bd"),
    "compute": ("other compute", "#aec7e8"),
    "all_gather": ("all-gather", "#2ca02c"),
    "reduce_scatter": ("reduce-scatter", "#d62728"),
    "all_reduce": ("all-reduce", "#ff7f0e"),
    "comm": ("other communication", "#8c564b"),
    "copy": ("copies", "#7f7f7f"),
    "host": ("host", "#c7c7c7"),
}
COMPUTE_CATEGORIES = {"gemm", "attention"}
COMM_CATEGORIES = {"all_gather", "reduce_scatter", "all_reduce"}


def fail(message):
    print(f"plot_timeline.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def kind_of(track, category):
    if track == "host" or track == "cpu":
        return "host"
    if track == "pcie" or category == "async_tp":
        return "copy"
    if track == "compute":
        return category if category in COMPUTE_CATEGORIES else "compute"
    return category if category in COMM_CATEGORIES else "comm"


def read_trace(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"{path}: cannot read the file: {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{path}:{e.lineno}:{e.colno}: expected a clustersim Chrome trace (JSON), found "
             f"invalid JSON: {e.msg}")
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        fail(f"{path}: expected a clustersim Chrome trace (an object with traceEvents), found "
             f"{type(data).__name__}")
    tracks = {}  # (pid, tid) -> name
    bars = []
    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e.get("pid"), e.get("tid"))] = e.get("args", {}).get("name", "")
        elif e.get("ph") == "X":
            bars.append(e)
    if not bars:
        fail(f"{path}: expected complete events (\"ph\": \"X\"), found none")
    return tracks, bars


def parse_ranks(text):
    ranks = set()
    for part in text.split(","):
        part = part.strip()
        lo, _, hi = part.partition("-")
        try:
            first = int(lo)
            last = int(hi) if hi else first
        except ValueError:
            fail(f"--ranks: expected ranks such as 0,8-15, found '{text}'")
        if last < first:
            fail(f"--ranks: expected ranks such as 0,8-15, found '{text}'")
        ranks.update(range(first, last + 1))
    return ranks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--ranks")
    parser.add_argument("--start", type=float, help="window start, ms")
    parser.add_argument("--end", type=float, help="window end, ms")
    parser.add_argument("--title")
    args = parser.parse_args()

    tracks, bars = read_trace(args.trace)
    wanted = parse_ranks(args.ranks) if args.ranks else None
    rows = sorted({(b.get("pid"), b.get("tid")) for b in bars
                   if wanted is None or b.get("pid") in wanted})
    if not rows:
        fail(f"--ranks: expected ranks the trace holds, found none of '{args.ranks}'")
    row_of = {r: i for i, r in enumerate(rows)}

    height = 1.4 + 0.32 * len(rows)
    fig, ax = plt.subplots(figsize=(12, height))
    used = set()
    for b in bars:
        key = (b.get("pid"), b.get("tid"))
        if key not in row_of:
            continue
        start_ms = float(b.get("ts", 0)) / 1e3
        dur_ms = float(b.get("dur", 0)) / 1e3
        if args.start is not None and start_ms + dur_ms < args.start:
            continue
        if args.end is not None and start_ms > args.end:
            continue
        kind = kind_of(tracks.get(key, ""), b.get("cat", ""))
        used.add(kind)
        y = row_of[key]
        colour = KINDS[kind][1]
        wait_ms = float(b.get("args", {}).get("wait_us", 0)) / 1e3
        if wait_ms > 0:
            ax.broken_barh([(start_ms - wait_ms, wait_ms)], (y - 0.35, 0.7), facecolors="white",
                           edgecolors=colour, hatch="////", linewidth=0.3)
        ax.broken_barh([(start_ms, max(dur_ms, 1e-6))], (y - 0.35, 0.7), facecolors=colour,
                       linewidth=0)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"rank {pid} {tracks.get((pid, tid), tid)}" for pid, tid in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time in the step (ms)")
    if args.start is not None or args.end is not None:
        ax.set_xlim(left=args.start, right=args.end)
    handles = [mpatches.Patch(color=KINDS[k][1], label=KINDS[k][0]) for k in KINDS if k in used]
    handles.append(mpatches.Patch(facecolor="white", edgecolor="black", hatch="////",
                                  label="waiting for the group"))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(handles), 6), fontsize=8, frameon=False)
    ax.set_title(args.title or os.path.basename(args.trace))
    fig.subplots_adjust(left=0.16, right=0.98, top=1 - 0.45 / height, bottom=1.0 / height)

    save_figure(fig, args.output)


if __name__ == "__main__":
    main()
