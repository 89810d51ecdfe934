#!/usr/bin/env bash
# Runs one golden case and compares its output with the expected file.
#
#   run_golden_case.sh CLUSTERSIM_BINARY CASE_DIR
#
# CASE_DIR/args holds the arguments, one per line (no shell quoting needed).
# The command runs inside CASE_DIR, so messages name files as the case does.
# Its stdout, stderr and exit code are compared exactly with CASE_DIR/expected.
# With CLUSTERSIM_UPDATE_GOLDEN=1 the expected file is rewritten instead.
set -euo pipefail
binary=$1
case_dir=$2

mapfile -t args < "$case_dir/args"
actual=$(mktemp)
stdout=$(mktemp)
stderr=$(mktemp)
trap 'rm -f "$actual" "$stdout" "$stderr"' EXIT

set +e
(cd "$case_dir" && "$binary" "${args[@]}") > "$stdout" 2> "$stderr"
code=$?
set -e
{
  printf '$ clustersim %s\n' "${args[*]}"
  printf -- '--- stdout ---\n'
  cat "$stdout"
  printf -- '--- stderr ---\n'
  cat "$stderr"
  printf -- '--- exit %d ---\n' "$code"
} > "$actual"

if [[ "${CLUSTERSIM_UPDATE_GOLDEN:-0}" == 1 ]]; then
  cp "$actual" "$case_dir/expected"
  echo "updated $case_dir/expected"
  exit 0
fi
if [[ ! -f "$case_dir/expected" ]]; then
  echo "missing $case_dir/expected; run: CLUSTERSIM_UPDATE_GOLDEN=1 scripts/test -R golden" >&2
  exit 1
fi
if ! diff -u "$case_dir/expected" "$actual"; then
  echo "golden case $(basename "$case_dir") differs (expected vs actual above)." >&2
  echo "If the change is intended: CLUSTERSIM_UPDATE_GOLDEN=1 scripts/test -R golden" >&2
  exit 1
fi
