#!/usr/bin/env bash
# ctest: scripts/plot_sweep.py draws what the sweep CSV says, read back from
# the figure (--data): out-of-memory points at their own values (the TP
# sweep of the 64-GPU step, where only TP 8 fits), on a y axis from zero;
# heatmap cells at their values on a colour scale from zero, OOM and skipped
# cells marked; a 72-point breakdown within 1,400 pixels' width, the 30 best
# drawn with the rest summed up; each bar as tall as the point's step;
# --parts's three panels (tokens/s, step time, tokens per joule at the GPU's
# and the system's power) in the CSV's order, a part without a power figure
# noted rather than drawn at zero, a CSV from before the energy columns
# drawn with a note. A sweep with nothing to draw (every point skipped), a
# CSV without the breakdown columns, --parts without tokens_per_s_per_gpu and
# a file that is not a sweep are refused, exit 1, no image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
source "$here/plot_checks.sh"
plot() { "$python" "$repo/scripts/plot_sweep.py" "$@" 2> "$out/err" || { cat "$out/err"; exit 1; }; }
tp=$here/sweep_tp_oom.csv

# One key: TP 1, 2 and 4 are out of memory at MFU 0.414, 0.389, 0.354 and
# drawn there, not at the 0.300 of TP 8, the one that fits.
plot "$tp" -o "$out/line.png" --data "$out/line.json"
expect_png_size "$out/line.png" 960 660
expect_drawn "$out/line.json" \
  "[(p['x'], p['status']) for p in d['points']] == [('1','oom'), ('2','oom'), ('4','oom'), ('8','ok')]" \
  "TP 1, 2, 4 marked out of memory and TP 8 fitting"
expect_drawn "$out/line.json" \
  "all(close(p['drawn_y'], float(r['mfu'])) for p, r in zip(d['points'], rows(args[0])))" \
  "every point at its CSV MFU" "$tp"
expect_drawn "$out/line.json" "close(d['points'][0]['drawn_y'], 0.413828116808904)" \
  "TP 1 at MFU 0.414"
expect_drawn "$out/line.json" "d['ylim'][0] == 0 and d['ylim'][1] > 0.41" "a y axis from 0 above 0.414"
expect_drawn "$out/line.json" "'MFU by tp' in d['title']" "a title naming what was swept"
grep -q "mfu against workload.parallelism.tp: 4 points" "$out/err" || { cat "$out/err"; exit 1; }
grep -q "wrote $out/line.png" "$out/err" || { cat "$out/err"; exit 1; }

# Two keys: a heatmap; the colour scale from 0, each cell at its value.
plot "$here/sweep_fixture.csv" -o "$out/heat.png" --data "$out/heat.json"
expect_drawn "$out/heat.json" "d['colour_limits'][0] == 0 and close(d['colour_limits'][1], 0.41)" \
  "a colour scale from 0 to the best MFU"
expect_drawn "$out/heat.json" \
  "[(c['x'], c['y'], c['status'], c['text']) for c in d['cells'] if c['status'] != 'ok']
   == [('8', '1', 'oom', 'OOM\n0.38'), ('32', '2', 'skipped', 'skipped')]" \
  "the out-of-memory cell labelled with its MFU and the skipped cell as such"
expect_drawn "$out/heat.json" \
  "{(c['x'], c['y']): c['colour_value'] for c in d['cells'] if c['status'] == 'ok'}
   == {('16', '1'): 0.40, ('32', '1'): 0.41, ('8', '2'): 0.39, ('16', '2'): 0.41}" \
  "each fitting cell coloured at its MFU"
plot "$here/sweep_fixture.csv" -o "$out/step.png" --x workload.parallelism.shard_group_size \
  --metric step_time_s --data "$out/step.json"
expect_drawn "$out/step.json" "d['best'] == ['16', '2']" "the shortest step outlined as the best"

# The breakdown of the TP sweep: upright bars, each as tall as its step.
plot "$tp" -o "$out/bars.png" --breakdown --data "$out/bars.json"
expect_drawn "$out/bars.json" \
  "d['orientation'] == 'vertical' and [b['status'] for b in d['bars']] == ['oom', 'oom', 'oom', 'ok']" \
  "four upright bars, three out of memory"
