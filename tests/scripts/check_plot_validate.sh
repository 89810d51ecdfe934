#!/usr/bin/env bash
# ctest: `validate RUNS --csv` writes one row per run (the training set's 12,
# the first as validate prints it) and scripts/plot_validate.py draws them
# (a PNG of 1560 x 780 pixels), read back from the figure (--data): each run
# at its measured and predicted tokens/s, its error bar as long as the CSV's
# error, on an axis centred on zero that holds the +-5% band; a CSV that is
# not validate's is refused, writing no image. --against gpus draws the same
# CSV as error against GPU count: each run at its GPU count and its
# cross-validated error (or its error where it has none), one series per
# stack (torchtitan and fms_fsdp), a line for each stack with runs at 3 or
# more GPU counts (torchtitan; fms_fsdp has 2) whose slope is the
# least-squares fit of error against log2(GPUs) computed here from the CSV,
# the +-5% band, the zero line and a y axis symmetric about zero, ticks at
# the powers of two labelled as counts; a CSV without the stack and gpus
# columns is refused for it, and still drawn by the default view.
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

"$python" "$repo/scripts/plot_validate.py" "$out/runs.csv" --against gpus -o "$out/g.png" \
  --data "$out/g.data" 2> "$out/err" || { cat "$out/err"; exit 1; }
expect_png_size "$out/g.png" 1560 780
expect_drawn "$out/g.data" \
  "sorted((r['id'], r['stack'], r['gpus']) for r in d['runs'])
   == sorted((r['id'], r['stack'], float(r['gpus'])) for r in rows(args[0]))
   and len(d['runs']) == 12 and all(
    close(p['error_pct'], 100 * float(r['cv_error'] or r['error']))
    and p['cross_validated'] == (r['cv_error'] != '')
    for p in d['runs'] for r in rows(args[0]) if r['id'] == p['id'])" \
  "each run at its GPU count and its cross-validated error" "$out/runs.csv"
expect_drawn "$out/g.data" \
  "[(s['stack'], s['runs']) for s in d['stacks']] == [('torchtitan', 8), ('fms_fsdp', 4)]
   and d['stacks'][0]['label'] == 'torchtitan: 8 runs'
   and d['stacks'][1]['label'].startswith('fms_fsdp: 4 runs')
   and 'cross-validated' in d['ylabel']" \
  "one series per stack, named with its runs"
expect_drawn "$out/g.data" \
  "all((s['line'] is None) == (s['slope_pct_per_doubling'] is None)
       == (len({r['gpus'] for r in rows(args[0]) if r['stack'] == s['stack']}) < 3)
       for s in d['stacks'])
   and [s['stack'] for s in d['stacks'] if s['line']] == ['torchtitan']
   and all(close(s['slope_pct_per_doubling'], statistics.linear_regression(
             [math.log2(int(r['gpus'])) for r in rows(args[0]) if r['stack'] == s['stack']],
             [100 * float(r['cv_error'] or r['error'])
              for r in rows(args[0]) if r['stack'] == s['stack']]).slope)
           and [x for x, _ in s['line']]
               == [min(float(r['gpus']) for r in rows(args[0]) if r['stack'] == s['stack']),
                   max(float(r['gpus']) for r in rows(args[0]) if r['stack'] == s['stack'])]
           and s['line_label'] == s['stack'] + ': %+.1f%% per doubling'
                                  % s['slope_pct_per_doubling']
           for s in d['stacks'] if s['line'])" \
  "each stack's least-squares line over its GPU range, its slope per doubling" "$out/runs.csv"
expect_drawn "$out/g.data" \
  "d['band_pct'] == [-5, 5] and d['zero_line'] == 0
   and close(-d['ylim'][0], d['ylim'][1]) and d['ylim'][1] > 5
   and d['ylim'][1] > max(abs(r['error_pct']) for r in d['runs'])
   and d['xticks'] == [8, 16, 32, 64, 128, 256]
   and d['xticklabels'] == ['8', '16', '32', '64', '128', '256']
   and d['xlim'][0] < 8 and d['xlim'][1] > 256" \
  "the +-5% band, the zero line, a y axis symmetric about zero, ticks at powers of two"
cut -d, -f1,2,5- "$out/runs.csv" > "$out/nostack.csv"
expect_refused "$repo/scripts/plot_validate.py" "$out/nostack.csv" \
  "nostack.csv: --against gpus needs the stack and gpus columns.*found no stack, gpus column" \
  --against gpus
"$python" "$repo/scripts/plot_validate.py" "$out/nostack.csv" -o "$out/n.png" 2> "$out/err" ||
  { cat "$out/err"; exit 1; }
echo ok
