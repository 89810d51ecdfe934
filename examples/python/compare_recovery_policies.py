#!/usr/bin/python3
"""Checkpoint-restart against fault-tolerant HSDP for one campaign: the
effective training time ratio (ETTR) of each policy and where the wall clock
went, from the same failures (same seed).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compare_recovery_policies.py [SCENARIO]
"""
import os
import sys

import clustersim

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = os.path.join(REPO, "tests", "golden", "campaign_small", "scenario.yaml")


def main(scenario: str) -> None:
    results = {}
    for policy in ("checkpoint_restart", "ft_hsdp"):
        results[policy] = clustersim.campaign(scenario, recovery__policy=policy)
    for policy, r in results.items():
        trials = r.trials.frame()
        print(f"{policy:20s} ETTR mean {r['ettr_mean']:.4f}  "
              f"(trials: min {trials['ettr'].min():.4f}, max {trials['ettr'].max():.4f})")
    ft, cr = results["ft_hsdp"]["ettr_mean"], results["checkpoint_restart"]["ettr_mean"]
    print(f"fault-tolerant HSDP keeps {100 * (ft - cr):.2f} points more of the wall clock training")
    print("\nwall clock per account (s, mean over trials):")
    for policy, r in results.items():
        accounts = {k: v for k, v in r["breakdown"].items() if v}
        print(f"  {policy}: " + ", ".join(f"{k} {v:.0f}" for k, v in accounts.items()))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