expect_drawn "$out/bars.json" \
  "all(close(b['total_s'], float(r['step_time_s']), 1e-9) for b, r in zip(d['bars'], rows(args[0])))" \
  "each bar as tall as its step time" "$tp"
expect_drawn "$out/bars.json" "d['value_axis'][0] == 0" "bars from zero"

# 72 points: horizontal bars, the 30 best (fitting first), readable.
plot "$here/sweep_72_points.csv" -o "$out/b72.png" --breakdown --data "$out/b72.json"
expect_drawn "$out/b72.json" "d['figure_px'][0] <= 1400 and d['figure_px'][1] <= 1400" \
  "72 points within 1,400 x 1,400 pixels"
expect_drawn "$out/b72.json" "d['drawn'] == 30 and d['tick_fontsize'] >= 7" \
  "the 30 best points, labels of 7 points or more"
expect_drawn "$out/b72.json" \
  "[b['status'] for b in d['bars']] == ['ok'] * 26 + ['oom'] * 4" \
  "the 26 fitting points before the out-of-memory ones"
expect_drawn "$out/b72.json" "'42 more points' in d['note'] and '--top 0' in d['note']" \
  "a note on the 42 points not drawn"
expect_drawn "$out/b72.json" \
  "close(d['bars'][0]['total_s'], float(max((r for r in rows(args[0]) if r['status'] == 'ok'),
                                            key=lambda r: float(r['mfu']))['step_time_s']), 1e-9)" \
  "the first bar as long as the best fitting point's step" "$here/sweep_72_points.csv"
plot "$here/sweep_72_points.csv" -o "$out/all72.png" --breakdown --top 0 --data "$out/all72.json"
expect_drawn "$out/all72.json" "d['drawn'] == 72 and d['figure_px'][0] <= 1400" \
  "all 72 points with --top 0, no wider"

# --parts: five parts in the CSV's order (h100 on top), each bar at its
# CSV value, two bars of tokens per joule per part.
parts=$here/sweep_parts.csv
plot "$parts" -o "$out/parts.png" --parts --data "$out/parts.json"
expect_drawn "$out/parts.json" \
  "[(p['label'], p['y']) for p in d['parts']] == [('h100', 0), ('h200', 1), ('b200', 2), ('gb200', 3), ('gb300', 4)]
   and d['ylim'][0] > d['ylim'][1]" \
  "one bar per part in the CSV's order, h100 first, on top"
expect_drawn "$out/parts.json" \
  "close(d['parts'][4]['tokens_per_s_per_gpu'], 3597.592516910247) and d['parts'][4]['texts']['tokens_per_s_per_gpu'] == '3,598'" \
  "gb300 at 3,597.59 tokens/s per GPU"
expect_drawn "$out/parts.json" \
  "close(d['parts'][2]['tokens_per_joule_system'], 1.8328) and close(d['parts'][2]['tokens_per_joule_gpu'], 3.276)
   and d['parts'][2]['texts']['tokens_per_joule_system'] == '1.83'" \
  "b200 at 1.8328 tokens per joule at the system's power, 3.276 at the GPU's"
expect_drawn "$out/parts.json" \
  "all(close(p[c], float(r[c]), 1e-9) for p, r in zip(d['parts'], rows(args[0]))
       for c in ('tokens_per_s_per_gpu', 'step_time_s', 'tokens_per_joule_gpu', 'tokens_per_joule_system'))" \
  "every bar at its CSV value" "$parts"
expect_drawn "$out/parts.json" \
  "all(lo == 0 for lo, hi in d['value_axes'].values()) and close(d['value_axes']['step_time_s'][1], 10.153691214 * 1.3)" \
  "bars from zero, room for the longest step's label"
expect_drawn "$out/parts.json" "d['title'].startswith('Which part') and 'sweep_parts.csv' in d['title'] and d['note'] == ''" \
  "a title naming the file and no note"
grep -q "parts: 5 points" "$out/err" || { cat "$out/err"; exit 1; }

