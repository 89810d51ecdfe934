// Megatron-Core's data parallelism (section `workload.megatron`): the
// distributed optimizer (workload.parallelism.strategy DISTRIBUTED_OPTIMIZER)
// and plain Megatron DDP (NO_SHARD with workload.megatron.ddp), their
// gradient buckets and overlaps, and the checks of their combination with the
// rest of the workload.
//
// What Megatron-Core does (megatron/core/distributed/distributed_data_parallel.py,
// param_and_grad_buffer.py, megatron/core/optimizer/distrib_optimizer.py; the
// "Distributed Optimizer" page of its docs):
//  * every data-parallel rank holds the whole low-precision parameters, and
//    accumulates the gradients of every micro-batch into one contiguous
//    main-grad buffer (fp32 for bf16 training: Megatron-LM's arguments.py
//    forces accumulate_allreduce_grads_in_fp32 with --bf16; NeMo's
//    grad_sync_dtype may say bf16) through the GEMMs' fused accumulation;
//  * the buffer is cut into buckets: parameters in backward order (the
//    reverse of registration), a bucket closing at the parameter that
//    brings it to bucket_size parameters, by default max(40,000,000,
//    1,000,000 x dp) with dp the data-parallel size without context
//    parallelism (distributed_data_parallel_config.py, bucket_size;
//    distributed_data_parallel.py sets it when None). Without
//    --overlap-grad-reduce, on a pipeline stage other than the first, and for
//    a model chunk after the first (megatron/training/training.py,
//    disable_bucketing=(model_chunk_idx > 0)) a chunk is one bucket;
//  * in the last micro-batch's backward each bucket is reduced once its
//    gradients are all produced (--overlap-grad-reduce), or all after the
//    backward; DDP all-reduces it, the distributed optimizer reduce-scatters
//    it, each rank keeping 1/dp of the gradients, in place in the buffer;
//  * the distributed optimizer keeps the fp32 master weights and Adam's two
//    moments (12 bytes per parameter) for its 1/dp shard only, and after the
//    step all-gathers the updated low-precision parameters bucket by bucket,
//    in place: with --overlap-param-gather in the next step's forward (each
//    bucket's forward pre-hook waits for its all-gather and starts the
//    next bucket's), else at once after the optimizer.
// Here buckets close at FSDP-unit boundaries (a block, or the root's
// embedding / output head), the first unit that brings a bucket to
// bucket_params parameters closing it: a block bigger than a bucket is one
// bucket where Megatron makes one per large weight (the same bytes in fewer
// collectives, issued when the block's backward ends). Megatron's padding of
// each bucket to a multiple of dp is left out.
//
// Errors: read_megatron_keys adds every problem to the sink at the key's
// FILE:LINE:COL, naming what
// was expected and what was found.
// Units: bucket sizes in parameters. Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

// Megatron-Core's default bucket size for `dp` data-parallel ranks (context
// parallelism not counted): max(40,000,000, 1,000,000 x dp) parameters.
int64_t megatron_default_bucket_params(int64_t dp);

// Declares section `workload.megatron` (ddp, overlap_grad_reduce,
// overlap_param_gather, bucket_size, store_param_remainders).
void add_megatron_keys(sim::ConfigSchema& schema);

// Whether the job runs Megatron-Core's DDP: DISTRIBUTED_OPTIMIZER, or NO_SHARD
// with workload.megatron.ddp. Needs only the strategy read.
bool reads_as_megatron(const sim::ConfigValues& values, ShardingStrategy strategy);

// With the rest of `w` read (strategy, groups, dp_size, cp, pp, dtype,
// checkpointing, options): sets w.megatron and the workload.megatron values
// (the bucket size derived when not given), and adds to `sink` every
// combination the mode cannot run (see the top of this file and
// docs/parallelism.md).
void read_megatron_keys(const sim::ConfigValues& values, WorkloadSpec& w,
                        sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
