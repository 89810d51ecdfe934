#!/usr/bin/env bash
# Every one-GPU measurement of scripts/microbench/ in one go, for a machine
# lent for minutes: a profiled eager training step of Llama-3-8B-wide blocks,
# the GEMM shapes and attention configurations of a shapes file, the
# memory-bound kernels, compute beside CTAs that hold SMs as NCCL's channels
# do, the sustained clock under load, the step with
# torchtitan's eager kernels (with and without activation checkpointing), FP8
# GEMMs, and the step under torch.compile; nvidia-smi logs the clocks
# throughout. Each stage runs under its own time limit and a failed
# stage does not stop the next; after each stage the output folder is packed
# into PACK (when given), so that whatever finished survives a cut-off.
#
#   scripts/microbench/single_gpu.sh DIR SHAPES_CSV [PACK.tar.gz]
#
# DIR: the output folder (e.g. scenarios/measurements/<date>_<hardware>);
# SHAPES_CSV: `clustersim kernels SCENARIO --csv` output (several scenarios'
# rows may be concatenated under one header). PYTHON names the interpreter
# (default python3). STAGES limits the stages run (default: all, in order:
# "profile_eager gemm attention attention_cudnn memory_kernels sm_occupancy
# sustained_clock profile_torchtitan_eager profile_torchtitan_full_ac
# profile_fused profile_selective_ac profile_selective_ac_expandable
# profile_70b_width profile_steady gemm_fp8 gemm_fp8_rowwise profile_compile").
# About 9 minutes on an H200 without sm_occupancy (not run on a GPU yet; about
# a minute more).
set -u
dir=${1:?usage: single_gpu.sh DIR SHAPES_CSV [PACK.tar.gz]}
shapes=${2:?usage: single_gpu.sh DIR SHAPES_CSV [PACK.tar.gz]}
pack=${3:-}
py=${PYTHON:-python3}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
stages=${STAGES:-profile_eager gemm attention attention_cudnn memory_kernels sm_occupancy \
  sustained_clock \
  profile_torchtitan_eager profile_torchtitan_full_ac profile_fused profile_selective_ac \
  profile_selective_ac_expandable profile_70b_width profile_steady gemm_fp8 gemm_fp8_rowwise \
  profile_compile}
mkdir -p "$dir"
export PYTHONUNBUFFERED=1

# Llama-3-8B's block (hidden 4096, 32 heads, 8 KV heads, MLP 14336, vocabulary
# 128256, sequence 8192, one sequence per GPU: torchtitan's 8B configuration)
# with 8 of its 32 layers, so that parameters, gradients and AdamW state fit
# one GPU unsharded.
model=(--layers 8 --hidden 4096 --heads 32 --kv-heads 8 --ffn 14336 --vocab 128256
       --seq 8192 --batch 1)

packup() {
  [[ -n $pack ]] || return 0
  tar -czf "$pack.tmp" -C "$(dirname "$dir")" "$(basename "$dir")" && mv "$pack.tmp" "$pack"
}

run_stage() {  # NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  [[ " $stages " == *" $name "* ]] || return 0
  echo "== $(date -u +%T) $name (limit ${limit} s)"
  local started=$SECONDS begin
  begin=$(date -u +%FT%T.%3NZ)
  timeout --signal=INT --kill-after=20 "$limit" "$@" > "$dir/$name.log" 2>&1
  local rc=$?
  echo "$name,$begin,$(date -u +%FT%T.%3NZ),$rc" >> "$dir/stages.csv"
  tail -n 14 "$dir/$name.log"
  echo "== $(date -u +%T) $name: exit $rc after $((SECONDS - started)) s"
  packup
}

# The GPU's clocks and power every 100 ms through every stage (clocks.csv; the
# stages' times in stages.csv), to tell the clock of each load.
[[ -f $dir/stages.csv ]] || echo "stage,start_utc,end_utc,exit" > "$dir/stages.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv,nounits -lms 100 >> "$dir/clocks.csv" 2>/dev/null &
clock_logger=$!
trap 'kill $clock_logger 2>/dev/null' EXIT

