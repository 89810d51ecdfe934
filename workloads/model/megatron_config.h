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
// Megatron-FSDP (workload.megatron.fsdp, strategy FULL_SHARD: its
// optim_grads_params sharding; megatron/core/distributed/fsdp/src/megatron_fsdp/
// megatron_fsdp.py and param_and_grad_buffer.py) runs FSDP's schedule
// (fsdp_schedule.h) with what Megatron-FSDP does differently from PyTorch's:
//  * each transformer layer is a unit whose parameters live in a persistent
//    buffer: the all-gather writes them in place and the GEMMs read them
//    there, no copy-out; the next unit's all-gather is issued before the
//    current unit's forward or backward (its prefetch);
//  * the backward writes each weight's gradient into the unit's main-grad
//    bucket (Transformer Engine's gradient accumulation fusion, which its
//    TransformerEngine needs for FSDP), of reduce_dtype (grad_reduce_in_fp32),
//    and every micro-batch reduce-scatters the bucket ("for grads shard mode
//    there will actually always be gradient sync") on a stream of its own;
//    the accumulation of each micro-batch's reduced shard (1/dp of the
//    bucket) is not priced;
//  * --fsdp-double-buffer holds two unit buffers (an all-gather waits for the
//    release of the buffer two units back), else the caching allocator's;
//  * memory: the bf16 parameter shard, the main-grad shard in reduce_dtype,
//    fp32 main weights and Adam's moments (12 bytes) over the shard group,
//    and the gathered units and one unit's main-grad bucket unsharded.
// Not modelled: its optim_grads sharding, its hybrid (outer data-parallel)
// sharding and pipeline stages (each an error with fsdp true), and
// --no-gradient-accumulation-fusion (a copy of each gradient into the bucket).
//
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
// overlap_param_gather, bucket_size, store_param_remainders, fp8_param_gather,
// optimizer_dtype, fsdp, fsdp_double_buffer).
void add_megatron_keys(sim::ConfigSchema& schema);

// Whether the job runs Megatron-Core's DDP: DISTRIBUTED_OPTIMIZER, or NO_SHARD
// with workload.megatron.ddp. Needs only the strategy read.
bool reads_as_megatron(const sim::ConfigValues& values, ShardingStrategy strategy);

// With the rest of `w` read (strategy, groups, dp_size, cp, pp, dtype,
// checkpointing, options): sets w.megatron or w.megatron_fsdp (and the FSDP
// options Megatron-FSDP decides) and the workload.megatron values
// (the bucket size derived when not given), and adds to `sink` every
// combination the mode cannot run (see the top of this file and
// docs/parallelism.md).
void read_megatron_keys(const sim::ConfigValues& values, WorkloadSpec& w,
                        sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
