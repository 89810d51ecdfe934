#include "workloads/model/workload_config.h"

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/config_error.h"
#include "config/named_choices.h"
#include "sim/check.h"
#include "workloads/model/global_batch.h"
#include "workloads/model/host_loop_config.h"
#include "workloads/model/megatron_config.h"
#include "workloads/model/moe_spec.h"
#include "workloads/model/pipeline_config.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

namespace {

using sim::name_of;
using sim::Named;
using sim::names;
using sim::value_of;

constexpr std::array<Named<Dtype>, 3> kDtypes = {
    {{Dtype::kBf16, "bf16"}, {Dtype::kFp16, "fp16"}, {Dtype::kFp32, "fp32"}}};
constexpr std::array<Named<ShardingStrategy>, 5> kStrategies = {
    {{ShardingStrategy::kFullShard, "FULL_SHARD"},
     {ShardingStrategy::kShardGradOp, "SHARD_GRAD_OP"},
     {ShardingStrategy::kHybridShard, "HYBRID_SHARD"},
     {ShardingStrategy::kNoShard, "NO_SHARD"},
     {ShardingStrategy::kDistributedOptimizer, "DISTRIBUTED_OPTIMIZER"}}};
constexpr std::array<Named<BackwardPrefetch>, 3> kPrefetches = {
    {{BackwardPrefetch::kBackwardPre, "BACKWARD_PRE"},
     {BackwardPrefetch::kBackwardPost, "BACKWARD_POST"},
     {BackwardPrefetch::kNone, "NONE"}}};
constexpr std::array<Named<Float8Recipe>, 8> kFloat8Recipes = {
    {{Float8Recipe::kNone, "none"},
     {Float8Recipe::kTensorwise, "tensorwise"},
     {Float8Recipe::kRowwise, "rowwise"},
     {Float8Recipe::kDelayed, "delayed"},
     {Float8Recipe::kCurrent, "current"},
     {Float8Recipe::kBlockwise, "blockwise"},
     {Float8Recipe::kMxfp8, "mxfp8"},
     {Float8Recipe::kNvfp4, "nvfp4"}}};
constexpr std::array<Named<ActivationCheckpointing>, 4> kCheckpointing = {
    {{ActivationCheckpointing::kNone, "none"},
     {ActivationCheckpointing::kFull, "full"},
     {ActivationCheckpointing::kSelective, "selective"},
     {ActivationCheckpointing::kAttentionCore, "attention_core"}}};

const char* const kSeqLen = "workload.seq_len";
const char* const kLocalBatch = "workload.local_batch";
const char* const kStrategy = "workload.parallelism.strategy";
const char* const kShard = "workload.parallelism.shard_group_size";
const char* const kReplica = "workload.parallelism.replica_group_size";
const char* const kTp = "workload.parallelism.tp";
const char* const kPp = "workload.parallelism.pp";
const char* const kGradAccum = "workload.grad_accum";
const char* const kAsyncTp = "workload.parallelism.async_tp";
const char* const kFloat8 = "workload.float8.recipe";
const char* const kFloat8AllGather = "workload.float8.fsdp_all_gather";
const char* const kFloat8Precompute = "workload.float8.precompute_scales";
const char* const kFloat8WeightCasts = "workload.float8.weight_casts";
const char* const kCrossEntropy = "workload.cross_entropy";
constexpr std::array<Named<CrossEntropyKernels>, 3> kCrossEntropyKernels = {
    {{CrossEntropyKernels::kAten, "aten"},
     {CrossEntropyKernels::kVocabParallel, "vocab_parallel"},
     {CrossEntropyKernels::kVocabParallelFused, "vocab_parallel_fused"}}};
constexpr std::array<Named<Float8WeightCasts>, 2> kWeightCasts = {
    {{Float8WeightCasts::kEveryPass, "every_micro_batch"},
     {Float8WeightCasts::kOncePerStep, "once_per_step"}}};

std::string str(int64_t x) { return std::to_string(x); }

std::string fsdp_version_problem(const sim::ConfigValue& v) {
  const int64_t x = std::get<int64_t>(v);
  return x == 1 || x == 2 ? "" : "1 or 2";
}

std::string zero_or_one(const sim::ConfigValue& v) {
  const int64_t x = std::get<int64_t>(v);
  return x == 0 || x == 1 ? "" : "0 or 1";
}

std::string stack_efficiency_problem(const sim::ConfigValue& v) {
  const double x = std::get<double>(v);
  return x > 0 && x <= 2 ? "" : "in (0, 2]";
}

std::vector<std::string> reduce_dtype_names() {
  std::vector<std::string> out = {"param"};
  for (const std::string& n : names(kDtypes)) out.push_back(n);
  return out;
}

// Fills shard/replica group sizes from the strategy and the keys given, or
// reports why they cannot be.
void derive_groups(const sim::ConfigValues& values, WorkloadSpec& w, sim::DiagnosticSink& sink) {
  const int64_t dp = w.dp_size;
  const std::string dp_text = str(dp) + " = world_size " + str(w.world_size) + " / tp " +
                              str(w.tp) + (w.pp > 1 ? " / pp " + str(w.pp) : "");
  const std::string strategy(sharding_strategy_name(w.strategy));
  const bool has_shard = values.has(kShard);
  const bool has_replica = values.has(kReplica);
  const int64_t shard = has_shard ? values.get_int(kShard) : 0;
  const int64_t replica = has_replica ? values.get_int(kReplica) : 0;

  // Every strategy but HYBRID_SHARD fixes both sizes; given ones must agree.
  auto fixed = [&](int64_t want_shard, const std::string& shard_why, int64_t want_replica,
                   const std::string& replica_why) {
    w.shard_group_size = want_shard;
    w.replica_group_size = want_replica;
    if (has_shard && shard != want_shard) {
      sink.add(values.where(kShard), kShard,
               "expected " + shard_why + " with " + strategy + " (HYBRID_SHARD for other group " +
                   "sizes), found " + str(shard));
    }
    if (has_replica && replica != want_replica) {
      sink.add(values.where(kReplica), kReplica,
               "expected " + replica_why + " with " + strategy + " (HYBRID_SHARD for other " +
                   "group sizes), found " + str(replica));
    }
  };

  switch (w.strategy) {
    case ShardingStrategy::kFullShard:
    case ShardingStrategy::kShardGradOp:
      fixed(dp, dp_text, 1, "1");
      return;
    case ShardingStrategy::kDistributedOptimizer:
      // The optimizer states are sharded over every data-parallel rank;
      // there is no group to choose.
      w.shard_group_size = dp;
      w.replica_group_size = 1;
      for (const char* key : {kShard, kReplica}) {
        if (!values.has(key)) continue;
        sink.add(values.where(key), key,
                 "expected no value with DISTRIBUTED_OPTIMIZER (Megatron-Core shards the "
                 "optimizer states over all " +
                     dp_text + " data-parallel ranks; HYBRID_SHARD's groups are FSDP's), found " +
                     str(values.get_int(key)));
      }
      return;
    case ShardingStrategy::kNoShard:
      fixed(1, "1", dp, dp_text);
      return;
    case ShardingStrategy::kHybridShard:
      break;
  }

  if (!has_shard && !has_replica) {
    sink.add(values.where(kStrategy), kStrategy,
             "expected " + std::string(kShard) + " or " + kReplica +
                 " with HYBRID_SHARD (the other is derived from " + dp_text + "), found neither");
    return;
  }
  if (has_shard && has_replica) {
    w.shard_group_size = shard;
    w.replica_group_size = replica;
    if (shard * replica != dp) {
      sink.add(values.where(kShard), kShard,
               "shard_group_size " + str(shard) + " x replica_group_size " + str(replica) + " = " +
                   str(shard * replica) + ", expected " + dp_text);
    }
    return;
  }
  const char* given_key = has_shard ? kShard : kReplica;
  const int64_t given = has_shard ? shard : replica;
  if (dp % given != 0) {
    sink.add(values.where(given_key), given_key,
             "expected a divisor of " + dp_text + ", found " + str(given));
    return;
  }
  w.shard_group_size = has_shard ? given : dp / given;
  w.replica_group_size = has_shard ? dp / given : given;
}

}  // namespace

