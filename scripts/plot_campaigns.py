#!/usr/bin/python3
"""Plot `clustersim campaign --json` results against job size, per policy.

    /usr/bin/python3 scripts/plot_campaigns.py RESULT.json ... -o FILE.png [--title TEXT]

Each RESULT.json is one campaign (its job_gpus, policy, ETTR with its 95%
interval, and `breakdown`, where the wall clock went). The left panel draws
ETTR against the job's GPUs, one line per recovery policy, with the
intervals as error bars; the right panel stacks each campaign's breakdown
(productive, lost work, restart, ...) as a share of the wall clock, one bar
per (size, policy). Files of the same size and policy: the last one wins.
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
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from plot_common import save_figure  # noqa: E402

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


def load(paths):
    """{(gpus, policy): result} from the files, with a clear error for a bad one."""
    runs = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                r = json.load(f)
            key = (int(r["job_gpus"]), str(r["policy"]))
            for field in ("ettr_mean", "ettr_ci95_low", "ettr_ci95_high", "breakdown"):
                r[field]  # noqa: B018 - presence check
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"plot_campaigns.py: {path}: expected a `clustersim campaign --json` result "
                     f"(job_gpus, policy, ettr_mean, ettr_ci95_low/high, breakdown): {e!r}")
        runs[key] = r
    if not runs:
        sys.exit("plot_campaigns.py: expected at least one result file")
    return runs


def plot(runs, out, title):
    policies = sorted({p for _, p in runs})
    sizes = sorted({g for g, _ in runs})
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), width_ratios=[1, 1.4])
    for policy in policies:
        xs = [g for g in sizes if (g, policy) in runs]
        ys = [100 * runs[(g, policy)]["ettr_mean"] for g in xs]
        low = [y - 100 * runs[(g, policy)]["ettr_ci95_low"] for g, y in zip(xs, ys)]
        high = [100 * runs[(g, policy)]["ettr_ci95_high"] - y for g, y in zip(xs, ys)]
        left.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=policy)
    left.set_xscale("log", base=2)
    left.set_xticks(sizes)
    left.set_xticklabels([f"{g // 1024}k" for g in sizes])
    left.set_xlabel("job GPUs")
    left.set_ylabel("ETTR (%)")
    left.set_ylim(0, 100)
    left.grid(True, alpha=0.3)
    left.legend()

    bars = [(g, p) for g in sizes for p in policies if (g, p) in runs]
    bottoms = [0.0] * len(bars)
    colors = plt.get_cmap("tab10")
    for i, (key, label) in enumerate(ACCOUNTS):
        shares = []
        for g, p in bars:
            b = runs[(g, p)]["breakdown"]
            wall = sum(v for v in b.values()) or 1.0
            shares.append(100 * b.get(key, 0.0) / wall)
        if not any(shares):
            continue
        right.bar(range(len(bars)), shares, bottom=bottoms, label=label, color=colors(i))
        bottoms = [b + s for b, s in zip(bottoms, shares)]
    right.set_xticks(range(len(bars)))
    short = {"checkpoint_restart": "ckpt", "ft_hsdp": "FT"}
    right.set_xticklabels([f"{g // 1024}k\n{short.get(p, p)}" for g, p in bars], fontsize=8)
    right.set_ylabel("share of the wall clock (%)")
    right.set_ylim(0, 100)
    right.legend(fontsize=7, loc="lower left")
    fig.suptitle(title)
    fig.tight_layout()

    save_figure(fig, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="clustersim campaign --json files")
    parser.add_argument("-o", "--output", required=True, help="image to write (.png, .svg, ...)")
    parser.add_argument("--title", default="ETTR and where the wall clock went, by job size")
    args = parser.parse_args()
    plot(load(args.results), args.output, args.title)


if __name__ == "__main__":
    main()
