#!/usr/bin/python3
"""Predicted against measured tokens/s per GPU from `clustersim validate --csv`.

    /usr/bin/python3 scripts/plot_validate.py RUNS.csv... -o FILE.png [--title TEXT]
        [--against measured|gpus] [--data FILE.json]

Each RUNS.csv is what `clustersim validate RUNS_FILE... --csv RUNS.csv`
writes (one row per training run). The left panel draws every run as a
point, measured on x and predicted on y (log scales, as the runs span two
orders of magnitude), filled when its profile's clock was fitted to it and
open when held out; with --folds, its cross-validated prediction (the run
predicted by a clock fitted without it) is a small cross joined to the
point. The diagonal is a perfect prediction and the grey band +-5%: points
above the band are optimistic; runs outside it are labelled with their id.
Because a log scale makes 10% look small, the right panel draws each run's
error in percent on a linear axis centred on zero, one bar per run sorted
by error, the +-5% band shaded and the cross-validated error a red cross.

--against gpus draws instead each run's error in percent against its job's
GPU count (log2 axis, ticks at the powers of two), one colour and marker
per software stack (the CSV's `stack` column; the legend gives its runs).
A run's point is its cross-validated error where the CSV has one (filled)
and its error otherwise (open); the axis label says which. The grey band is
+-5%, the axis symmetric about zero. For each stack with runs at 3 or more
distinct GPU counts a least-squares line of error against log2(GPUs) is
drawn over the stack's range, its slope in the legend in percentage points
per doubling: the project's accuracy target is within +-1% per doubling,
error that does not drift with job size. Runs outside the band are
labelled. It needs the `stack` and `gpus` columns (validate's CSV has had
them since stacks were fitted) and refuses a CSV without them.

The image is 13 x 6.5 inches at 120 dpi. --data FILE.json writes what was
drawn, read back from the figure: each run's point, error bar and cross,
the axis limits; with --against gpus each run's GPU count and error, each
stack's line and slope, the band and the axes. Progress and the files
written go to stderr.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import csv
import math
from collections import namedtuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
from plot_common import Script, figure_pixels, save_figure, write_drawn  # noqa: E402

COLUMNS = ("id", "label", "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
           "error", "cv_error")
SCALE_COLUMNS = ("stack", "gpus")  # only --against gpus needs them
BAND = 0.05
TREND_MIN_COUNTS = 3  # distinct GPU counts a stack needs for its line
# One colour and marker per stack: the stacks validate knows keep theirs
# from one picture to the next; others follow in the order of their names.
KNOWN_STACKS = ("torchtitan", "fms_fsdp", "megatron_core", "megatron_lm", "nemo")
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
NO_STACK = "no stack"
# stack and gpus are None when the CSV predates them (the default view does not need them).
Run = namedtuple("Run", "id label measured predicted cv stack gpus")
DPI = 120
SCRIPT = Script("plot_validate.py")
fail = SCRIPT.fail


def read_rows(path, by_gpus=False):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            missing = [c for c in COLUMNS if c not in fields]
            if missing:
                fail(f"{path}: expected a `clustersim validate --csv` file, found no "
                     f"{', '.join(missing)} column")
            missing = [c for c in SCALE_COLUMNS if c not in fields]
            if by_gpus and missing:
                fail(f"{path}: --against gpus needs the {' and '.join(SCALE_COLUMNS)} columns "
                     f"of `clustersim validate --csv`, found no {', '.join(missing)} column "
                     f"(an older validate's file: run validate again)")
            has_scale = not missing
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    measured = float(row["measured_tokens_per_s_per_gpu"])
                    predicted = float(row["predicted_tokens_per_s_per_gpu"])
                    cv = float(row["cv_error"]) if row["cv_error"] else None
                except ValueError:
                    fail(f"{path}:{line}: expected numbers of tokens/s per GPU, found "
                         f"'{row['measured_tokens_per_s_per_gpu']}', "
                         f"'{row['predicted_tokens_per_s_per_gpu']}'")
                if measured <= 0 or predicted <= 0:
                    fail(f"{path}:{line}: expected positive tokens/s per GPU")
                stack = gpus = None
                if has_scale:
                    stack = row["stack"]
                    try:
                        gpus = int(row["gpus"])
                    except ValueError:
                        gpus = 0
                    if by_gpus and gpus <= 0:
                        fail(f"{path}:{line}: expected a positive whole number of GPUs, found "
                             f"'{row['gpus']}'")
                rows.append(Run(row["id"], row["label"], measured, predicted, cv, stack, gpus))
            return rows
    except OSError as e:
        fail(f"{path}: cannot read the file: {e.strerror}")


def spread_labels(ax, points, min_gap_px=11):
    """Labels (run_id, x, y) beside their points, moved up where two would
    overlap (the runs of one size cluster on the diagonal)."""
    placed = []
    to_px = ax.transData.transform
    right_edge = ax.transAxes.transform((1, 0))[0]
    for run_id, x, y in sorted(points, key=lambda p: to_px((p[1], p[2]))[1]):
        px, py = to_px((x, y))
        width = 7 * 0.6 * len(run_id) * DPI / 72 + 8  # about, at 7 points
        left = px + width > right_edge  # would run off the axes: put it before the point
        shift = 0.0
        for qx, qy, w in placed:
            if abs(qx - px) < max(w, width) and abs(qy - (py + shift)) < min_gap_px:
                shift = qy + min_gap_px - py
        ax.annotate(run_id, (x, y), fontsize=7, xytext=(-4 if left else 4, 4 + shift),
                    ha="right" if left else "left", textcoords="offset points",
                    arrowprops=None if shift < 1 else dict(
                        arrowstyle="-", color="0.6", linewidth=0.5, shrinkA=0, shrinkB=2))
        placed.append((px, py + shift, width))


def parity(ax, rows):
    values = [v for r in rows for v in (r[2], r[3])]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    xs = [lo, hi]
    ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs],
                    color="0.88", label="within 5%")
    ax.plot(xs, xs, color="0.4", linewidth=0.8)
    points = {}
    for label, filled in (("fitted", True), ("held out", False)):
        pts = [r for r in rows if r[1] == label]
        if pts:
            points[label] = (pts, ax.scatter([r[2] for r in pts], [r[3] for r in pts], s=28,
                                             zorder=3, facecolors="#1f77b4" if filled else "none",
                                             edgecolors="#1f77b4", label=label))
    crossed = False
    for run_id, _, measured, predicted, cv, _, _ in rows:
        if cv is not None:
            cv_predicted = measured * (1 + cv)
            ax.plot([measured, measured], [predicted, cv_predicted], color="#d62728",
                    linewidth=0.6, zorder=2)
            ax.scatter([measured], [cv_predicted], marker="x", s=18, color="#d62728", zorder=3,
                       label=None if crossed else "cross-validated")
            crossed = True
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured tokens/s per GPU")
    ax.set_ylabel("predicted tokens/s per GPU")
    ax.legend(fontsize=8, loc="upper left")
    return points


def errors(ax, rows):
    """Each run's error on a linear axis centred on zero, sorted."""
    order = sorted(rows, key=lambda r: r[3] / r[2] - 1)
    pct = [100 * (r[3] / r[2] - 1) for r in order]
    cv = [None if r[4] is None else 100 * r[4] for r in order]
    ax.axvspan(-100 * BAND, 100 * BAND, color="0.88", zorder=0)
    ax.axvline(0, color="0.4", linewidth=0.8)
    bars = ax.barh(range(len(order)), pct, height=0.6, zorder=2,
                   color=["#1f77b4" if r[1] == "fitted" else "white" for r in order],
                   edgecolor="#1f77b4")
    crosses = [(v, i) for i, v in enumerate(cv) if v is not None]
    if crosses:
        ax.scatter([v for v, _ in crosses], [i for _, i in crosses], marker="x", s=22,
                   color="#d62728", zorder=3)
    reach = max([abs(v) for v in pct] + [abs(v) for v in cv if v is not None] + [100 * BAND])
    ax.set_xlim(-reach * 1.15, reach * 1.15)
    ax.set_yticks(range(len(order)), [r[0] for r in order], fontsize=7)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlabel("prediction error (%): predicted / measured - 1")
    ax.grid(True, axis="x", alpha=0.3)
    return order, bars


