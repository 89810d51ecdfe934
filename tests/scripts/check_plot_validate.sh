#!/usr/bin/env bash
# ctest: `validate RUNS --csv` writes one row per run (the training set's 12,
# the first as validate prints it) and scripts/plot_validate.py draws them
# (a PNG of 1560 x 780 pixels), read back from the figure (--data): each run
# at its measured and predicted tokens/s, its error bar as long as the CSV's
# error, on an axis centred on zero that holds the +-5% band; a CSV that is
# not validate's is refused, writing no image.
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
grep -q '^tt_8b_8xh100,FSDP h100_96gb_500w,torchtitan,8,fitted,5762,5761\.9' "$out/runs.csv" ||
  { head -3 "$out/runs.csv"; exit 1; }
"$python" "$repo/scripts/plot_validate.py" "$out/runs.csv" -o "$out/v.png" --data "$out/v.data" \
  2> "$out/err" || { cat "$out/err"; exit 1; }
expect_png_size "$out/v.png" 1560 780
grep -q "12 runs from 1 file" "$out/err" || { cat "$out/err"; exit 1; }
expect_drawn "$out/v.data" \
  "sorted((r['id'], r['measured'], round(r['predicted'], 6)) for r in d['runs'])
   == sorted((r['id'], float(r['measured_tokens_per_s_per_gpu']),
              round(float(r['predicted_tokens_per_s_per_gpu']), 6)) for r in rows(args[0]))" \
  "each run at its measured and predicted tokens/s" "$out/runs.csv"
expect_drawn "$out/v.data" \
  "len(d['runs']) == 12 and all(
    close(p['error_pct'], 100 * float(r['error']))
    and close(p['cv_error_pct'], 100 * float(r['cv_error']))
    for p in d['runs'] for r in rows(args[0]) if r['id'] == p['id'])" \
  "each error bar and cross at the CSV's error and cv_error" "$out/runs.csv"
expect_drawn "$out/v.data" \
  "close(-d['error_xlim'][0], d['error_xlim'][1]) and d['error_xlim'][1] > 5
   and d['labelled'] == ['fms_34b_fsdp_128xa100', 'fms_7b_hsdp_96xh100',
                         'tt_a100_13b_64_noac', 'tt_a100_8b_64']" \
  "an error axis centred on zero holding +-5%, the runs outside it labelled"
printf 'a,b\n1,2\n' > "$out/bad.csv"
expect_refused "$repo/scripts/plot_validate.py" "$out/bad.csv" "expected a .clustersim validate --csv. file"
echo ok
