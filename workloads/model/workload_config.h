// The scenario's training job (section `workload`): the model, the batch,
// the precision, how the job is parallelised (FSDP/HSDP sharding strategy
// with its groups, tensor parallelism inside a node) and the PyTorch options
// that change the step (prefetch, resharding, activation checkpointing, CPU
// offload, torch.compile, CUDA graphs).
//
// add_workload_keys() declares every key once (it also calls
// add_workload_model_keys() for `workload.model` and `workload.custom_model`);
// read_workload_spec() turns validated values into a plain WorkloadSpec and
// checks what no single key can, each error pointing at the responsible key's
// file:line (sim::ConfigError, every problem found at once):
//  * workload.seq_len and workload.local_batch are given (the section is
//    optional, so neither key is required by the schema);
//  * workload.global_batch, when given, is local_batch x micro-batches x
//    data-parallel replicas (workloads/model/global_batch.h), which sets
//    grad_accum (or, with pp > 1, the pipeline's micro-batches);
//  * tp divides the GPUs of a node (TP stays inside the NVLink domain), can
//    split the model (tensor_parallel_problem()) and, with sequence
//    parallelism, divides the tokens of a micro-batch (local_batch * seq_len);
//  * pp (pipeline stages) divides world_size / tp and is at most the layers;
//    with pp > 1 the micro-batches are workload.pipeline.microbatches
//    (default pp; grad_accum stays 1) and there is no CPU offload;
//  * the group sizes match the strategy, with dp = world_size / (tp * pp)
//    ranks in one tensor-parallel slice of one stage:
//      FULL_SHARD, SHARD_GRAD_OP: shard group = dp, replica group = 1;
//      DISTRIBUTED_OPTIMIZER:     shard group = dp, replica group = 1 (the
//                                 optimizer states' shards; neither size key
//                                 may be given, workloads/model/megatron_config.h);
//      NO_SHARD (DDP):            shard group = 1,  replica group = dp;
//      HYBRID_SHARD:              one of shard_group_size / replica_group_size
//                                 given (dividing dp), the other derived; or
//                                 both, with shard x replica = dp.
//
// Units: sizes are plain counts (GPUs, sequences, tokens). Thread safety:
// pure functions; WorkloadSpec is a value type.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/context_parallel.h"
#include "workloads/model/mesh_order.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/optimizer_step.h"
#include "workloads/model/pipeline_stages.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

// Compute precision of parameters, gradients and activations. bf16 and fp16
// are mixed precision (an fp32 master copy lives in the optimizer states).
enum class Dtype { kBf16, kFp16, kFp32 };
// PyTorch's ShardingStrategy (FSDP1 names; FSDP2 expresses the same with a
// 1-D or 2-D device mesh and reshard_after_forward), and Megatron-Core's
// distributed optimizer (ZeRO-1: parameters and gradients whole on every
// data-parallel rank, the optimizer states sharded; megatron_config.h).
enum class ShardingStrategy {
  kFullShard,
  kShardGradOp,
  kHybridShard,
  kNoShard,
  kDistributedOptimizer
};
enum class BackwardPrefetch { kBackwardPre, kBackwardPost, kNone };
// kSelective is torchtitan's op-level policy; kAttentionCore Megatron-Core's
// --recompute-granularity selective (the attention core only).
enum class ActivationCheckpointing { kNone, kFull, kSelective, kAttentionCore };

// Bytes of one element: bf16 and fp16 2, fp32 4.
int64_t dtype_bytes(Dtype dtype);
// The names the scenario uses ("bf16", "FULL_SHARD", "BACKWARD_PRE", "full").
std::string_view dtype_name(Dtype dtype);
std::string_view sharding_strategy_name(ShardingStrategy strategy);
std::string_view backward_prefetch_name(BackwardPrefetch prefetch);
std::string_view activation_checkpointing_name(ActivationCheckpointing ac);

struct WorkloadSpec {
  ModelSpec model;
  int64_t seq_len = 0;      // tokens per sequence
  int64_t local_batch = 0;  // sequences per GPU per micro-batch
  int64_t grad_accum = 1;   // micro-batches per step
  Dtype dtype = Dtype::kBf16;

  ShardingStrategy strategy = ShardingStrategy::kFullShard;
  int64_t tp = 1;  // tensor-parallel degree inside a node, with sequence parallelism
  // Pipeline stages (workloads/model/pipeline_stages.h), the outermost dim of the mesh.
  // With pp > 1, grad_accum is the number of pipeline micro-batches
  // (workload.pipeline.microbatches) and local_batch the size of each.
  int64_t pp = 1;
  PipelineSchedule pipeline_schedule = PipelineSchedule::k1F1B;
  int64_t virtual_stages = 1;  // chunks per rank (interleaved 1F1B)
  // Blocks per chunk in model order (workload.pipeline.layers_per_stage); empty: even.
  std::vector<int64_t> layers_per_chunk;
  // A stage's gradient reduction: each unit's as its last backward produces
  // it (Megatron-Core), or all after the stage's last backward (torchtitan).
  bool reduce_during_last_backward = false;
  // Context parallelism (workloads/model/context_parallel.h): the ranks that split each
  // sequence, inside the FSDP shard group; how K and V reach them.
  int64_t cp = 1;
  // The mesh's dims, slowest first (workload.parallelism.mesh_order).
  MeshOrder mesh_order = kTorchtitanMeshOrder;
  CpRotateMethod cp_rotate = CpRotateMethod::kAllGather;
  CpKvHeads cp_kv_heads = CpKvHeads::kQuery;