int64_t dtype_bytes(Dtype dtype) { return dtype == Dtype::kFp32 ? 4 : 2; }
std::string_view dtype_name(Dtype dtype) { return name_of(kDtypes, dtype); }
std::string_view sharding_strategy_name(ShardingStrategy strategy) {
  return name_of(kStrategies, strategy);
}
std::string_view backward_prefetch_name(BackwardPrefetch prefetch) {
  return name_of(kPrefetches, prefetch);
}
std::string_view activation_checkpointing_name(ActivationCheckpointing ac) {
  return name_of(kCheckpointing, ac);
}

void add_workload_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  add_workload_model_keys(schema);
  schema.add_key(kSeqLen, ValueType::kInt, "Tokens per sequence.")
      .positive()
      .required_by(kStepCommands);
  schema
      .add_key(kLocalBatch, ValueType::kInt,
               "Sequences per GPU per micro-batch (torchtitan's local_batch_size, Megatron's "
               "micro-batch size).")
      .positive()
      .required_by(kStepCommands);
  add_global_batch_key(schema);
  schema
      .add_key("workload.grad_accum", ValueType::kInt,
               "Micro-batches per step (gradient accumulation); derived from global_batch when "
               "that is given.")
      .positive()
      .default_to(int64_t{1});
  schema
      .add_key("workload.dtype", ValueType::kEnum,
               "Compute precision; bf16 and fp16 are mixed precision with fp32 master weights "
               "and Adam moments.")
      .one_of(names(kDtypes))
      .default_to(std::string("bf16"));
  schema
      .add_key("workload.activation_checkpointing", ValueType::kEnum,
               "none; full: recompute each block's forward in backward; selective: "
               "torchtitan's op-level policy (attention and every other matmul saved, the rest "
               "recomputed); attention_core: Megatron-Core's selective recompute "
               "(--recompute-granularity selective, Korthikanti et al. 2022): the attention "
               "core (QK^T, softmax, softmax x V) re-run before its backward, everything else "
               "kept (needs strategy DISTRIBUTED_OPTIMIZER, workload.megatron.ddp or "
               "workload.megatron.fsdp).")
      .one_of(names(kCheckpointing))
      .default_to(std::string("none"));
  schema
      .add_key("workload.cpu_offload", ValueType::kBool,
               "FSDP CPUOffload: parameter/gradient shards and the optimizer step on the host.")
      .default_to(false);
  schema
      .add_key("workload.torch_compile", ValueType::kBool,
               "torch.compile of each transformer block (as torchtitan): fused kernels, fewer "
               "launches and HBM bytes; the embedding and loss stay eager.")
      .default_to(false);
  schema
      .add_key("workload.attention", ValueType::kEnum,
               "flash: flash attention (SDPA's fused kernel, FlashAttention), timed on the "
               "profile's gpu.attention_* curves; cudnn: cuDNN's fused flash attention "
               "(Transformer Engine's FusedAttention, its default on Hopper and Blackwell; SDPA's "
               "cuDNN backend), timed on the profile's gpu.cudnn_attention_* curves where it has "
               "them, else on its flash curves; math: the unfused attention of older code "
               "(minGPT, Megatron before flash attention), scores GEMM, scale, mask and softmax "
               "over the whole score matrix, context GEMM.")
      .one_of({"flash", "cudnn", "math"})
      .default_to(std::string("flash"));
  schema
      .add_key(kCrossEntropy, ValueType::kEnum,
               "Which kernels compute the loss: aten: F.cross_entropy (eager: the fp32 copy, "
               "log_softmax and nll_loss, 36 bytes per logit with bf16 logits); "
               "vocab_parallel: Megatron-Core's vocab-parallel cross entropy over each TP "
               "rank's slice of the logits (megatron/core/tensor_parallel/cross_entropy.py: "
               "the fp32 copy, max, subtract, exp, sum and softmax passes, and backward the "
               "scaling and the cast back, 52 bytes per logit); vocab_parallel_fused: the same "
               "with --cross-entropy-loss-fusion (NeMo's default), 40 bytes per logit.")
      .one_of(names(kCrossEntropyKernels))
      .default_to(std::string("aten"));
  schema
      .add_key("workload.norm_kernel", ValueType::kEnum,
               "How eager mode runs RMSNorm: composite: the Python RMSNorm (torchtitan's, "
               "or nn.RMSNorm before PyTorch had a fused CUDA kernel), eight kernels with "
               "fp32 intermediates, and autograd keeps the input's fp32 copy (4 bytes per "
               "element more than fused); fused: one kernel each way (torchtitan's Triton "
               "fused_rmsnorm, or nn.RMSNorm where it runs aten::_fused_rms_norm, as in "
               "PyTorch 2.11). torch.compile fuses either inside the blocks.")
      .one_of({"composite", "fused"})
      .default_to(std::string("composite"));
  schema
      .add_key("workload.rotary_embedding", ValueType::kEnum,
               "How the model code applies rotary position embeddings, which sets the kernels eager "
               "mode runs (torch.compile fuses either into one): complex: view_as_complex(x.float()) "
               "* freqs_cis (torchtitan, Meta's Llama reference); rotation_matrix: each pair of "
               "fp32 values times its 2x2 rotation matrix, then summed (foundation-model-stack's "
               "fms/modules/positions.py, which avoids complex numbers).")
      .one_of({"complex", "rotation_matrix"})
      .default_to(std::string("complex"));
  schema
      .add_key("workload.grad_clip", ValueType::kBool,
               "Gradient-norm clipping every step, as torchtitan, fms-fsdp and Megatron-LM "
               "train by default (max_norm 1): the local gradients' norm, an all-reduce of it, "
               "then the gradients scaled, before the optimizer.")
      .default_to(true);
  schema
      .add_key("workload.stack_efficiency", ValueType::kFloat,
               "The software stack's share of the modelled tensor-core rate: every kernel's FLOP "
               "roofline runs at peak x the part's sustained clock x this (memory-bound time is "
               "the part's alone). What the stack's modelled mechanisms do not explain, fitted "
               "to the stack's training runs by `clustersim calibrate` and set by its stack "
               "profile (scenarios/stacks/); 1 without one. Above 1: the stack's kernels beat "
               "the part's microbenchmarked curves.")
      .validated_by(stack_efficiency_problem, "in (0, 2]")
      .default_to(1.0);
  schema
      .add_key("workload.stack_efficiency_fitted_to", ValueType::kString,
               "Ids of the training runs (a runs file of `clustersim validate`) "
               "workload.stack_efficiency was fitted to, blank-separated; validate labels those "
               "rows fitted.")
      .default_to(std::string());
  schema
      .add_key("workload.cuda_graphs", ValueType::kBool,
               "CUDA graphs: one launch per captured block instead of one per kernel.")
      .default_to(false);

  schema.add_section("workload.parallelism",
                     "How ranks split the job: FSDP/HSDP sharding and tensor parallelism.");
  schema
      .add_key(kStrategy, ValueType::kEnum,
               "PyTorch ShardingStrategy: FULL_SHARD (ZeRO-3), SHARD_GRAD_OP (ZeRO-2), "
               "HYBRID_SHARD (shard in a group, replicate across groups), NO_SHARD (DDP: "
               "PyTorch's, or Megatron-Core's with workload.megatron.ddp); or "
               "DISTRIBUTED_OPTIMIZER, Megatron-Core's distributed optimizer (ZeRO-1: bf16 "
               "parameters and the main-grad buffer whole on every rank, gradients "
               "reduce-scattered in buckets, fp32 master weights and Adam moments sharded over "
               "dp, parameters all-gathered after the step; workload.megatron).")
      .one_of(names(kStrategies))
      .default_to(std::string("FULL_SHARD"));
  schema
      .add_key(kShard, ValueType::kInt,
               "Ranks each parameter is sharded over (HYBRID_SHARD; derived when omitted).")
      .positive();
  schema
      .add_key(kReplica, ValueType::kInt,
               "Copies of each shard (HYBRID_SHARD; derived when omitted).")
      .positive();
  schema
      .add_key(kTp, ValueType::kInt,
               "Tensor-parallel degree inside a node (Megatron-style with sequence parallelism); "
               "must divide the GPUs per node.")
      .positive()
      .default_to(int64_t{1});

  schema
      .add_key("workload.parallelism.tp_sequence_dim", ValueType::kInt,
               "The dim of the sequence in TP's activations (tp > 1): 1, torchtitan's [batch, "
               "seq, hidden] (DTensor Shard(1): PyTorch concatenates the chunks around every TP "
               "all-gather and reduce-scatter, a copy of the full activation each); 0, "
               "Megatron-LM's [seq, batch, hidden] (contiguous chunks, no copy; always under "
               "workload.megatron's strategies).")
      .validated_by(zero_or_one, "0 or 1")
      .default_to(int64_t{1});
  schema
      .add_key(kAsyncTp, ValueType::kBool,
               "torch's async TP (torchtitan's enable_async_tensor_parallel, an Inductor pass: "
               "needs torch_compile and tp > 1): each TP all-gather and reduce-scatter becomes "
               "copy-engine transfers with each peer, overlapped with tp chunks of the GEMM it "
               "feeds or drains.")
      .default_to(false);
  schema
      .add_key(kPp, ValueType::kInt,
               "Pipeline-parallel stages, the outermost dim of torchtitan's device mesh [pp, "
               "dp_replicate, dp_shard, cp, tp]: stage s is ranks s * world_size / pp onwards "
               "(unless mesh_order moves pp), the "
               "blocks split evenly (the first layers mod pp stages one block longer), the "
               "embedding on the first stage, the output head and loss on the last. Must divide "
               "world_size / tp and be at most the layers.")
      .positive()
      .default_to(int64_t{1});
  add_context_parallel_keys(schema);
  add_mesh_order_key(schema);
  add_pipeline_keys(schema);
  schema.add_section("workload.float8",
                     "Low-precision (FP8, MXFP8, NVFP4) training of the blocks' linears (torchao "
                     "Float8Linear as torchtitan applies it, or Transformer Engine's recipes: the "
                     "output head stays bf16; workloads/model/float8_kernels.h).");
  schema
      .add_key(kFloat8, ValueType::kEnum,
               "none: bf16 GEMMs; tensorwise: FP8 GEMMs with one dynamic scale per tensor "
               "(torchao's default); rowwise: one scale per row; delayed: Transformer Engine's "
               "delayed scaling (Megatron-Core's --fp8-recipe default), one scale per tensor "
               "taken from the amax history of earlier steps, so no amax pass precedes a cast "
               "(the cast records the amax as it writes); current: Transformer Engine's current "
               "scaling (--fp8-recipe tensorwise), one scale per tensor from its own amax, an "
               "amax pass before each cast; blockwise: Transformer Engine's block scaling "
               "(--fp8-recipe blockwise, DeepSeek-V3's), an fp32 scale per 1 x 128 tile of "
               "activations and gradients and per 128 x 128 block of weights, found by the cast; "
               "mxfp8: Transformer Engine's MXFP8BlockScaling (--fp8-recipe mxfp8), an E8M0 "
               "scale per 32 elements applied by the MMA, each tensor quantized both ways from "
               "bf16; nvfp4: Transformer Engine's NVFP4BlockScaling (--fp4-recipe nvfp4), FP4 "
               "E2M1 GEMMs with an E4M3 scale per 16 elements and a per-tensor scale, 16 x 16 "
               "blocks for weights, a Hadamard transform on the weight gradient's operands. "
               "Each linear's input, weight and output gradient are scaled and cast first; "
               "needs dtype bf16 and a part with FP8 tensor cores (gpu.peak_fp8_tflops), for "
               "mxfp8 and nvfp4 block-scaled ones (gpu.block_scaled_mma: Blackwell), for nvfp4 "
               "FP4 ones (gpu.peak_fp4_tflops).")
      .one_of(names(kFloat8Recipes))
      .default_to(std::string("none"));
  schema
      .add_key(kFloat8AllGather, ValueType::kBool,
               "torchtitan's enable_fsdp_float8_all_gather: each rank casts its shard of the "
               "blocks' linear weights to FP8 before the FSDP all-gather (half the bytes, half the "
               "unsharded weights' memory), whose global amax is one all-reduce per weight before "
               "each all-gather; the forward then needs no weight cast. Needs recipe tensorwise "
               "and FSDP2 sharding.")
      .default_to(false);
  schema
      .add_key(kFloat8Precompute, ValueType::kBool,
               "torchtitan's precompute_float8_dynamic_scale_for_fsdp: the weights' amaxes are "
               "computed after the optimizer step, one kernel over the local shards and one "
               "all-reduce for all of them, instead of an all-reduce per weight before each "
               "all-gather. Needs fsdp_all_gather.")
      .default_to(false);
  schema
      .add_key(kFloat8WeightCasts, ValueType::kEnum,
               "Which passes cast the blocks' weights to FP8: every_micro_batch (torchao's "
               "Float8Linear: every forward casts W, every backward casts it transposed); "
               "once_per_step (Transformer Engine under Megatron-Core: the first micro-batch of "
               "each model chunk casts every weight once, both layouts in one kernel, and keeps "
               "the casts for the step's later forwards and all its backwards, Megatron's "
               "is_first_microbatch). once_per_step needs a Transformer Engine recipe: delayed, "
               "current, blockwise, mxfp8 or nvfp4.")
      .one_of(names(kWeightCasts))
      .default_to(std::string("every_micro_batch"));
  schema.add_section("workload.fsdp", "FSDP options (PyTorch names and defaults).");
  schema
      .add_key("workload.fsdp.backward_prefetch", ValueType::kEnum,
               "When backward all-gathers the next block: before (BACKWARD_PRE) or after "
               "(BACKWARD_POST) the current block's gradient computation, or not ahead (NONE).")
      .one_of(names(kPrefetches))
      .default_to(std::string("BACKWARD_PRE"));
  schema
      .add_key("workload.fsdp.forward_prefetch", ValueType::kBool,
               "All-gather the next block before the current block's forward runs.")
      .default_to(false);
  schema
      .add_key("workload.fsdp.limit_all_gathers", ValueType::kBool,
               "Rate-limit all-gathers to two unsharded blocks in flight.")
      .default_to(true);
  schema
      .add_key("workload.fsdp.reshard_after_forward", ValueType::kBool,
               "Free unsharded parameters after forward (all-gather them again in backward).")
      .default_to(true);
  schema
      .add_key("workload.fsdp.separate_reduce_stream", ValueType::kBool,
               "Reduce-scatters and HSDP all-reduces on their own NCCL stream, as FSDP1's "
               "post-backward stream; false is FSDP2's default, one communicator for "
               "all-gathers and reductions, so they serialise.")
      .default_to(false);
  schema
      .add_key("workload.fsdp.no_sync", ValueType::kBool,
               "With grad_accum > 1, reduce gradients on the last micro-batch only (FSDP's "
               "no_sync()); earlier ones accumulate unsharded gradients.")
      .default_to(false);
  schema
      .add_key("workload.fsdp.version", ValueType::kInt,
               "2: FSDP2 (fully_shard, per-parameter sharding), which copies every all-gather's "
               "output into the parameters and every unit's gradients into the reduce-scatter "
               "input on the compute stream; 1: FSDP1's flat parameter, gathered and reduced in "
               "place.")
      .default_to(int64_t{2})
      .validated_by(fsdp_version_problem, "1 or 2");
  schema
      .add_key("workload.fsdp.reduce_dtype", ValueType::kEnum,
               "Precision of gradient reduce-scatters and HSDP all-reduces: param (the compute "
               "dtype, PyTorch's default) or a dtype; torchtitan reduces in fp32. With "
               "Megatron's DDP (workload.megatron) the main-grad buffer's dtype, fp32 for bf16 "
               "when not given (Megatron-LM forces it; NeMo's grad_sync_dtype may say bf16).")
      .one_of(reduce_dtype_names())
      .default_to(std::string("param"));
  add_optimizer_keys(schema);
  add_host_loop_keys(schema);
  add_megatron_keys(schema);
}

