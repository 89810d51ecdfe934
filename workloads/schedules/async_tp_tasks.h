// Async tensor parallelism (WorkloadSpec::async_tp; torch's micro-pipelined
// TP, torch/distributed/_symmetric_memory: fused_all_gather_matmul and
// fused_matmul_reduce_scatter, which torchtitan's enable_async_tensor_parallel
// has Inductor substitute for TP's collectives and the GEMMs beside them).
// A GEMM whose input TP all-gathers runs as tp row chunks: the local shard's
// first, then each peer's as soon as its copy arrived; the copies (one
// activation chunk, FsdpSchedule::tp_gather_chunk_bytes, from each of the tp - 1
// peers in turn) run on copy engines (no SMs taken from compute) while the
// chunks compute. A GEMM whose output TP reduce-scatters computes the
// chunks the peers own first, copying each to its owner as it is done, then
// its own, then sums the tp partials of its rows (tp.reduce_partials).
// The copies are sends and receives on the TP group's ring (a peer k places
// on), FIFO on one stream each way.
//
// Thread safety: pure functions of their inputs (and the callback).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

// The tasks of GEMM task `gemm` (its kernel in the table of `s`) fed by a
// TP all-gather: `deps` are the GEMM's own dependencies, `input` the task
// that made the shard the peers copy (or -1). Returns the last chunk's task.
int32_t add_gathered_matmul(const FsdpSchedule& s, int64_t tp, const Task& gemm,
                            const std::vector<int32_t>& deps, int32_t input, const AddTaskFn& add);

// The tasks of GEMM task `gemm` drained by a TP reduce-scatter. Returns the
// task of the sum of the partials.
int32_t add_scattered_matmul(const FsdpSchedule& s, int64_t tp, const Task& gemm,
                             const std::vector<int32_t>& deps, const AddTaskFn& add);

}  // namespace clustersim::workloads
