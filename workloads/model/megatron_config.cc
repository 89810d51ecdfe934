#include "workloads/model/megatron_config.h"

#include <algorithm>
#include <string>
#include <variant>

#include "config/named_choices.h"

namespace clustersim::workloads {

namespace {

const char* const kDdp = "workload.megatron.ddp";
const char* const kOverlapGrad = "workload.megatron.overlap_grad_reduce";
const char* const kOverlapParam = "workload.megatron.overlap_param_gather";
const char* const kBucket = "workload.megatron.bucket_size";
const char* const kRemainders = "workload.megatron.store_param_remainders";
const char* const kFp8ParamGather = "workload.megatron.fp8_param_gather";
const char* const kOptimizerDtype = "workload.megatron.optimizer_dtype";
const char* const kFsdp = "workload.megatron.fsdp";
const char* const kDoubleBuffer = "workload.megatron.fsdp_double_buffer";
const char* const kCheckpointing = "workload.activation_checkpointing";
const char* const kOffloadLayers = "workload.megatron.cpu_offloading_num_layers";
const char* const kReduceDtype = "workload.fsdp.reduce_dtype";
const char* const kGradReduction = "workload.pipeline.grad_reduction";
const char* const kSequenceDim = "workload.parallelism.tp_sequence_dim";

// FSDP's own options, which say nothing about Megatron's DDP.
constexpr const char* kFsdpOnly[] = {"workload.fsdp.backward_prefetch",
                                     "workload.fsdp.forward_prefetch",
                                     "workload.fsdp.limit_all_gathers",
                                     "workload.fsdp.reshard_after_forward",
                                     "workload.fsdp.separate_reduce_stream",
                                     "workload.fsdp.no_sync",
                                     "workload.fsdp.version"};

std::string str(int64_t x) { return std::to_string(x); }

// Written in the scenario (or by --set), not the schema's default.
bool given(const sim::ConfigValues& values, const char* key) {
  return values.has(key) && !values.entry(key).is_default;
}

std::string text_of(const sim::ConfigValues& values, const char* key) {
  const sim::ConfigValue& v = values.entry(key).value;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&v)) return str(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return "a value";
}

// --cpu-offloading-num-layers, with the limits Megatron-Core's
// TransformerConfig.__post_init__ puts on it (fewer than the model's layers,
// no pipeline parallelism, no recomputation).
void read_activation_offload(const sim::ConfigValues& values, WorkloadSpec& w,
                             sim::DiagnosticSink& sink) {
  if (!given(values, kOffloadLayers)) return;
  const int64_t n = values.get_int(kOffloadLayers);
  const auto fail = [&](const std::string& expected) {
    sink.add(values.where(kOffloadLayers), kOffloadLayers,
             "expected " + expected + ", found " + str(n));
  };
  if (n >= w.model.layers) {
    fail("fewer than the model's " + str(w.model.layers) +
         " layers (Megatron-Core: \"CPU offloading can be done only for layers less than " +
         str(w.model.layers) + "\")");
  } else if (n > 0 && w.pp > 1) {
    fail("0 with pp " + str(w.pp) +
         " (Megatron-Core: \"no support for Pipeline parallelism with CPU offloading\")");
  } else if (n > 0 && w.activation_checkpointing != ActivationCheckpointing::kNone) {
    fail(std::string("0 with activation_checkpointing ") +
         std::string(activation_checkpointing_name(w.activation_checkpointing)) +
         " (Megatron-Core: \"CPU offloading does not work when activation recomputation is "
         "enabled\")");
  } else {
    w.activation_offload_layers = static_cast<int32_t>(n);
  }
}

// The checks and settings every way Megatron-Core runs the model shares:
// its activation layout, its fp32 main gradients, no offload of the training
// state (activations may be: read_activation_offload).
void read_megatron_model(const sim::ConfigValues& values, const std::string& mode, WorkloadSpec& w,
                         sim::DiagnosticSink& sink) {
  read_activation_offload(values, w, sink);
  if (w.cpu_offload) {
    sink.add(values.where("workload.cpu_offload"), "workload.cpu_offload",
             "expected false with " + mode +
                 " (FSDP's CPUOffload; Megatron-Core keeps parameters, main gradients and "
                 "optimizer states on the GPU), found true");
  }
  if (w.activation_checkpointing == ActivationCheckpointing::kSelective) {
    sink.add(values.where(kCheckpointing), kCheckpointing,
             "expected none, full or attention_core with " + mode +
                 " (selective is torchtitan's op-level policy; Megatron-Core's selective "
                 "recompute is attention_core), found selective");
  }
  // Megatron's activations are [seq, batch, hidden]: no copies around TP's collectives.
  if (given(values, kSequenceDim) && w.tp_sequence_dim != 0) {
    sink.add(values.where(kSequenceDim), kSequenceDim,
             "expected 0 with " + mode +
                 " (Megatron-Core's activations are [seq, batch, hidden]), found " +
                 str(w.tp_sequence_dim));
  }
  w.tp_sequence_dim = 0;
  // Megatron-LM accumulates and reduces bf16 training's gradients in fp32
  // (arguments.py: accumulate_allreduce_grads_in_fp32 forced with --bf16;
  // Megatron-FSDP's grad_reduce_in_fp32 is the same flag).
  if (!given(values, kReduceDtype) && w.dtype == Dtype::kBf16) w.reduce_dtype = Dtype::kFp32;
}

// PyTorch FSDP's own options, which the Megatron-Core mode decides.
void reject_fsdp_options(const sim::ConfigValues& values, const std::string& mode,
                         const std::string& why, sim::DiagnosticSink& sink) {
  for (const char* key : kFsdpOnly) {
    if (!given(values, key)) continue;
    sink.add(values.where(key), key,
             "expected no value with " + mode + " (a PyTorch FSDP option; " + why + "), found " +
                 text_of(values, key));
  }
}

// Megatron-FSDP (megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py,
// param_and_grad_buffer.py) with data_parallel_sharding_strategy
// optim_grads_params, as the header describes it.
void read_megatron_fsdp(const sim::ConfigValues& values, WorkloadSpec& w,
                        sim::DiagnosticSink& sink) {
  const std::string strategy(sharding_strategy_name(w.strategy));
  if (w.strategy != ShardingStrategy::kFullShard) {
    sink.add(values.where(kFsdp), kFsdp,
             "expected false with strategy " + strategy +
                 " (Megatron-FSDP is modelled with its optim_grads_params sharding: strategy "
                 "FULL_SHARD; its optim sharding is DISTRIBUTED_OPTIMIZER; optim_grads and its "
                 "hybrid outer data-parallel sharding are not modelled), found true");
  }
  if (w.pp > 1) {
    sink.add(values.where(kFsdp), kFsdp,
             "expected false with pp " + str(w.pp) +
                 " (Megatron-FSDP with pipeline stages is not modelled), found true");
  }
  if (w.float8_all_gather) {
    sink.add(values.where("workload.float8.fsdp_all_gather"), "workload.float8.fsdp_all_gather",
             "expected false with workload.megatron.fsdp (torchao's FP8 all-gather is PyTorch "
             "FSDP2's), found true");
  }
  // Megatron-FSDP asserts both overlaps when it shards gradients and
  // parameters (megatron_fsdp.py sets them for optim_grads_params).
  for (const char* key : {kOverlapGrad, kOverlapParam}) {
    if (values.get_bool(key)) continue;
    sink.add(values.where(key), key,
             "expected true or no value with workload.megatron.fsdp (optim_grads_params "
             "always overlaps its all-gathers and reduce-scatters), found false");
  }
  for (const char* key : {kDdp, kBucket, kRemainders, kFp8ParamGather, kOptimizerDtype}) {
    if (!given(values, key)) continue;
    sink.add(values.where(key), key,
             "expected no value with workload.megatron.fsdp (a key of Megatron-Core's DDP and "
             "distributed optimizer; Megatron-FSDP's buckets are its units), found " +
                 text_of(values, key));
  }
  reject_fsdp_options(values, "workload.megatron.fsdp",
                      "Megatron-FSDP prefetches the next unit's all-gather in forward and "
                      "backward, reduce-scatters every micro-batch on its own stream, and "
                      "workload.megatron.fsdp_double_buffer limits its unit buffers",
                      sink);
  read_megatron_model(values, "workload.megatron.fsdp", w, sink);
  w.megatron_fsdp = true;
  w.forward_prefetch = true;
  w.backward_prefetch = BackwardPrefetch::kBackwardPre;
  w.reshard_after_forward = true;
  w.separate_reduce_stream = true;
  w.no_sync = false;
  w.limit_all_gathers = values.get_bool(kDoubleBuffer);
}

}  // namespace

