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
"$clustersim" validate "$repo/scenarios/measurements/training/published_runs.csv" --folds 12 \
  --csv "$out/runs.csv" > "$out/text"
[[ $(wc -l < "$out/runs.csv") == 13 ]] || { echo "expected 12 rows and a header"; exit 1; }
grep -q '^tt_8b_8xh100,FSDP h100_96gb_500w,fitted,5762,5751\.8' "$out/runs.csv" ||
  { head -3 "$out/runs.csv"; exit 1; }
"$python" "$repo/scripts/plot_validate.py" "$out/runs.csv" -o "$out/v.png"
size=$("$python" -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print(*struct.unpack('>II', d[16:24]))" "$out/v.png")
[[ "$size" == "840 780" ]] || { echo "v.png is $size, expected 840 780"; exit 1; }
printf 'a,b\n1,2\n' > "$out/bad.csv"
if "$python" "$repo/scripts/plot_validate.py" "$out/bad.csv" -o "$out/bad.png" 2> "$out/err"; then
  echo "a CSV without validate's columns was accepted"; exit 1
fi
grep -q "expected a .clustersim validate --csv. file" "$out/err" || { cat "$out/err"; exit 1; }
[[ ! -e "$out/bad.png" ]] || { echo "an image was written for a bad CSV"; exit 1; }
echo ok
