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
"$clustersim" run "$repo/scenarios/llama3_8b_fsdp_8xh100.yaml" --trace "$out/t.json" --no-wall-time > /dev/null
"$python" "$repo/scripts/plot_timeline.py" "$out/t.json" -o "$out/t.png" --ranks 0 --end 500
[[ "$(head -c 8 "$out/t.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] ||
  { echo "t.png is not a PNG"; exit 1; }
size=$("$python" -c "import struct,sys; d=open(sys.argv[1],'rb').read(24); print(*struct.unpack('>II', d[16:24]))" "$out/t.png")
[[ "$size" == "1440 283" ]] || { echo "t.png is $size, expected 1440 283"; exit 1; }
echo '{"traceEvents": 3}' > "$out/bad.json"
if "$python" "$repo/scripts/plot_timeline.py" "$out/bad.json" -o "$out/bad.png" 2> "$out/err"; then
  echo "a file without trace events was accepted"; exit 1
fi
grep -q "expected a clustersim Chrome trace" "$out/err" || { cat "$out/err"; exit 1; }
[[ ! -e "$out/bad.png" ]] || { echo "an image was written for a bad trace"; exit 1; }
echo ok