WorkloadSpec read_workload_spec(const sim::ConfigValues& values, int64_t world_size_gpus,
                                int64_t gpus_per_node) {
  CLUSTERSIM_CHECK(world_size_gpus > 0 && gpus_per_node > 0,
                   "read_workload_spec needs a cluster with GPUs");
  sim::DiagnosticSink sink;
  WorkloadSpec w;
  bool model_ok = true;
  try {
    w.model = read_model_spec(values);
  } catch (const sim::ConfigError& e) {
    for (const sim::Diagnostic& d : e.diagnostics()) sink.add(d.where, d.key_path, d.message);
    model_ok = false;
  }
  if (model_ok) check_step_model(values, w.model, sink);
  for (const char* key : {kSeqLen, kLocalBatch}) {
    if (values.has(key)) continue;
    sim::SourceLocation at = values.has("workload.model")
                                 ? values.where("workload.model")
                                 : sim::SourceLocation{values.file(), 0, 0};
    sink.add(at, key, "expected a value (the workload needs it), found nothing");
  }
  sink.throw_if_any();

  w.seq_len = values.get_int(kSeqLen);
  w.local_batch = values.get_int(kLocalBatch);
  w.grad_accum = values.get_int(kGradAccum);
  w.dtype = value_of(kDtypes, values.get_string("workload.dtype"));
  w.strategy = value_of(kStrategies, values.get_string(kStrategy));
  w.tp = values.get_int(kTp);
  w.pp = values.get_int(kPp);
  w.mesh_order = read_mesh_order(values);
  read_pipeline_keys(values, w);
  w.backward_prefetch = value_of(kPrefetches, values.get_string("workload.fsdp.backward_prefetch"));
  w.forward_prefetch = values.get_bool("workload.fsdp.forward_prefetch");
  w.limit_all_gathers = values.get_bool("workload.fsdp.limit_all_gathers");
  w.reshard_after_forward = values.get_bool("workload.fsdp.reshard_after_forward");
  w.separate_reduce_stream = values.get_bool("workload.fsdp.separate_reduce_stream");
  w.no_sync = values.get_bool("workload.fsdp.no_sync");
  w.fsdp_version = static_cast<int>(values.get_int("workload.fsdp.version"));
  const std::string reduce = values.get_string("workload.fsdp.reduce_dtype");
  w.reduce_dtype = reduce == "param" ? w.dtype : value_of(kDtypes, reduce);
  w.activation_checkpointing =
      value_of(kCheckpointing, values.get_string("workload.activation_checkpointing"));
  w.cpu_offload = values.get_bool("workload.cpu_offload");
  w.torch_compile = values.get_bool("workload.torch_compile");
  w.cuda_graphs = values.get_bool("workload.cuda_graphs");
  w.grad_clip = values.get_bool("workload.grad_clip");
  read_host_loop_keys(values, w);
  w.optimizer_implementation = read_optimizer_implementation(values);
  w.flash_attention = values.get_string("workload.attention") != "math";
  w.cudnn_attention = values.get_string("workload.attention") == "cudnn";
  w.rotary_by_matrix = values.get_string("workload.rotary_embedding") == "rotation_matrix";
  w.fused_norm = values.get_string("workload.norm_kernel") == "fused";
  w.cross_entropy = value_of(kCrossEntropyKernels, values.get_string(kCrossEntropy));
  w.float8 = value_of(kFloat8Recipes, values.get_string(kFloat8));
  w.tp_sequence_dim = static_cast<int>(values.get_int("workload.parallelism.tp_sequence_dim"));
  w.async_tp = values.get_bool(kAsyncTp);
  if (w.async_tp && (w.tp == 1 || !w.torch_compile)) {
    sink.add(values.where(kAsyncTp), kAsyncTp,
             "expected false with tp " + str(w.tp) + " and torch_compile " +
                 (w.torch_compile ? "true" : "false") +
                 " (async TP is an Inductor pass over TP's collectives), found true");
  }
  w.world_size = world_size_gpus;
  w.float8_all_gather = values.get_bool(kFloat8AllGather);
  w.float8_precompute_scales = values.get_bool(kFloat8Precompute);
  w.float8_weight_casts = value_of(kWeightCasts, values.get_string(kFloat8WeightCasts));
  if (w.float8_weight_casts == Float8WeightCasts::kOncePerStep &&
      (w.float8 == Float8Recipe::kTensorwise || w.float8 == Float8Recipe::kRowwise)) {
    sink.add(values.where(kFloat8WeightCasts), kFloat8WeightCasts,
             "expected every_micro_batch with recipe " + values.get_string(kFloat8) +
                 " (torchao's Float8Linear casts its weights in every pass; once_per_step is "
                 "Transformer Engine's weight cache, recipes delayed, current, blockwise, mxfp8 "
                 "and nvfp4), found once_per_step");
  }
  if (w.float8_all_gather &&
      (w.float8 != Float8Recipe::kTensorwise || w.fsdp_version != 2 ||
       w.strategy == ShardingStrategy::kNoShard ||
       w.strategy == ShardingStrategy::kDistributedOptimizer || w.cpu_offload)) {
    sink.add(values.where(kFloat8AllGather), kFloat8AllGather,
             "expected false with recipe " + values.get_string(kFloat8) + ", FSDP version " +
                 str(w.fsdp_version) + ", strategy " +
                 std::string(name_of(kStrategies, w.strategy)) + " and cpu_offload " +
                 (w.cpu_offload ? "true" : "false") +
                 " (torchao all-gathers FP8 weights with tensorwise scales through FSDP2's "
                 "sharded parameters on the GPU), found true");
  }
  if (w.float8_precompute_scales && !w.float8_all_gather) {
    sink.add(values.where(kFloat8Precompute), kFloat8Precompute,
             "expected false without fsdp_all_gather (the precomputed scales are those of the "
             "FP8 all-gather), found true");
  }
  if (w.float8 != Float8Recipe::kNone && w.dtype != Dtype::kBf16) {
    sink.add(values.where(kFloat8), kFloat8,
             "expected recipe none with dtype " + std::string(name_of(kDtypes, w.dtype)) +
                 " (torchao's Float8Linear converts a bf16 model), found " +
                 values.get_string(kFloat8));
  }

  read_context_parallel(values, w, sink);
  const std::optional<int64_t> from_global = micro_batches_from_global_batch(values, w, sink);
  if (from_global && w.pp == 1) w.grad_accum = *from_global;
  // Tensor parallelism stays inside a node and must split the model and,
  // with sequence parallelism, the micro-batch's tokens.
  if (gpus_per_node % w.tp != 0 || world_size_gpus % w.tp != 0) {
    sink.add(values.where(kTp), kTp,
             "expected a divisor of the GPUs per node (" + str(gpus_per_node) +
                 "; tensor parallelism stays inside a node's NVLink domain), found " + str(w.tp));
  } else if (model_ok && !tensor_parallel_problem(w.model, w.tp).empty()) {
    sink.add(values.where(kTp), kTp, tensor_parallel_problem(w.model, w.tp));
  } else if (w.seq_len % w.cp == 0 && w.rank_tokens() % w.tp != 0) {
    sink.add(values.where(kTp), kTp,
             "expected a divisor of the tokens of a micro-batch" +
                 std::string(w.cp > 1 ? " on a rank" : "") + " (local_batch " +
                 str(w.local_batch) + " x seq_len " + str(w.seq_len) +
                 (w.cp > 1 ? " / cp " + str(w.cp) : "") + " = " + str(w.rank_tokens()) +
                 "; sequence parallelism splits them), found " + str(w.tp));
  }
  check_pipeline(values, w, model_ok, w.pp > 1 ? from_global : std::nullopt, sink);
  sink.throw_if_any();

  w.dp_size = world_size_gpus / (w.tp * w.pp);
  derive_groups(values, w, sink);
  check_cp_shard_group(values, w, sink);
  read_megatron_keys(values, w, sink);
  sink.throw_if_any();
  return w;
}

}  // namespace clustersim::workloads