{
  nvidia-smi -q
  nvidia-smi --query-gpu=name,power.limit,enforced.power.limit,clocks.max.sm,clocks.max.mem \
    --format=csv
} > "$dir/nvidia_smi.txt" 2>&1
# The shapes file travels with the measurements (unless it is already there).
[[ $(realpath "$shapes") == "$(realpath "$dir")"/* ]] || cp "$shapes" "$dir/kernels.csv"

run_stage profile_eager 150 "$py" -m torch.distributed.run --standalone --nproc_per_node 1 \
  "$here/profile_step.py" "${model[@]}" --wait 1 --warmup 2 --active 3 -o "$dir/profile_eager"
run_stage gemm 110 "$py" "$here/gemm.py" --shapes "$shapes" --square 1024..16384 \
  --warmup 5 --iters 30 -o "$dir/gemm.csv"
run_stage attention 110 "$py" "$here/attention.py" --shapes "$shapes" --sweep \
  --warmup 3 --iters 15 -o "$dir/attention.csv"
run_stage attention_cudnn 110 "$py" "$here/attention.py" --shapes "$shapes" --sweep \
  --backend cudnn --warmup 3 --iters 15 -o "$dir/attention_cudnn.csv"
run_stage memory_kernels 60 "$py" "$here/memory_kernels.py" -o "$dir/memory_kernels.csv"
run_stage sm_occupancy 90 "$py" "$here/sm_occupancy.py" -o "$dir/sm_occupancy.csv"
run_stage sustained_clock 60 "$py" "$here/sustained_clock.py" --seconds 40 \
  -o "$dir/sustained_clock.csv"
# The same step with torchtitan's eager kernels of its published runs (the
# Python RMSNorm, complex rotary: what the model's eager fusion mode counts),
# without and with full activation checkpointing.
run_stage profile_torchtitan_eager 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --wait 1 --warmup 2 --active 3 -o "$dir/profile_torchtitan_eager"
run_stage profile_torchtitan_full_ac 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --checkpointing full --wait 1 --warmup 2 --active 3 -o "$dir/profile_torchtitan_full_ac"
# The same with AdamW fused=True, and with torchtitan's op-level selective
# activation checkpointing (what its published Llama-3-8B runs used).
run_stage profile_fused 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --optimizer fused --wait 1 --warmup 2 --active 3 -o "$dir/profile_fused"
run_stage profile_selective_ac 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --checkpointing selective --wait 1 --warmup 2 --active 3 -o "$dir/profile_selective_ac"
# The selective-AC step again under torchtitan's launcher's allocator setting
# (its run script exports PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True):
# its peak reserved memory is what torchtitan's published "memory" reads, and
# the other steps ran with PyTorch's default segments (reserved 1.22-1.30 x
# allocated on 2026-12-04).
run_stage profile_selective_ac_expandable 120 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
  "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --checkpointing selective --wait 1 --warmup 2 --active 3 \
  -o "$dir/profile_selective_ac_expandable"
# Two of Llama-3-70B's blocks (hidden 8192, 64 heads, 8 KV heads, MLP 28672).
run_stage profile_70b_width 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" --layers 2 --hidden 8192 --heads 64 --kv-heads 8 \
  --ffn 28672 --vocab 128256 --seq 8192 --batch 1 --norm python --rotary complex \
  --wait 1 --warmup 2 --active 3 -o "$dir/profile_70b_width"
# Twenty unprofiled steps first: the clock of steady training (clocks.csv).
run_stage profile_steady 120 "$py" -m torch.distributed.run --standalone \
  --nproc_per_node 1 "$here/profile_step.py" "${model[@]}" --norm python --rotary complex \
  --wait 20 --warmup 1 --active 2 -o "$dir/profile_steady"
# FP8 GEMMs (torch._scaled_mm) at the same shapes, tensorwise and rowwise.
run_stage gemm_fp8 110 "$py" "$here/gemm.py" --shapes "$shapes" --square 1024..16384 \
  --dtype fp8 --warmup 5 --iters 30 -o "$dir/gemm_fp8_tensorwise.csv"
run_stage gemm_fp8_rowwise 110 "$py" "$here/gemm.py" --shapes "$shapes" --square 1024..16384 \
  --dtype fp8 --fp8-scaling rowwise --warmup 5 --iters 30 -o "$dir/gemm_fp8_rowwise.csv"
run_stage profile_compile 150 "$py" -m torch.distributed.run --standalone --nproc_per_node 1 \
  "$here/profile_step.py" "${model[@]}" --compile --wait 1 --warmup 2 --active 3 \
  -o "$dir/profile_compile"
echo "== $(date -u +%T) done"
