#!/usr/bin/env bash
# ctest: scripts/plot_sweep.py draws a heatmap, a line plot and the breakdown bars from a sweep
# CSV (PNG files with the PNG signature) and rejects a file that is not one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
"$python" "$repo/scripts/plot_sweep.py" "$here/sweep_fixture.csv" -o "$out/heat.png"
"$python" "$repo/scripts/plot_sweep.py" "$here/sweep_fixture.csv" -o "$out/line.png" \
  --x workload.parallelism.shard_group_size --metric step_time_s
"$python" "$repo/scripts/plot_sweep.py" "$here/sweep_fixture.csv" -o "$out/bars.png" --breakdown
for f in heat line bars; do
  [[ "$(head -c 8 "$out/$f.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] ||
    { echo "$f.png is not a PNG"; exit 1; }
done
# --breakdown needs the breakdown columns (a CSV from before they existed).
cut -d, -f1-11 "$here/sweep_fixture.csv" > "$out/old.csv"
if "$python" "$repo/scripts/plot_sweep.py" "$out/old.csv" -o "$out/old.png" --breakdown 2> "$out/err"; then
  echo "--breakdown without the breakdown columns was accepted"; exit 1
fi
grep -q "expected the step's breakdown columns, found no compute_s" "$out/err" || { cat "$out/err"; exit 1; }
printf 'a,b\n1,2\n' > "$out/bad.csv"
if "$python" "$repo/scripts/plot_sweep.py" "$out/bad.csv" -o "$out/bad.png" 2> "$out/err"; then
  echo "a CSV without a status column was accepted"; exit 1
fi
grep -q "expected a clustersim sweep CSV" "$out/err" || { cat "$out/err"; exit 1; }
[[ ! -e "$out/bad.png" ]] || { echo "an image was written for a bad CSV"; exit 1; }
echo ok