int64_t megatron_default_bucket_params(int64_t dp) {
  return std::max<int64_t>(40'000'000, 1'000'000 * dp);
}

void add_megatron_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section(
      "workload.megatron",
      "Megatron-Core's data parallelism (megatron/core/distributed): its "
      "DistributedDataParallel (strategy DISTRIBUTED_OPTIMIZER, or NO_SHARD with ddp true: "
      "parameters whole on every rank, gradients accumulated in a contiguous main-grad "
      "buffer, workload.fsdp.reduce_dtype, fp32 for bf16 unless given, as Megatron-LM "
      "forces, and reduced once a step in buckets), or Megatron-FSDP (FULL_SHARD with fsdp "
      "true); activations as Megatron lays them out (docs/run.md).");
  schema
      .add_key(kDdp, ValueType::kBool,
               "NO_SHARD as plain Megatron DDP (no distributed optimizer): bf16 parameters, the "
               "main-grad buffer and fp32 master weights with Adam's moments on every rank, 18 "
               "bytes per parameter with fp32 gradients; each bucket all-reduced. "
               "DISTRIBUTED_OPTIMIZER is Megatron's DDP already (true or omitted).")
      .default_to(false);
  schema
      .add_key(kOverlapGrad, ValueType::kBool,
               "--overlap-grad-reduce: each bucket reduced as the last micro-batch's backward "
               "finishes its gradients, overlapped with the rest of the backward; false: one "
               "bucket per model chunk, reduced after the backward. With pp > 1 it sets "
               "workload.pipeline.grad_reduction (during_last_backward when true).")
      .default_to(true);
  schema
      .add_key(kOverlapParam, ValueType::kBool,
               "DISTRIBUTED_OPTIMIZER's --overlap-param-gather: the updated parameters "
               "all-gathered bucket by bucket in the next forward (simulated at the step's "
               "start: the first bucket's all-gather exposed, each later one started when the "
               "bucket before it is first used); false: all buckets gathered after the "
               "optimizer step.")
      .default_to(true);
  schema
      .add_key(kBucket, ValueType::kInt,
               "Parameters per gradient bucket (Megatron's --ddp-bucket-size); default "
               "max(40,000,000, 1,000,000 x dp), dp without context parallelism, as "
               "Megatron-Core's distributed_data_parallel_config.py sets it. Buckets close at "
               "block boundaries here (megatron_config.h).")
      .positive();
  schema
      .add_key(kRemainders, ValueType::kBool,
               "DISTRIBUTED_OPTIMIZER with bf16: each fp32 master weight kept as the bf16 "
               "parameter plus its low 16 bits, 10 bytes of optimizer state per parameter (with "
               "Adam's moments) instead of 12: NeMo's distributed_fused_adam (Apex's "
               "DistributedFusedAdam, store_param_remainders), Megatron-Core's "
               "--use-precision-aware-optimizer (Transformer Engine's FusedAdam).")
      .default_to(false);
  schema
      .add_key(kFp8ParamGather, ValueType::kBool,
               "DISTRIBUTED_OPTIMIZER with FP8 (Megatron-Core's --fp8-param-gather, NeMo's "
               "fp8_params): the blocks' linear weights are Transformer Engine FP8 tensors, "
               "all-gathered in FP8 (half their bytes) and never cast in the forward; each "
               "step makes their transposed layout once. Needs a Transformer Engine recipe "
               "(float8.recipe delayed, current or blockwise).")
      .default_to(false);
  schema
      .add_key(kOptimizerDtype, ValueType::kEnum,
               "DISTRIBUTED_OPTIMIZER: the dtype of its state: fp32 (fp32 master weights and "
               "Adam's two moments, 12 bytes per parameter over the data-parallel ranks), or "
               "bf16 (Apex's DistributedFusedAdam with dtype bf16, NeMo's optim.dtype: the "
               "moments in bf16 and the bf16 parameters as master weights, 4 bytes; 6 with "
               "fp8_param_gather, whose FP8 weights need a bf16 master copy, as NeMo's "
               "store_params rule keeps one). The step reads and writes them at that size.")
      .one_of({"fp32", "bf16"})
      .default_to(std::string("fp32"));
  schema
      .add_key(kFsdp, ValueType::kBool,
               "Megatron-FSDP (--use-megatron-fsdp with --data-parallel-sharding-strategy "
               "optim_grads_params; strategy FULL_SHARD, pp 1): every transformer layer a unit, "
               "all-gathered into a persistent buffer before its forward and again before its "
               "backward (the next unit prefetched), its gradients written into the unit's "
               "main-grad bucket (workload.fsdp.reduce_dtype, fp32 for bf16 unless given) and "
               "reduce-scattered every micro-batch on a stream of their own; no copy around "
               "either collective; fp32 main weights, Adam's moments and the main grads "
               "sharded over the data-parallel ranks.")
      .default_to(false);
  schema
      .add_key(kDoubleBuffer, ValueType::kBool,
               "Megatron-FSDP's --fsdp-double-buffer: two persistent unit buffers, so an "
               "all-gather waits for the buffer two units back to be released; false: buffers "
               "from the caching allocator, the prefetch not held back.")
      .default_to(false);
  schema
      .add_key(
          kOffloadLayers, ValueType::kInt,
          "Megatron-Core's --cpu-offloading-num-layers with activations only (Megatron-Bridge's "
          "cpu_offloading_num_layers): Transformer Engine copies the saved activations of "
          "the first n layers to host memory after each one's forward, on one copy stream "
          "over the host link, and back before its backward; the forward of layer L - n + i "
          "waits for layer i's copy, and layer i's copy back starts when the backward reaches "
          "layer L - 1 - n + i, so at most L - n layers' activations are on the GPU. Fewer "
          "than the model's L layers, pp 1, no activation checkpointing.")
      .non_negative();
}

