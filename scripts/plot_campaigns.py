#!/usr/bin/python3
"""Plot `clustersim campaign --json` results against job size, per policy.

    /usr/bin/python3 scripts/plot_campaigns.py RESULT.json ... -o FILE.png [--title TEXT]
        [--data FILE.json]

Each RESULT.json is one campaign (its job_gpus, policy, ETTR with its 95%
interval, and `breakdown`, where the wall clock went). The left panel draws
ETTR against the job's GPUs, one line per recovery policy, with the
intervals as error bars and each point labelled with its ETTR; the right
panel stacks each campaign's breakdown (productive, lost work, restart, ...)
as a share of the wall clock, one bar per (size, policy). Both axes start
at 0 and show 0 to 100%. Of files of the same size and policy the last one wins (named on
stderr). --data FILE.json writes what was drawn, read back from the figure:
each point's ETTR and interval, each bar's shares, the axis limits.
Progress and the files written go to stderr.
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3).
Writes the image atomically (temporary file, then rename).

A sweep of job sizes under the FT-HSDP paper's failures (README, "Failures
and campaigns"):

    for n in 2048 4096 8192 12288 16384; do for p in ft_hsdp checkpoint_restart; do
      build/bin/clustersim campaign scenarios/ft_hsdp_98k.yaml --set cluster.nodes=$n \\
        --set failures.preset=ft_hsdp_100k --set workload.parallelism.shard_group_size=8192 \\
        --set recovery.policy=$p --json out/$n.$p.json > /dev/null
    done; done
    /usr/bin/python3 scripts/plot_campaigns.py out/*.json -o ettr_by_size.png
"""

import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import Script, figure_pixels, save_figure, write_drawn  # noqa: E402

SCRIPT = Script("plot_campaigns.py")
DPI = 120

# The breakdown's keys in the order they are stacked, with their labels.
ACCOUNTS = [
    ("productive_s", "productive"),
    ("degraded_s", "degraded"),
    ("lost_work_s", "lost work"),
    ("detection_s", "detection"),
    ("restart_s", "restart"),
    ("ft_stall_s", "ft stall"),
    ("ft_rejoin_s", "ft rejoin"),
    ("checkpoint_saves_s", "checkpoint saves"),
    ("spares_wait_s", "waiting for spares"),
]
SHORT_POLICY = {"checkpoint_restart": "ckpt", "ft_hsdp": "FT"}


def load(paths):
    """{(gpus, policy): result} from the files, with a clear error for a bad one."""
    runs = {}
    origin = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                r = json.load(f)
            key = (int(r["job_gpus"]), str(r["policy"]))
            for field in ("ettr_mean", "ettr_ci95_low", "ettr_ci95_high"):
                float(r[field])
            if not isinstance(r["breakdown"], dict):
                raise TypeError("breakdown is not an object")
        except (OSError, ValueError, KeyError, TypeError) as e:
            SCRIPT.fail(f"{path}: expected a `clustersim campaign --json` result (job_gpus, "
                        f"policy, ettr_mean, ettr_ci95_low/high, breakdown): {e!r}")
        if key in runs:
            SCRIPT.say(f"{path}: {key[0]:,} GPUs, {key[1]} again: it replaces {origin[key]}")
        runs[key] = r
        origin[key] = path
    if not runs:
        SCRIPT.fail("expected at least one result file")
    return runs


def gpus_text(g):
    """16384 -> 16k, 1536 -> 1.5k, 512 -> 512."""
    return f"{g / 1024:g}k" if g >= 1024 and g % 128 == 0 else f"{g:,}"