# --parts marks what it cannot draw: h200 out of memory (hatched, 'does not
# fit'), b200 with no power figure, gb200 with none at the system's power
# (no bar, a note), a part skipped with its reason below the plot.
"$python" - "$parts" "$out/mixed.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
for r in rows:
    if r["hardware"] == "h200":
        r.update(status="out_of_memory", fits_in_memory="false", peak_memory_bytes="95000000000")
    if r["hardware"] in ("b200", "gb200"):
        r["tokens_per_joule_system"] = ""
    if r["hardware"] == "b200":
        r["tokens_per_joule_gpu"] = ""
rows.append({"hardware": "mi300x", "status": "skipped", "reason": "hardware: no profile mi300x"})
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), restval="")
    w.writeheader()
    w.writerows(rows)
PY
plot "$out/mixed.csv" -o "$out/mixed.png" --parts --data "$out/mixed.json"
expect_drawn "$out/mixed.json" \
  "[(p['status'], p['tick']) for p in d['parts'][:2]] == [('ok', 'h100'), ('oom', 'h200 (does not fit, 88 GiB)')]
   and close(d['parts'][1]['tokens_per_s_per_gpu'], 1675.826411911302)" \
  "h200 at its value, marked as not fitting"
expect_drawn "$out/mixed.json" \
  "d['parts'][2]['tokens_per_joule_gpu'] is None and d['parts'][2]['tokens_per_joule_system'] is None
   and d['parts'][3]['tokens_per_joule_system'] is None and close(d['parts'][3]['tokens_per_joule_gpu'], 2.980)
   and d['parts'][3]['notes'] == ['tokens_per_joule_system: no power figure']" \
  "no bar, a note, where a part has no power figure"
expect_drawn "$out/mixed.json" \
  "d['drawn'] == 5 and d['note'] == 'hardware=mi300x: skipped: hardware: no profile mi300x'" \
  "the skipped part below the plot with its reason"

# An older sweep CSV, without the energy columns: drawn, with a note.
cut -d, -f1-21 "$parts" > "$out/parts_old.csv"
plot "$out/parts_old.csv" -o "$out/parts_old.png" --parts --data "$out/parts_old.json"
expect_drawn "$out/parts_old.json" \
  "d['energy_columns'] == [] and 'no energy columns' in d['energy_note']
   and close(d['parts'][0]['step_time_s'], 10.153691214)" \
  "the throughput and step panels, a note for the energy one"

# --parts needs tokens/s per GPU: the file and the column named.
grep -v '^#' "$parts" | cut -d, -f1-4,6- > "$out/no_tps.csv"
expect_refused "$repo/scripts/plot_sweep.py" "$out/no_tps.csv" \
  "no_tps.csv: --parts: expected a 'tokens_per_s_per_gpu' column, found none" --parts

# Nothing to draw: every point skipped (TP 3 and 5 do not divide a node).
head -2 "$tp" | tail -1 > "$out/skipped.csv"
for t in 3 5; do
  echo "$t,skipped,\"workload.parallelism.tp: expected a divisor of the GPUs per node (8), found $t\",,,,,,,,,,,,,,,,,,," >> "$out/skipped.csv"
done
for flag in "" --breakdown --parts; do
  if "$python" "$repo/scripts/plot_sweep.py" "$out/skipped.csv" -o "$out/skipped.png" $flag 2> "$out/err"; then
    echo "an all-skipped sweep was drawn ($flag)"; exit 1
  fi
  grep -q "expected at least one simulated point to plot, found 2 skipped (first reason: workload.parallelism.tp" "$out/err" ||
    { cat "$out/err"; exit 1; }
  [[ ! -e "$out/skipped.png" ]] || { echo "an image was written for an all-skipped sweep"; exit 1; }
done

# --breakdown needs the breakdown columns (a CSV from before they existed).
cut -d, -f1-11 "$here/sweep_fixture.csv" > "$out/old.csv"
if "$python" "$repo/scripts/plot_sweep.py" "$out/old.csv" -o "$out/old.png" --breakdown 2> "$out/err"; then
  echo "--breakdown without the breakdown columns was accepted"; exit 1
fi
grep -q "expected the step's breakdown columns, found no compute_s" "$out/err" || { cat "$out/err"; exit 1; }
printf 'a,b\n1,2\n' > "$out/bad.csv"
expect_refused "$repo/scripts/plot_sweep.py" "$out/bad.csv" "expected a clustersim sweep CSV"
echo ok
