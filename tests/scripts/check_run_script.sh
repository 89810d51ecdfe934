#!/usr/bin/env bash
# ctest: scripts/run (the README's first command) runs the default scenario,
# scenarios/llama3_8b_fsdp_8xh100.yaml, and prints what `clustersim run`
# prints for it; given a scenario and options, it passes them on. Run
# against this build without rebuilding (CLUSTERSIM_NO_BUILD=1).
# Usage: check_run_script.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export CLUSTERSIM_BUILD_DIR=$build CLUSTERSIM_NO_BUILD=1
"$repo/scripts/run" --no-wall-time > "$out/default"
"$build/bin/clustersim" run "$repo/scenarios/llama3_8b_fsdp_8xh100.yaml" --no-wall-time > "$out/direct"
cmp -s "$out/default" "$out/direct" || { echo "scripts/run differs from clustersim run"; exit 1; }
grep -q '^tokens/s per GPU' "$out/default" || { echo "no step summary"; exit 1; }
# A relative scenario from another directory, with an override.
(cd "$repo/scenarios" && "$repo/scripts/run" llama3_8b_fsdp_8xh100.yaml --no-wall-time \
  --set workload.seq_len=4096) > "$out/given"
grep -q '^batch  *seq_len 4096' "$out/given" || { echo "the override did not reach the run"; exit 1; }
echo ok