  BackwardPrefetch backward_prefetch = BackwardPrefetch::kBackwardPre;
  bool forward_prefetch = false;
  bool limit_all_gathers = true;
  bool reshard_after_forward = true;
  bool separate_reduce_stream = false;  // FSDP1's post-backward stream (FsdpScheduleOptions)
  bool no_sync = false;                 // reduce on the last micro-batch only
  // FSDP2 (per-parameter sharding, torch.distributed.fsdp.fully_shard) copies
  // each all-gather's output into the parameters and each unit's gradients
  // into the reduce-scatter input on the compute stream; FSDP1's flat
  // parameter is all-gathered and reduced in place (fsdp_schedule.h).
  int fsdp_version = 2;
  // Precision of gradient reduce-scatters and HSDP all-reduces: the compute
  // dtype by default (MixedPrecisionPolicy.reduce_dtype None); torchtitan
  // reduces in fp32 (mixed_precision_reduce = "float32").
  Dtype reduce_dtype = Dtype::kBf16;

  ActivationCheckpointing activation_checkpointing = ActivationCheckpointing::kNone;
  bool cpu_offload = false;
  // Megatron-Core's --cpu-offloading-num-layers (activations only): the
  // saved activations of blocks 0 .. n-1 copied to the host after each one's
  // forward and back before its backward, Transformer Engine's
  // OffloadSynchronizer timing (fsdp_schedule.h); 0 offloads none.
  int32_t activation_offload_layers = 0;
  bool torch_compile = false;
  bool cuda_graphs = false;
  // false: the unfused attention of older code (workload.attention: math,
  // workloads/model/math_attention.h); true: flash attention (SDPA's flash kernel).
  bool flash_attention = true;
  // The fused attention is cuDNN's (its own curves in the hardware profile).
  bool cudnn_attention = false;
  // true: eager rotary embedding by 2x2 rotation matrices in fp32
  // (workload.rotary_embedding: rotation_matrix, foundation-model-stack's);
  // false: by complex multiplication (torchtitan's, Meta's reference).
  bool rotary_by_matrix = false;
  // RMSNorm as one fused kernel in eager mode too (workload.norm_kernel: fused).
  bool fused_norm = false;
  // Where the sequence dim of TP's activations is (workload.parallelism.tp_sequence_dim):
  // 1, torchtitan's [batch, seq, hidden], or 0, Megatron's [seq, batch, hidden].
  int tp_sequence_dim = 1;
  // Async TP (workload.parallelism.async_tp, fsdp_schedule.h): TP's
  // all-gathers and reduce-scatters split into per-peer copies overlapped
  // with the chunks of the GEMM they feed or drain.
  bool async_tp = false;
  // FP8 GEMMs in the blocks (workload.float8.recipe, workloads/model/float8_kernels.h).
  Float8Recipe float8 = Float8Recipe::kNone;
  // FSDP all-gathers the blocks' linear weights in FP8 (workload.float8.fsdp_all_gather),
  // with their scales computed once per step (workload.float8.precompute_scales).
  bool float8_all_gather = false;
  // Which passes cast the blocks' FP8 weights (workload.float8.weight_casts):
  // kEveryPass (torchao) or kOncePerStep (Transformer Engine's weight cache
  // under Megatron: the first micro-batch of a step casts them).
  Float8WeightCasts float8_weight_casts = Float8WeightCasts::kEveryPass;
  // The loss's kernels (workload.cross_entropy, workloads/model/vocab_parallel_loss.h).
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::kAten;
  // Gradient-norm clipping every step (workload.grad_clip, fsdp_schedule.h).
  bool grad_clip = true;
  // The training loop's host work between steps that no kernel launch
  // accounts for (workload.host.per_step: data loading, logging, the loop's
  // Python), in ns >= 0: every GPU waits for it whole.
  int64_t host_per_step_ns = 0;
  // Its spread between ranks (workload.host.per_step_jitter), ns >= 0: each
  // rank's host work is host_per_step_ns + |N(0, this)| (exec/engine.h).
  int64_t host_per_step_jitter_ns = 0;
  // Host work the loop spends before each micro-batch's forward (a pipeline
  // chunk's, each), and before each transformer layer's forward and backward
  // (workload.host.per_micro_batch, per_layer: the loop's and the modules'
  // Python, hooks), ns >= 0, on top of the launches; the step's host issue
  // times carry them (workloads/schedules/step_program.h). per_layer is not
  // spent under CUDA graphs, which replay the layers without Python.
  int64_t host_per_micro_batch_ns = 0;
  int64_t host_per_layer_ns = 0;
  // How torch.optim.AdamW runs on the GPU (workload.optimizer.implementation,
  // workloads/model/optimizer_step.h): one fused kernel, or foreach's eight passes.
  OptimizerImplementation optimizer_implementation = OptimizerImplementation::kFused;
  bool float8_precompute_scales = false;

