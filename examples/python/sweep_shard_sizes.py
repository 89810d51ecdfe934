#!/usr/bin/python3
"""Sweep the shard-group size of Llama-3-70B HSDP on 256 H100 from Python:
the points as a pandas DataFrame, and tokens/s per GPU against the shard size
as a plot: every size at its own value, those that do not fit in memory
hollow and labelled OOM, on a y axis from zero (the sizes that fit are 0.2%
apart, and look it).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/sweep_shard_sizes.py [OUT.png]
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import clustersim  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIO = os.path.join(REPO, "scenarios", "llama3_70b_hsdp_256xh100.yaml")


def main(out: str) -> None:
    # Every shard size that divides the 256 GPUs; replica groups follow.
    points = clustersim.sweep(SCENARIO, {"workload.parallelism.shard_group_size": "divisors"})
    frame = points.frame()
    ok = frame[frame["status"] == "ok"]
    print(ok[["workload.parallelism.shard_group_size", "tokens_per_s_per_gpu",
              "peak_memory_bytes", "exposed_all_reduce_s"]].to_string(index=False))
    skipped = frame[frame["status"] != "ok"]
    for _, row in skipped.iterrows():
        why = (f"peak {row['peak_memory_bytes'] / 2**30:.1f} GiB"
               if row["status"] == "out_of_memory" else row["reason"])
        print(f"shard {row['workload.parallelism.shard_group_size']}: {row['status']} ({why})")

    # Out-of-memory points are simulated too: drawn hollow at their own
    # value, so that a reader sees what fitting would give and that it does
    # not fit. The y axis starts at zero: these points are 0.2% apart, and
    # an axis around the data would make that look like a cliff.
    key, metric = "workload.parallelism.shard_group_size", "tokens_per_s_per_gpu"
    oom = frame[frame["status"] == "out_of_memory"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(ok[key], ok[metric], "o-", label="fits in memory")
    ax.scatter(oom[key], oom[metric], facecolors="none", edgecolors="#d62728",
               label="out of memory (simulated anyway)")
    for _, row in frame[frame["status"].isin(["ok", "out_of_memory"])].iterrows():
        ax.annotate(f"{row[metric]:.0f}" + ("\nOOM" if row["status"] != "ok" else ""),
                    (row[key], row[metric]), xytext=(0, 6), textcoords="offset points",
                    ha="center", fontsize=7, color="#d62728" if row["status"] != "ok" else "k")
    ax.set_xscale("log", base=2)
    ax.set_xticks(frame[key], [str(v) for v in frame[key]])
    ax.minorticks_off()
    ax.set_ylim(0, 1.2 * frame[metric].max())
    ax.set_xlabel("shard group size (GPUs)")
    ax.set_ylabel("tokens/s per GPU")
    ax.set_title("Llama-3-70B HSDP on 256 H100: tokens/s per GPU by shard group size",
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, out)  # atomically
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "shard_sizes.png")
