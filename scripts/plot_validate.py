#!/usr/bin/python3
"""Predicted against measured tokens/s per GPU from `clustersim validate --csv`.

    /usr/bin/python3 scripts/plot_validate.py RUNS.csv... -o FILE.png [--title TEXT]

Each RUNS.csv is what `clustersim validate RUNS_FILE... --csv RUNS.csv`
writes (one row per training run). Every run is a point, measured on x and
predicted on y (log scales), filled when its profile's clock was fitted to
it and open when held out; with --folds, its cross-validated prediction
(the run predicted by a clock fitted without it) is a small cross joined to
the point. The diagonal is a perfect prediction and the grey band +-5%:
points above the band are optimistic. Runs outside the band are labelled
with their id. The image is 7 x 6.5 inches at 120 dpi.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).
"""

import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import save_figure  # noqa: E402

COLUMNS = ("id", "label", "measured_tokens_per_s_per_gpu", "predicted_tokens_per_s_per_gpu",
           "error", "cv_error")
BAND = 0.05


def fail(message):
    print(f"plot_validate.py: error: {message}", file=sys.stderr)
    sys.exit(1)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title")
    args = parser.parse_args()
    rows = [r for path in args.csv for r in read_rows(path)]
    if not rows:
        fail("expected at least one run, found none")

    fig, ax = plt.subplots(figsize=(7, 6.5))
    values = [v for r in rows for v in (r[2], r[3])]
    lo, hi = min(values) / 1.5, max(values) * 1.5
    xs = [lo, hi]
    ax.fill_between(xs, [x * (1 - BAND) for x in xs], [x * (1 + BAND) for x in xs],
                    color="0.88", label="within 5%")
    ax.plot(xs, xs, color="0.4", linewidth=0.8)
    for label, filled in (("fitted", True), ("held out", False)):
        pts = [r for r in rows if r[1] == label]
        if not pts:
            continue
        ax.scatter([r[2] for r in pts], [r[3] for r in pts], s=28, zorder=3,
                   facecolors="#1f77b4" if filled else "none", edgecolors="#1f77b4",
                   label=label)
    crossed = False
    for run_id, _, measured, predicted, cv in rows:
        if cv is not None:
            cv_predicted = measured * (1 + cv)
            ax.plot([measured, measured], [predicted, cv_predicted], color="#d62728",
                    linewidth=0.6, zorder=2)
            ax.scatter([measured], [cv_predicted], marker="x", s=18, color="#d62728", zorder=3,
                       label=None if crossed else "cross-validated")
            crossed = True
        if abs(predicted / measured - 1) > BAND:
            ax.annotate(run_id, (measured, predicted), fontsize=7, xytext=(4, 4),
                        textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured tokens/s per GPU")
    ax.set_ylabel("predicted tokens/s per GPU")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(args.title or "clustersim validate: training runs")
    fig.tight_layout()
    save_figure(fig, args.output)


if __name__ == "__main__":
    main()
