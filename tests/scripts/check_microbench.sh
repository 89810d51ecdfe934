#!/usr/bin/env bash
# ctest microbench_scripts: every script of scripts/microbench/ compiles and
# prints its --help without PyTorch (they import torch only after parsing
# their arguments), then the pure-Python helpers' tests
# (microbench_helpers_test.py) against the clustersim binary given as $1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
clustersim=${1:?usage: check_microbench.sh path/to/clustersim}
python=${PYTHON:-python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PYTHONPYCACHEPREFIX="$out/pycache" PYTHONDONTWRITEBYTECODE=1
scripts=("$repo"/scripts/microbench/*.py)
[[ ${#scripts[@]} -ge 7 ]] || { echo "expected the microbench scripts, found ${scripts[*]}"; exit 1; }
for script in "${scripts[@]}"; do
  "$python" -m py_compile "$script" || { echo "$script does not compile"; exit 1; }
done
for name in gemm attention collectives profile_step memory_kernels sustained_clock sm_occupancy \
    comm_overlap; do
  if ! "$python" "$repo/scripts/microbench/$name.py" --help > "$out/$name.help" 2>&1; then
    cat "$out/$name.help"; echo "$name.py --help failed"; exit 1
  fi
  grep -q "^usage: $name.py" "$out/$name.help" || { cat "$out/$name.help"; exit 1; }
done
if ! "$python" "$here/microbench_helpers_test.py" "$clustersim" > "$out/unittest" 2>&1; then
  cat "$out/unittest"; echo "microbench_helpers_test.py failed"; exit 1
fi
echo ok
