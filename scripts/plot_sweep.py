#!/usr/bin/python3
"""Plot a `clustersim sweep` CSV.

    /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv -o FILE.png [--metric mfu]
        [--x KEY] [--y KEY] [--title TEXT]
    /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv -o FILE.png --breakdown

--breakdown draws one stacked bar per simulated point (grid order): where
its step went (compute, each exposed communication, the pipeline bubble,
sync wait, launch-bound, idle; seconds per rank).

The swept keys are the CSV's columns before `status`. With two or more swept
keys (or --x and --y) it draws a heatmap of the metric over the first two
(the best value over any other swept key in each cell); out-of-memory cells
are hatched and labelled OOM, skipped (invalid) and failed cells are grey.
With one swept key it draws the metric against it, out-of-memory points as
red crosses.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import save_figure  # noqa: E402

LABELS = {
    "mfu": "MFU",
    "step_time_s": "step time (s)",
    "tokens_per_s_per_gpu": "tokens/s per GPU",
    "tflops_per_gpu": "TFLOP/s per GPU",
    "exposed_comm_s": "exposed communication (s)",
    "ettr_mean": "ETTR",
    "time_to_train_days": "time to train (days)",
}
LOWER_IS_BETTER = {"step_time_s", "exposed_comm_s", "time_to_train_days"}


def fail(message):
    print(f"plot_sweep.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def short(key):
    return key.rsplit(".", 1)[-1]


def read_rows(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(line for line in f if not line.startswith("#"))
            rows = list(reader)
            fields = reader.fieldnames or []
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if "status" not in fields:
        fail(f"{path}: expected a clustersim sweep CSV (a 'status' column), found columns {fields}")
    keys = fields[: fields.index("status")]
    if not keys:
        fail(f"{path}: no swept key before the 'status' column")
    return rows, keys, fields


def sort_values(values):
    nums = [number(v) for v in values]
    if all(n is not None for n in nums):
        return sorted(values, key=float)
    return sorted(values)


def best_of(a, b, metric):
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b) if metric in LOWER_IS_BETTER else max(a, b)


def heatmap(rows, x, y, metric, ax):
    xs = sort_values({r[x] for r in rows})
    ys = sort_values({r[y] for r in rows})
    value = {}
    state = {}
    for r in rows:
        cell = (r[x], r[y])
        if r["status"] in ("skipped", "failed"):
            state.setdefault(cell, "skipped")
            continue
        v = number(r.get(metric, ""))
        if r["status"] == "out_of_memory" or r.get("fits_in_memory") == "false":
            if state.get(cell) != "ok":
                state[cell] = "oom"
            continue
        state[cell] = "ok"
        value[cell] = best_of(value.get(cell), v, metric)
    grid = [[value.get((vx, vy), math.nan) for vx in xs] for vy in ys]
    image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    plt.colorbar(image, ax=ax, label=LABELS.get(metric, metric))
    ax.set_xticks(range(len(xs)), xs)
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    for j, vy in enumerate(ys):
        for i, vx in enumerate(xs):
            s = state.get((vx, vy))
            if s == "oom":
                ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, fill=False, hatch="xx",
                                           edgecolor="red", linewidth=0))
                ax.text(i, j, "OOM", ha="center", va="center", color="red", fontsize=8)
            elif s == "skipped" or s is None:
                ax.add_patch(plt.Rectangle((i - 0.5, j - 0.5), 1, 1, color="0.85"))
                ax.text(i, j, "-", ha="center", va="center", color="0.4", fontsize=8)
            else:
                v = value[(vx, vy)]
                ax.text(i, j, f"{v:.3g}", ha="center", va="center", color="white", fontsize=7)


def lines(rows, x, metric, ax):
    xs = sort_values({r[x] for r in rows})
    numeric = all(number(v) is not None for v in xs)
    ok_x, ok_y, oom_x = [], [], []
    for vx in xs:
        best = None
        oom = False
        for r in rows:
            if r[x] != vx or r["status"] in ("skipped", "failed"):
                continue
            if r["status"] == "out_of_memory" or r.get("fits_in_memory") == "false":
                oom = True
                continue
            best = best_of(best, number(r.get(metric, "")), metric)
        position = float(vx) if numeric else xs.index(vx)
        if best is not None:
            ok_x.append(position)
            ok_y.append(best)
        elif oom:
            oom_x.append(position)
    ax.plot(ok_x, ok_y, marker="o")
    if oom_x:
        low = min(ok_y) if ok_y else 0
        ax.scatter(oom_x, [low] * len(oom_x), marker="x", color="red", label="out of memory")
        ax.legend()
    if numeric and ok_x and min(ok_x) > 0 and max(ok_x) / min(ok_x) >= 8:
        ax.set_xscale("log", base=2)
    if not numeric:
        ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(x)
    ax.set_ylabel(LABELS.get(metric, metric))
    ax.grid(True, alpha=0.3)


# The step's parts as the sweep CSV has them, with labels and colours.
PARTS = [
    ("compute_s", "compute", "#1f77b4"),
    ("exposed_all_gather_s", "exposed all-gather", "#2ca02c"),
    ("exposed_reduce_scatter_s", "exposed reduce-scatter", "#d62728"),
    ("exposed_all_reduce_s", "exposed all-reduce", "#ff7f0e"),
    ("exposed_tp_s", "exposed TP", "#9467bd"),
    ("exposed_cp_s", "exposed CP", "#8c564b"),
    ("exposed_pcie_s", "exposed PCIe", "#7f7f7f"),
    ("pipeline_bubble_s", "pipeline bubble", "#bcbd22"),
    ("sync_wait_s", "sync wait", "#17becf"),
    ("launch_bound_s", "launch-bound", "#e377c2"),
    ("idle_s", "idle", "#c7c7c7"),
]


def breakdown(rows, keys, ax):
    """One stacked bar per simulated point (grid order): where its step went,
    in seconds; points not simulated are left out, out-of-memory ones
    labelled."""
    simulated = [r for r in rows if r["status"] in ("ok", "out_of_memory")]
    if not simulated:
        fail("--breakdown: expected simulated points, found none")
    labels = []
    for r in simulated:
        # One swept key: its values on the axis, its name below.
        label = r[keys[0]] if len(keys) == 1 else "\n".join(f"{short(k)}={r[k]}" for k in keys)
        labels.append(label + ("\n(OOM)" if r["status"] == "out_of_memory" else ""))
    if len(keys) == 1:
        ax.set_xlabel(keys[0])
    bottom = [0.0] * len(simulated)
    positions = list(range(len(simulated)))
    for column, label, colour in PARTS:
        values = [number(r.get(column, "")) or 0.0 for r in simulated]
        if not any(values):
            continue
        ax.bar(positions, values, bottom=bottom, color=colour, label=label, width=0.7)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(positions, labels, fontsize=7)
    ax.set_ylabel("seconds per step (mean per rank)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    parser.add_argument("--metric", default="mfu", help="column to plot (default mfu)")
    parser.add_argument("--x", help="swept key on the x axis (default: the first)")
    parser.add_argument("--y", help="swept key on the y axis (default: the second, if any)")
    parser.add_argument("--title", help="figure title (default: the file name)")
    parser.add_argument("--breakdown", action="store_true",
                        help="stacked bars of where each point's step went")
    args = parser.parse_args()

    rows, keys, fields = read_rows(args.csv)
    if args.breakdown:
        missing = [c for c, _, _ in PARTS if c not in fields]
        if missing:
            fail(f"--breakdown: expected the step's breakdown columns, found no {missing[0]}")
        fig, ax = plt.subplots(figsize=(max(8, 0.7 * len(rows) + 3), 5.5))
        breakdown(rows, keys, ax)
        ax.set_title(args.title or os.path.basename(args.csv))
        fig.tight_layout()
        save_figure(fig, args.output)
        return
    if args.metric not in fields:
        fail(f"--metric: expected one of the CSV's columns after 'status', found '{args.metric}'")
    for flag, key in (("--x", args.x), ("--y", args.y)):
        if key is not None and key not in keys:
            fail(f"{flag}: expected a swept key ({', '.join(keys)}), found '{key}'")
    x = args.x or keys[0]
    y = args.y or next((k for k in keys if k != x), None)

    fig, ax = plt.subplots(figsize=(8, 5.5))
    if y is None:
        lines(rows, x, args.metric, ax)
    else:
        heatmap(rows, x, y, args.metric, ax)
    ax.set_title(args.title or os.path.basename(args.csv))
    fig.tight_layout()
    save_figure(fig, args.output)


if __name__ == "__main__":
    main()
