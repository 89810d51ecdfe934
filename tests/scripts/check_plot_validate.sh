#!/usr/bin/env bash
# ctest: `validate RUNS --csv` writes one row per run (the training set's 12,
# the first as validate prints it) and scripts/plot_validate.py draws them
# (a PNG of 840 x 780 pixels); a CSV that is not validate's is refused,
# writing no image.
# Usage: check_plot_validate.sh CLUSTERSIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
clustersim=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
source "$here/plot_checks.sh"
"$clustersim" validate "$repo/scenarios/measurements/training/published_runs.csv" --folds 12 \
  --csv "$out/runs.csv" --quiet > "$out/text"
[[ $(wc -l < "$out/runs.csv") == 13 ]] || { echo "expected 12 rows and a header"; exit 1; }
grep -q '^tt_8b_8xh100,FSDP h100_96gb_500w,fitted,5762,5751\.8' "$out/runs.csv" ||
  { head -3 "$out/runs.csv"; exit 1; }
"$python" "$repo/scripts/plot_validate.py" "$out/runs.csv" -o "$out/v.png"
expect_png_size "$out/v.png" 840 780
printf 'a,b\n1,2\n' > "$out/bad.csv"
expect_refused "$repo/scripts/plot_validate.py" "$out/bad.csv" "expected a .clustersim validate --csv. file"
echo ok