def least_squares(points):
    """Slope and intercept of y = a + b x through (x, y) points (at least
    two distinct x)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    return slope, my - slope * mx


def shown_error(run):
    """The error drawn for a run in the GPU view, in percent, and whether it
    is the cross-validated one."""
    if run.cv is not None:
        return 100 * run.cv, True
    return 100 * (run.predicted / run.measured - 1), False


def by_gpus(ax, rows):
    """Each run's (cross-validated) error against its GPU count, one series
    per stack, with a least-squares line per stack over 3+ distinct counts.
    Returns, per stack, (name, its runs, their scatter, the line or None)."""
    ax.axhspan(-100 * BAND, 100 * BAND, color="0.88", zorder=0, label="within ±5%")
    ax.axhline(0, color="0.4", linewidth=0.8, zorder=1)
    present = {r.stack or NO_STACK for r in rows}
    others = sorted(present - set(KNOWN_STACKS), key=lambda n: (n == NO_STACK, n))
    styles = [(n, i) for i, n in enumerate(KNOWN_STACKS + tuple(others)) if n in present]
    kinds = {shown_error(r)[1] for r in rows}
    series = []
    for name, i in styles:
        runs = [r for r in rows if (r.stack or NO_STACK) == name]
        colour, marker = COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)]
        errs = [shown_error(r) for r in runs]
        counts = sorted({r.gpus for r in runs})
        label = f"{name}: {len(runs)} run{'s' if len(runs) > 1 else ''}"
        if len(counts) < TREND_MIN_COUNTS:
            label += (f" at {len(counts)} GPU count{'s' if len(counts) > 1 else ''}, "
                      f"too few for a trend")
        sc = ax.scatter([r.gpus for r in runs], [e for e, _ in errs], s=36, zorder=3,
                        marker=marker, edgecolors=colour, linewidths=1.2,
                        facecolors=[colour if cv else "none" for _, cv in errs], label=label)
        line = None
        if len(counts) >= TREND_MIN_COUNTS:
            slope, intercept = least_squares([(math.log2(r.gpus), e)
                                              for r, (e, _) in zip(runs, errs)])
            ends = [counts[0], counts[-1]]
            line, = ax.plot(ends, [intercept + slope * math.log2(g) for g in ends],
                            color=colour, linewidth=1.2, zorder=2,
                            label=f"{name}: %+.1f%% per doubling" % slope)
        series.append((name, runs, sc, line))
    ax.set_xscale("log", base=2)
    lo = 2 ** math.floor(math.log2(min(r.gpus for r in rows)))
    hi = 2 ** math.ceil(math.log2(max(r.gpus for r in rows)))
    if lo == hi:
        lo, hi = lo / 2, hi * 2
    ticks = [2 ** k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1)]
    step = max(1, math.ceil(len(ticks) / 12))  # at most about 12 labelled ticks
    ticks = ticks[::step]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlim(lo / 2 ** 0.25, hi * 2 ** 0.25)
    reach = max([abs(shown_error(r)[0]) for r in rows] + [100 * BAND])
    ax.set_ylim(-reach * 1.15, reach * 1.15)
    ax.set_xlabel("GPUs in the job (log2 scale)")
    if kinds == {True}:
        ax.set_ylabel("cross-validated error (%): predicted / measured - 1")
    elif kinds == {False}:
        ax.set_ylabel("error (%): predicted / measured - 1")
    else:  # some files were validated with --folds, some not: say which point is which
        ax.set_ylabel("error (%): predicted / measured - 1")
        ax.scatter([], [], s=36, marker="o", color="0.45", label="filled: cross-validated error")
        ax.scatter([], [], s=36, marker="o", facecolors="none", edgecolors="0.45",
                   linewidths=1.2, label="open: error, not cross-validated")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return series


def draw_by_gpus(args, rows, outside):
    fig, ax = plt.subplots(figsize=(13, 6.5))
    series = by_gpus(ax, rows)
    ax.set_title("error against job size, by software stack")
    fig.suptitle(args.title or "clustersim validate: training runs")
    fig.tight_layout()
    spread_labels(ax, [(r.id, r.gpus, shown_error(r)[0]) for r in rows if r.id in outside])
    save_figure(fig, args.output, dpi=DPI)
    SCRIPT.say(f"wrote {args.output}")
    for name, _, _, line in series:
        if line is not None:
            (x0, x1), (y0, y1) = line.get_data()
            SCRIPT.say(f"{name}: %+.2f%% per doubling" % ((y1 - y0) / math.log2(x1 / x0)))
    if not args.data:
        return
    stacks, runs = [], []
    for name, stack_rows, sc, line in series:
        entry = {"stack": name, "runs": len(stack_rows), "label": sc.get_label(),
                 "gpu_counts": sorted({r.gpus for r in stack_rows}),
                 "line": None, "slope_pct_per_doubling": None}
        if line is not None:
            xs, ys = line.get_data()
            entry["line"] = [[float(x), float(y)] for x, y in zip(xs, ys)]
            entry["slope_pct_per_doubling"] = float((ys[1] - ys[0]) / math.log2(xs[1] / xs[0]))
            entry["line_label"] = line.get_label()
        stacks.append(entry)
        filled = sc.get_facecolors()
        for i, (r, (x, y)) in enumerate(zip(stack_rows, sc.get_offsets())):
            runs.append({"id": r.id, "stack": name, "gpus": float(x), "error_pct": float(y),
                         "cross_validated": bool(filled[i][3] > 0)})
    band = ax.patches[0].get_xy()
    write_drawn(args.data, {
        "against": "gpus", "figure_px": figure_pixels(fig, DPI),
        "xlim": list(ax.get_xlim()), "ylim": list(ax.get_ylim()),
        "xticks": [float(t) for t in ax.get_xticks()],
        "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
        "band_pct": [float(min(y for _, y in band)), float(max(y for _, y in band))],
        "zero_line": float(ax.lines[0].get_ydata()[0]), "ylabel": ax.get_ylabel(),
        "labelled": sorted(outside), "stacks": stacks, "runs": runs})
    SCRIPT.say(f"wrote {args.data}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title")
    parser.add_argument("--against", choices=("measured", "gpus"), default="measured",
                        help="measured: predicted against measured (the default); gpus: "
                             "error against GPU count, per stack")
    parser.add_argument("--data", help="write what was drawn to this JSON file")
    args = parser.parse_args()
    SCRIPT.check_output(args.output)
    if args.data:
        SCRIPT.check_output(args.data, "--data")
    rows = [r for path in args.csv for r in read_rows(path, args.against == "gpus")]
    if not rows:
        fail(f"{', '.join(args.csv)}: expected at least one run, found none")
    if args.against == "gpus":  # the error drawn: cross-validated where there is one
        outside = [r.id for r in rows if abs(shown_error(r)[0]) > 100 * BAND]
    else:
        outside = [r[0] for r in rows if abs(r[3] / r[2] - 1) > BAND]
    SCRIPT.say(f"{len(rows)} runs from {len(args.csv)} file{'s' if len(args.csv) > 1 else ''}, "
               f"{len(outside)} outside +-{100 * BAND:.0f}%")
    if args.against == "gpus":
        draw_by_gpus(args, rows, outside)
        return

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 6.5), width_ratios=[1, 0.8])
    points = parity(left, rows)
    order, bars = errors(right, rows)
    left.set_title("predicted against measured")
    right.set_title("error of each run")
    fig.suptitle(args.title or "clustersim validate: training runs")
    fig.tight_layout()
    # Labels last: their overlap is judged in the final layout's pixels.
    spread_labels(left, [(r[0], r[2], r[3]) for r in rows if r[0] in outside])
    save_figure(fig, args.output, dpi=DPI)
    SCRIPT.say(f"wrote {args.output}")
    if args.data:
        drawn = {}
        for label, (pts, sc) in points.items():
            for r, (x, y) in zip(pts, sc.get_offsets()):
                drawn[r[0]] = {"label": label, "measured": float(x), "predicted": float(y)}
        for r, bar in zip(order, bars):
            drawn[r[0]]["error_pct"] = float(bar.get_width())
            drawn[r[0]]["cv_error_pct"] = None if r[4] is None else 100 * r[4]
        write_drawn(args.data, {
            "figure_px": figure_pixels(fig, DPI), "error_xlim": list(right.get_xlim()),
            "parity_lim": list(left.get_xlim()), "labelled": sorted(outside),
            "runs": [dict(id=k, **v) for k, v in drawn.items()]})
        SCRIPT.say(f"wrote {args.data}")


if __name__ == "__main__":
    main()