def plot(runs, out, title, data):
    policies = sorted({p for _, p in runs})
    sizes = sorted({g for g, _ in runs})
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), width_ratios=[1, 1.4])
    lines = {}
    for policy in policies:
        xs = [g for g in sizes if (g, policy) in runs]
        ys = [100 * runs[(g, policy)]["ettr_mean"] for g in xs]
        low = [y - 100 * runs[(g, policy)]["ettr_ci95_low"] for g, y in zip(xs, ys)]
        high = [100 * runs[(g, policy)]["ettr_ci95_high"] - y for g, y in zip(xs, ys)]
        bars = left.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=policy)
        lines[policy] = bars
        for g, y in zip(xs, ys):
            # Below the point where another policy's is above it (or level
            # with one named after it), so that the labels of close points do not
            # overlap; above near the axis, where there is no room below.
            below = y > 8 and any((100 * r["ettr_mean"], q) > (y, policy)
                                  for (h, q), r in runs.items() if h == g and q != policy)
            left.annotate(f"{y:.1f}", (g, y), xytext=(0, -7 if below else 6),
                          textcoords="offset points", ha="center",
                          va="top" if below else "bottom", fontsize=7,
                          color=bars[0].get_color())
    if len(sizes) > 1 and sizes[0] > 0:
        left.set_xscale("log", base=2)
        left.margins(x=0.08)
    left.set_xticks(sizes)
    left.set_xticklabels([gpus_text(g) for g in sizes])
    left.minorticks_off()
    left.set_xlabel("job GPUs")
    left.set_ylabel("ETTR (%), with its 95% interval")
    left.set_ylim(0, 105)
    left.set_yticks(range(0, 101, 20))
    left.grid(True, alpha=0.3)
    left.legend(loc="lower left", fontsize=8)

    bars = [(g, p) for g in sizes for p in policies if (g, p) in runs]
    bottoms = [0.0] * len(bars)
    colors = plt.get_cmap("tab10")
    stacked = {}
    for i, (key, label) in enumerate(ACCOUNTS):
        shares = []
        for g, p in bars:
            b = runs[(g, p)]["breakdown"]
            wall = sum(float(v) for v in b.values()) or 1.0
            shares.append(100 * float(b.get(key, 0.0)) / wall)
        if not any(shares):
            continue
        stacked[key] = right.bar(range(len(bars)), shares, bottom=bottoms, label=label,
                                 color=colors(i))
        bottoms = [b + s for b, s in zip(bottoms, shares)]
    right.set_xticks(range(len(bars)))
    right.set_xticklabels([f"{gpus_text(g)}\n{SHORT_POLICY.get(p, p)}" for g, p in bars],
                          fontsize=8)
    right.set_ylabel("share of the wall clock (%)")
    right.set_ylim(0, 100)
    # Outside the bars: inside, the legend hides the first ones.
    right.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(title)
    fig.tight_layout()

    save_figure(fig, out, dpi=DPI)
    SCRIPT.say(f"wrote {out}")
    if data:
        record = {"figure_px": figure_pixels(fig, DPI), "ettr_ylim": list(left.get_ylim()),
                  "share_ylim": list(right.get_ylim()), "title": title, "ettr": [], "bars": []}
        for policy, container in lines.items():
            line, _, (segments, *_) = container
            for x, y, seg in zip(line.get_xdata(), line.get_ydata(), segments.get_segments()):
                record["ettr"].append({"policy": policy, "gpus": int(x), "ettr_pct": float(y),
                                       "interval_pct": [float(seg[0][1]), float(seg[1][1])]})
        for i, (g, p) in enumerate(bars):
            shares = {k: float(c[i].get_height()) for k, c in stacked.items()}
            record["bars"].append({"gpus": g, "policy": p, "shares_pct": shares,
                                   "total_pct": sum(shares.values())})
        write_drawn(data, record)
        SCRIPT.say(f"wrote {data}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="clustersim campaign --json files")
    parser.add_argument("-o", "--output", required=True, help="image to write (.png, .svg, ...)")
    parser.add_argument("--title", default="ETTR and where the wall clock went, by job size")
    parser.add_argument("--data", help="write what was drawn to this JSON file")
    args = parser.parse_args()
    SCRIPT.check_output(args.output)
    if args.data:
        SCRIPT.check_output(args.data, "--data")
    runs = load(args.results)
    SCRIPT.say(f"{len(runs)} campaigns: {len({g for g, _ in runs})} job sizes x "
               f"{len({p for _, p in runs})} policies from {len(args.results)} files")
    plot(runs, args.output, args.title, args.data)


if __name__ == "__main__":
    main()
