#!/usr/bin/env bash
# Holds the --json outputs of the shipped scenarios to docs/schemas/ (issue
# 18: stable outputs). `run` of every shipped scenario with a workload,
# `campaign` of every one with a campaign section, `replay` of an exported
# step. The scenarios are split by cost: SMALL and LARGE (about 25 s each)
# here, in unsanitized builds (tests/CMakeLists.txt), BENCH in scripts/bench, which
# runs them anyway and checks its outputs against the same schema. A shipped
# scenario in none of the lists fails the check, so a new one cannot escape.
#
#   check_output_schemas.sh CLUSTERSIM REPO small|large
set -euo pipefail
bin=$1
repo=$2
part=$3
check="$repo/tests/scripts/check_json_schema.py"
schemas="$repo/docs/schemas"

small_runs=(
  scenarios/examples/minimal.yaml
  scenarios/examples/llama3_70b_whatif.yaml
  scenarios/examples/nemotron4_340b_h100.yaml
  scenarios/llama3_8b_fsdp_8xh100.yaml
  scenarios/llama3_70b_fsdp_tp_64xh100.yaml
  scenarios/llama3_70b_hsdp_256xh100.yaml
  scenarios/llama3_405b_16k_54d.yaml
  scenarios/sweep_llama3_70b_16k.yaml
  scenarios/published/fms_34b_a100.yaml
  scenarios/published/fms_a100.yaml
  scenarios/published/fms_h100.yaml
  scenarios/published/megascale_175b_a100.yaml
  scenarios/published/mbridge_llama3_8b.yaml
  scenarios/published/mbridge_llama3_8b_h100.yaml
  scenarios/published/mbridge_llama3_70b.yaml
  scenarios/published/mbridge_llama3_70b_h100.yaml
  scenarios/published/megatron_gpt_h100.yaml
  scenarios/published/nemotron4_340b_gb200.yaml
  scenarios/published/nemotron4_340b_h100.yaml
  scenarios/published/tt_405b_3d_h100.yaml
  scenarios/published/tt_70b_tp8_h100.yaml
  scenarios/published/tt_8b_h100.yaml
  scenarios/published/tt_a100.yaml
  scenarios/which_part_llama3_70b.yaml
)
large_runs=(
  scenarios/published/mbridge_llama31_405b.yaml
  scenarios/ft_hsdp_98k.yaml
  scenarios/sweep_ft_hsdp_98k.yaml
)
bench_runs=(
  scenarios/llama3_405b_hsdp_98304xh100.yaml
  scenarios/llama3_405b_3d_16384xh100.yaml
  scenarios/llama3_405b_ft_hsdp_4d_98304xh100.yaml
  scenarios/llama3_405b_long_context_16384xh100.yaml
  scenarios/sweep_llama3_405b_layouts_16k.yaml  # its step is llama3_405b_3d_16384xh100.yaml's
  scenarios/which_part_llama3_405b.yaml
)
campaigns=(
  scenarios/ft_hsdp_98k.yaml
  scenarios/llama3_405b_16k_54d.yaml
  scenarios/sweep_ft_hsdp_98k.yaml
  tests/golden/campaign_small/scenario.yaml
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"

if [[ $part == small ]]; then
  # Every shipped scenario with a workload is in one list.
  listed=" ${small_runs[*]} ${large_runs[*]} ${bench_runs[*]} "
  for f in scenarios/*.yaml scenarios/*/*.yaml; do
    [[ $f == scenarios/stacks/* ]] && continue  # a stack profile, not a scenario
    grep -q '^workload:' "$f" || continue
    [[ $listed == *" $f "* ]] || {
      echo "check_output_schemas: $f has a workload but is in no list of this script" >&2
      exit 1
    }
  done
  for f in scenarios/*.yaml; do
    grep -q '^campaign:' "$f" || continue
    [[ " ${campaigns[*]} " == *" $f "* ]] || {
      echo "check_output_schemas: $f has a campaign section but is not in campaigns" >&2
      exit 1
    }
  done

  outputs=()
  for f in "${small_runs[@]}"; do
    out="$tmp/run_$(basename "$f" .yaml).json"
    "$bin" run "$f" --allow-oom --json "$out" >/dev/null
    outputs+=("$out")
  done
  # The optional object of --engine-stats.
  "$bin" run scenarios/llama3_8b_fsdp_8xh100.yaml --engine-stats --json "$tmp/run_stats.json" \
    >/dev/null
  outputs+=("$tmp/run_stats.json")
  # Identical GPUs: the engine object's timeline_dims of identical ranks.
  "$bin" run scenarios/llama3_8b_fsdp_8xh100.yaml --set hardware="$repo/bench/h100_identical_gpus.yaml" \
    --json "$tmp/run_identical.json" >/dev/null
  python3 -c 'import json, sys
dims = json.load(open(sys.argv[1]))["engine"]["timeline_dims"]
sys.exit(0 if dims == ["dp_shard"] else "identical ranks: timeline_dims %r, not [\"dp_shard\"]" % dims)' \
    "$tmp/run_identical.json"
  outputs+=("$tmp/run_identical.json")
  python3 "$check" "$schemas/run.schema.json" "${outputs[@]}"

  outputs=()
  for f in "${campaigns[@]}"; do
    out="$tmp/campaign_$(basename "$(dirname "$f")")_$(basename "$f" .yaml).json"
    "$bin" campaign "$f" --set campaign.trials=5 --json "$out" >/dev/null
    outputs+=("$out")
  done
  python3 "$check" "$schemas/campaign.schema.json" "${outputs[@]}"

  "$bin" export-chakra scenarios/llama3_8b_fsdp_8xh100.yaml -o "$tmp/et" >/dev/null
  prefix=$(ls "$tmp"/et/*.0.et)
  prefix=${prefix%.0.et}
  "$bin" replay scenarios/llama3_8b_fsdp_8xh100.yaml --trace "$prefix" --engine-stats \
    --json "$tmp/replay.json" >/dev/null
  # A scaled replay: the golden case's four traced ranks on 16.
  (cd tests/golden/replay_scaled &&
    "$bin" replay scenario.yaml --trace hsdp --scale-to 16 --json "$tmp/replay_scaled.json" >/dev/null)
  python3 "$check" "$schemas/replay.schema.json" "$tmp/replay.json" "$tmp/replay_scaled.json"
else
  outputs=()
  for f in "${large_runs[@]}"; do
    out="$tmp/run_$(basename "$f" .yaml).json"
    "$bin" run "$f" --allow-oom --json "$out" >/dev/null
    outputs+=("$out")
  done
  python3 "$check" "$schemas/run.schema.json" "${outputs[@]}"
fi
