#!/usr/bin/env bash
# ctest: scripts/plot_timeline.py draws the trace of `clustersim run --trace`
# (a PNG of 1440 x 120 (1.4 + 0.32 rows) pixels: rank 0 of the 8-GPU
# Llama-3-8B step has 3 rows, host, compute and comm) and rejects a file that
# is not a trace, writing no image.
# Usage: check_plot_timeline.sh CLUSTERSIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
clustersim=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
source "$here/plot_checks.sh"
"$clustersim" run "$repo/scenarios/llama3_8b_fsdp_8xh100.yaml" --trace "$out/t.json" --no-wall-time --quiet > /dev/null
"$python" "$repo/scripts/plot_timeline.py" "$out/t.json" -o "$out/t.png" --ranks 0 --end 500
expect_png_size "$out/t.png" 1440 283
echo '{"traceEvents": 3}' > "$out/bad.json"
expect_refused "$repo/scripts/plot_timeline.py" "$out/bad.json" "expected a clustersim Chrome trace"
echo ok