bool reads_as_megatron(const sim::ConfigValues& values, ShardingStrategy strategy) {
  return strategy == ShardingStrategy::kDistributedOptimizer ||
         (strategy == ShardingStrategy::kNoShard && values.get_bool(kDdp));
}

void read_megatron_keys(const sim::ConfigValues& values, WorkloadSpec& w,
                        sim::DiagnosticSink& sink) {
  if (values.get_bool(kFsdp)) {
    read_megatron_fsdp(values, w, sink);
    return;
  }
  if (given(values, kDoubleBuffer)) {
    sink.add(values.where(kDoubleBuffer), kDoubleBuffer,
             "expected no value without workload.megatron.fsdp (the double buffer is "
             "Megatron-FSDP's), found " +
                 text_of(values, kDoubleBuffer));
  }
  const bool distributed = w.strategy == ShardingStrategy::kDistributedOptimizer;
  const std::string strategy(sharding_strategy_name(w.strategy));
  w.megatron = reads_as_megatron(values, w.strategy);
  if (!w.megatron) {
    if (values.get_bool(kDdp)) {
      sink.add(values.where(kDdp), kDdp,
               "expected false with strategy " + strategy +
                   " (Megatron-Core's DDP replicates the parameters: NO_SHARD, or "
                   "DISTRIBUTED_OPTIMIZER for its sharded optimizer), found true");
    }
    for (const char* key : {kOverlapGrad, kOverlapParam, kBucket, kRemainders, kFp8ParamGather,
                            kOptimizerDtype, kOffloadLayers}) {
      if (!given(values, key)) continue;
      sink.add(values.where(key), key,
               "expected no value with strategy " + strategy +
                   " (workload.megatron configures Megatron-Core's DDP: strategy "
                   "DISTRIBUTED_OPTIMIZER, or NO_SHARD with ddp true; or Megatron-FSDP: "
                   "FULL_SHARD with fsdp true), found " +
                   text_of(values, key));
    }
    if (w.activation_checkpointing == ActivationCheckpointing::kAttentionCore) {
      sink.add(values.where(kCheckpointing), kCheckpointing,
               "expected none, full or selective with strategy " + strategy +
                   " (attention_core is Megatron-Core's selective recompute, in its activation "
                   "layout: strategy DISTRIBUTED_OPTIMIZER, NO_SHARD with "
                   "workload.megatron.ddp, or FULL_SHARD with workload.megatron.fsdp), found "
                   "attention_core");
    }
    return;
  }

  if (distributed && given(values, kDdp) && !values.get_bool(kDdp)) {
    sink.add(values.where(kDdp), kDdp,
             "expected true or no value with DISTRIBUTED_OPTIMIZER (the distributed optimizer "
             "runs in Megatron-Core's DDP), found false");
  }
  w.overlap_grad_reduce = values.get_bool(kOverlapGrad);
  w.overlap_param_gather = values.get_bool(kOverlapParam);
  if (!distributed && given(values, kOverlapParam)) {
    sink.add(values.where(kOverlapParam), kOverlapParam,
             "expected no value with NO_SHARD (plain DDP all-reduces the gradients: every rank "
             "updates its own parameters, none are gathered), found " +
                 text_of(values, kOverlapParam));
  }
  w.bucket_params = values.has(kBucket) ? values.get_int(kBucket)
                                        : megatron_default_bucket_params(w.batch_replicas());
  w.fp8_param_gather = values.get_bool(kFp8ParamGather);
  // MXFP8 and NVFP4 parameters are not gathered in their format here: not
  // modelled, so refused rather than priced as FP8 tensors they are not.
  const bool gathers_fp8 = w.float8 == Float8Recipe::kDelayed ||
                           w.float8 == Float8Recipe::kCurrent ||
                           w.float8 == Float8Recipe::kBlockwise;
  if (w.fp8_param_gather && (!distributed || !gathers_fp8)) {
    sink.add(values.where(kFp8ParamGather), kFp8ParamGather,
             "expected false with " + strategy + " and float8.recipe " +
                 std::string(values.get_string("workload.float8.recipe")) +
                 " (the distributed optimizer gathers Transformer Engine's FP8 weights: "
                 "DISTRIBUTED_OPTIMIZER and recipe delayed, current or blockwise; gathering "
                 "MXFP8 or NVFP4 weights is not modelled), found true");
  }
  w.optimizer_state_bytes = values.get_string(kOptimizerDtype) == "bf16" ? 2 : 4;
  if (w.optimizer_state_bytes != 4 && !distributed) {
    sink.add(values.where(kOptimizerDtype), kOptimizerDtype,
             "expected fp32 with " + strategy +
                 " (16-bit state is the distributed optimizer's), found bf16");
  }
  w.store_param_remainders = values.get_bool(kRemainders);
  if (w.store_param_remainders &&
      (!distributed || w.dtype != Dtype::kBf16 || w.optimizer_state_bytes != 4)) {
    sink.add(values.where(kRemainders), kRemainders,
             "expected false with " + strategy + ", dtype " + std::string(dtype_name(w.dtype)) +
                 " and optimizer_dtype " + values.get_string(kOptimizerDtype) +
                 " (the remainders complete bf16 parameters to the distributed optimizer's fp32 "
                 "master weights), found true");
  }

  const std::string mode = strategy + (distributed ? "" : " and workload.megatron.ddp");
  reject_fsdp_options(values, mode,
                      "Megatron-Core's DDP accumulates every micro-batch's gradients and reduces "
                      "them once, in buckets: workload.megatron",
                      sink);
  read_megatron_model(values, mode, w, sink);
  if (w.pp > 1) {
    const std::string wanted =
        w.overlap_grad_reduce ? "during_last_backward" : "after_last_backward";
    if (given(values, kGradReduction) && values.get_string(kGradReduction) != wanted) {
      sink.add(values.where(kGradReduction), kGradReduction,
               "expected " + wanted + " or no value with " + strategy + " and " + kOverlapGrad +
                   " " + (w.overlap_grad_reduce ? "true" : "false") +
                   " (Megatron's overlap decides when a stage reduces), found " +
                   values.get_string(kGradReduction));
    }
    w.reduce_during_last_backward = w.overlap_grad_reduce;
  }
}

}  // namespace clustersim::workloads
