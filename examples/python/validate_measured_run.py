#!/usr/bin/python3
"""Check the model against a measured run: a runs file (one row per run: a
scenario, overrides, measured tokens/s per GPU, peak memory) through
`clustersim validate`, as a DataFrame.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/validate_measured_run.py [RUNS.csv]

Without an argument it writes a runs file of one measured run, torchtitan's
Llama-3-8B on 8 H100 (5,762 tokens/s per GPU, 82.4 GiB; the scenario's
header names the source), and validates that.
"""
import os
import sys
import tempfile

import clustersim

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENARIO = os.path.join(REPO, "scenarios", "llama3_8b_fsdp_8xh100.yaml")


def main(runs: str) -> None:
    cases = clustersim.validate(runs)
    frame = cases.frame()
    print(frame.to_string(index=False))
    print()
    print(cases.report.strip().splitlines()[-1])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.csv")
            with open(path, "w") as f:
                f.write("id,scenario,overrides,tokens_per_s_per_gpu,memory_gib,source\n")
                f.write(f"tt_8b_8xh100,{SCENARIO},,5762,82.4,torchtitan "
                        "benchmarks/llama3_h100_202412_torchtitan.md\n")
            main(path)