  // Megatron-Core's DistributedDataParallel (workloads/model/megatron_config.h):
  // true for DISTRIBUTED_OPTIMIZER and for NO_SHARD with workload.megatron.ddp.
  // Gradients accumulate in a contiguous main-grad buffer of reduce_dtype and
  // are reduced in buckets of bucket_params parameters once a step; the
  // activations follow Megatron's layout (memory_model.h).
  bool megatron = false;
  bool overlap_grad_reduce = true;   // --overlap-grad-reduce
  bool overlap_param_gather = true;  // --overlap-param-gather (DISTRIBUTED_OPTIMIZER)
  int64_t bucket_params = 0;         // parameters per bucket (Megatron's bucket_size)
  // The fp32 master weights kept as the bf16 parameters plus their low 16
  // bits (store_param_remainders): 10 bytes of optimizer state per parameter.
  bool store_param_remainders = false;
  // --fp8-param-gather (NeMo's fp8_params): the blocks' linear weights are FP8
  // tensors, all-gathered in FP8 by the distributed optimizer.
  bool fp8_param_gather = false;
  // Bytes of each of the distributed optimizer's states (master weight and
  // two moments; workload.megatron.optimizer_dtype): 4, or 2 for bf16, when
  // the bf16 parameters are the master weights (memory_model.h).
  int64_t optimizer_state_bytes = 4;
  // Megatron-FSDP (workload.megatron.fsdp with FULL_SHARD: its
  // optim_grads_params sharding; megatron_config.h): FSDP's schedule with
  // Megatron-Core's persistent buffers (no copy around its collectives), its
  // main-grad dtype and its model layout. `megatron` stays false: no buckets.
  bool megatron_fsdp = false;
  // Megatron-Core runs the model (its DDP or Megatron-FSDP): activations in
  // its layout, its fused norms and loss (memory_model.h), its optimizer's
  // precision (optimizer_step.h).
  bool megatron_core() const { return megatron || megatron_fsdp; }

  // Derived: world_size = dp_size * tp * pp; dp_size = shard_group_size * replica_group_size.
  int64_t world_size = 0;          // GPUs in the job
  int64_t dp_size = 0;             // data-parallel ranks: world_size / (tp * pp), cp included
  int64_t shard_group_size = 0;    // ranks a parameter is sharded over (cp included)
  int64_t replica_group_size = 0;  // copies of each shard (HSDP all-reduce group)

  // Tokens of one micro-batch on one rank before tensor parallelism's split:
  // local_batch sequences of seq_len / cp tokens each.
  int64_t rank_tokens() const { return local_batch * seq_len / cp; }
  // Distinct micro-batches per step across the job (cp ranks share theirs).
  int64_t batch_replicas() const { return dp_size / cp; }
  // Sequences per optimizer step over the job (workload.global_batch, given or derived).
  int64_t global_batch() const { return local_batch * grad_accum * batch_replicas(); }
};

// Declares section `workload` (via add_workload_model_keys()) with
// seq_len, local_batch, global_batch, grad_accum, dtype, activation_checkpointing,
// cpu_offload, torch_compile, cuda_graphs, attention, rotary_embedding; section
// `workload.parallelism` (strategy, shard_group_size, replica_group_size, tp, tp_sequence_dim, pp);
// section `workload.pipeline` (via add_pipeline_keys(), workloads/model/pipeline_config.h); section
// `workload.float8` (recipe, fsdp_all_gather, precompute_scales); section `workload.fsdp`
// (backward_prefetch, forward_prefetch, limit_all_gathers, reshard_after_forward,
// separate_reduce_stream, no_sync, version, reduce_dtype); section `workload.optimizer`
// (implementation, via add_optimizer_keys()); section `workload.host` (via add_host_loop_keys(),
// workloads/model/host_loop_config.h); section `workload.megatron` (via add_megatron_keys(),
// workloads/model/megatron_config.h). Defaults are PyTorch's (FULL_SHARD, BACKWARD_PRE,
// limit_all_gathers true, reshard_after_forward true, FSDP2, reduction in the compute dtype) and
// bf16, tp 1, grad_accum 1, no checkpointing, no offload, eager mode, the fused optimizer
// (PyTorch's own default on CUDA is foreach).
void add_workload_keys(sim::ConfigSchema& schema);

// The training job of a scenario on a cluster of `world_size_gpus` GPUs in
// nodes of `gpus_per_node` (both > 0; the cluster's figures). Throws
// sim::ConfigError listing every problem (see the top of this file); the
// model's own errors (read_model_spec()) come first.
WorkloadSpec read_workload_spec(const sim::ConfigValues& values, int64_t world_size_gpus,
                                int64_t gpus_per_node);

}  // namespace clustersim::workloads
