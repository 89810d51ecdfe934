#!/usr/bin/python3
"""Predicted against measured tokens/s per GPU from `clustersim validate --csv`.

    /usr/bin/python3 scripts/plot_validate.py RUNS.csv... -o FILE.png [--title TEXT]
        [--data FILE.json]

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
The image is 13 x 6.5 inches at 120 dpi. --data FILE.json writes what was
drawn, read back from the figure: each run's point, error bar and cross,
the axis limits. Progress and the files written go to stderr.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import Script, figure_pixels, save_figure, write_drawn  # noqa: E402

COLUMNS = ("id", "label", "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
           "error", "cv_error")
BAND = 0.05
DPI = 120
SCRIPT = Script("plot_validate.py")
fail = SCRIPT.fail


def read_rows(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                fail(f"{path}: expected a `clustersim validate --csv` file, found no "
                     f"{', '.join(missing)} column")
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
                rows.append((row["id"], row["label"], measured, predicted, cv))
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
    for run_id, _, measured, predicted, cv in rows:
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title")
    parser.add_argument("--data", help="write what was drawn to this JSON file")
    args = parser.parse_args()
    SCRIPT.check_output(args.output)
    if args.data:
        SCRIPT.check_output(args.data, "--data")
    rows = [r for path in args.csv for r in read_rows(path)]
    if not rows:
        fail(f"{', '.join(args.csv)}: expected at least one run, found none")
    outside = [r[0] for r in rows if abs(r[3] / r[2] - 1) > BAND]
    SCRIPT.say(f"{len(rows)} runs from {len(args.csv)} file{'s' if len(args.csv) > 1 else ''}, "
               f"{len(outside)} outside +-{100 * BAND:.0f}%")

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
