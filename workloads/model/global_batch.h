// workload.global_batch: the sequences of one optimizer step over the whole
// job, as training frameworks state their batch (torchtitan's
// global_batch_size, Megatron-LM's --global-batch-size, NeMo's
// model.global_batch_size). With workload.local_batch, the sequences of one
// micro-batch on one GPU (torchtitan's local_batch_size, or its
// pipeline_parallel_microbatch_size under PP; Megatron's micro-batch size),
// the micro-batches of a step follow:
//
//   global_batch = local_batch x micro-batches x data-parallel replicas
//   replicas     = world_size / (tp x pp x cp)
//
// Every rank of an FSDP shard group and of an HSDP replica group reads its
// own sequences (replicas = shard_group_size x replica_group_size / cp);
// context-parallel ranks split one sequence and tensor-parallel ranks share
// theirs, so neither counts. The micro-batches are workload.grad_accum
// without pipeline parallelism and workload.pipeline.microbatches with pp > 1;
// given beside global_batch, that key must agree.
//
// Errors (added to the sink at the key's file:line:col): a global batch that
// is not a multiple of local_batch x replicas (with the nearest that are), and
// a grad_accum or pipeline.microbatches that disagrees with it.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

// Declares workload.global_batch (optional, positive, no default).
void add_global_batch_key(sim::ConfigSchema& schema);

// The micro-batches per step that workload.global_batch asks for, with
// w.local_batch, tp, pp, cp and world_size read; nothing when the key is
// absent, or when the mesh does not divide the world (that error is the
// mesh's) or the batch does not divide (the error is in `sink`).
std::optional<int64_t> micro_batches_from_global_batch(const sim::ConfigValues& values,
                                                       const WorkloadSpec& w,
                                                       sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
