#!/usr/bin/env bash
# ctest: scripts/plot_timeline.py draws the trace of `clustersim run --trace`,
# read back from the figure (--data): with --end 500, one window of 0-500 ms
# (a PNG of 1440 x 120 (1.4 + 0.32 rows) pixels: rank 0 of the 8-GPU
# Llama-3-8B step has 3 rows, host, compute and comm); by default the whole
# step and one layer zoomed; each row's drawn rectangles add up to the time
# its events keep the stream busy in the window; the two traced ranks of the
# 64-GPU TP step (12k+ events) drawn aggregated, fewer rectangles than
# events and at most 4 per pixel column and row; --streams picks rows. A
# file that is not a trace and an empty window are refused, writing no
# image.
# Usage: check_plot_timeline.sh CLUSTERSIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
clustersim=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
source "$here/plot_checks.sh"
plot() { "$python" "$repo/scripts/plot_timeline.py" "$@" 2> "$out/err" || { cat "$out/err"; exit 1; }; }

"$clustersim" run "$repo/scenarios/llama3_8b_fsdp_8xh100.yaml" --trace "$out/t.json" --no-wall-time --quiet > /dev/null
plot "$out/t.json" -o "$out/t.png" --ranks 0 --end 500 --data "$out/t.data.json"
expect_png_size "$out/t.png" 1440 283
expect_drawn "$out/t.data.json" \
  "len(d['panels']) == 1 and d['panels'][0]['window_ms'] == [0, 500] and d['panels'][0]['xlim'] == [0, 500]" \
  "one window, 0-500 ms"
expect_drawn "$out/t.data.json" \
  "[r['label'] for r in d['panels'][0]['rows']] == ['rank 0 host', 'rank 0 compute', 'rank 0 comm']" \
  "rank 0's host, compute and comm rows"
grep -q "window 0.0-500.0 ms (--start/--end): 1181 columns" "$out/err" || { cat "$out/err"; exit 1; }

# The busy time of each row, from the trace, against what the rectangles
# stand for (width x height), in the window and over the whole step.
busy_from_trace() {  # TRACE LO HI -> JSON {row label: busy ms of its events clipped to the window}
  "$python" - "$@" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["traceEvents"]
lo, hi = float(sys.argv[2]), float(sys.argv[3])
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in t if e.get("name") == "thread_name"}
busy = {}
for e in t:
    if e.get("ph") == "X":
        a, b = e["ts"] / 1e3, (e["ts"] + e["dur"]) / 1e3
        key = f"rank {e['pid']} {names[(e['pid'], e['tid'])]}"
        busy[key] = busy.get(key, 0.0) + max(0.0, min(b, hi) - max(a, lo))
print(json.dumps(busy))
PY
}
busy_from_trace "$out/t.json" 0 500 > "$out/busy500.json"
drawn_busy="{r['label']: sum(v for k, v in r['busy_ms'].items() if not k.startswith('wait:')) for r in d['panels'][0]['rows']}"
expect_drawn "$out/t.data.json" \
  "all(close($drawn_busy[k], v, 1e-6) for k, v in load(args[0]).items())" \
  "each row busy as long as its events in 0-500 ms" "$out/busy500.json"

plot "$out/t.json" -o "$out/whole.png" --data "$out/whole.json"
expect_drawn "$out/whole.json" \
  "len(d['panels']) == 2 and d['panels'][0]['shows'] == 'the whole trace' and d['panels'][0]['window_ms'][0] == 0 and d['panels'][1]['shows'].startswith('block ')" \
  "the whole step and one block zoomed"
expect_drawn "$out/whole.json" "d['panels'][1]['window_ms'][1] - d['panels'][1]['window_ms'][0] < 200" \
  "a zoom window of less than 200 ms"
busy_from_trace "$out/t.json" 0 1e9 > "$out/busy.json"
expect_drawn "$out/whole.json" \
  "all(close($drawn_busy[k], v, 1e-6) for k, v in load(args[0]).items())" \
  "each row busy as long as its events over the whole step" "$out/busy.json"

# The 64-GPU TP step, two ranks: aggregated per pixel column.
"$clustersim" run "$repo/scenarios/llama3_70b_fsdp_tp_64xh100.yaml" --trace "$out/t64.json" \
  --trace-ranks 0,8 --no-wall-time --quiet > /dev/null
plot "$out/t64.json" -o "$out/t64.png" --data "$out/t64.data.json"
expect_drawn "$out/t64.data.json" \
  "d['events'] > 10000 and len(d['panels'][0]['rows']) == 8" "12k+ events on 8 rows"
expect_drawn "$out/t64.data.json" \
  "d['panels'][0]['rectangles'] < d['events'] and d['panels'][0]['rectangles'] <= 4 * d['panels'][0]['columns'] * 8" \
  "fewer rectangles than events, at most 4 per column and row"
busy_from_trace "$out/t64.json" 0 1e9 > "$out/busy64.json"
expect_drawn "$out/t64.data.json" \
  "all(close($drawn_busy[k], v, 1e-6) for k, v in load(args[0]).items())" \
  "each row busy as long as its events" "$out/busy64.json"
grep -q "12,[0-9]\{3\} events on 8 rows of 2 ranks" "$out/err" || { cat "$out/err"; exit 1; }
plot "$out/t64.json" -o "$out/tp.png" --streams compute,tp --start 100 --data "$out/tp.json"
expect_drawn "$out/tp.json" \
  "[r['label'] for r in d['panels'][0]['rows']] == ['rank 0 compute', 'rank 0 tp', 'rank 8 compute', 'rank 8 tp'] and d['panels'][0]['window_ms'][0] == 100" \
  "the compute and tp streams of ranks 0 and 8 from 100 ms"

echo '{"traceEvents": 3}' > "$out/bad.json"
expect_refused "$repo/scripts/plot_timeline.py" "$out/bad.json" "expected a clustersim Chrome trace"
if "$python" "$repo/scripts/plot_timeline.py" "$out/t.json" -o "$out/empty.png" --start 500 --end 400 2> "$out/err"; then
  echo "an empty window was drawn"; exit 1
fi
grep -q "expected a window that ends after it starts, found 500-400 ms" "$out/err" || { cat "$out/err"; exit 1; }
[[ ! -e "$out/empty.png" ]] || { echo "an image was written for an empty window"; exit 1; }
echo ok
