#include "workloads/schedules/schedule_tables.h"

#include <string>
#include <string_view>
#include <vector>

#include "sim/check.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/model_spec.h"
#include "workloads/model/optimizer_step.h"
#include "workloads/model/ring_attention.h"

namespace clustersim::workloads {

std::optional<collectives::CollectiveOp> collective_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::kAllGather:
      return collectives::CollectiveOp::kAllGather;
    case TaskKind::kReduceScatter:
      return collectives::CollectiveOp::kReduceScatter;
    case TaskKind::kAllReduce:
      return collectives::CollectiveOp::kAllReduce;
    default:
      return std::nullopt;
  }
}

std::string_view task_kind_name(TaskKind kind) {
  switch (kind) {
    case TaskKind::kKernel:
      return "kernel";
    case TaskKind::kAllGather:
      return "all_gather";
    case TaskKind::kReduceScatter:
      return "reduce_scatter";
    case TaskKind::kAllReduce:
      return "all_reduce";
    case TaskKind::kFree:
      return "free";
    case TaskKind::kOptimizer:
      return "optimizer";
    case TaskKind::kCopyToDevice:
      return "copy_to_device";
    case TaskKind::kCopyToHost:
      return "copy_to_host";
    case TaskKind::kCpuOptimizer:
      return "cpu_optimizer";
    case TaskKind::kSend:
      return "send";
    case TaskKind::kRecv:
      return "recv";
  }
  return "?";
}

std::string_view stream_name(Stream stream) {
  switch (stream) {
    case Stream::kCompute:
      return "compute";
    case Stream::kComm:
      return "comm";
    case Stream::kReduce:
      return "reduce";
    case Stream::kTp:
      return "tp";
    case Stream::kCopy:
      return "copy";
    case Stream::kCpu:
      return "cpu";
    case Stream::kPpSendActivation:
      return "pp_send";
    case Stream::kPpSendGradient:
      return "pp_send_grad";
    case Stream::kPpRecvActivation:
      return "pp_recv";
    case Stream::kPpRecvGradient:
      return "pp_recv_grad";
    case Stream::kCp:
      return "cp";
    case Stream::kCpSend:
      return "cp_send";
    case Stream::kCpRecv:
      return "cp_recv";
    case Stream::kTpSend:
      return "tp_send";
    case Stream::kTpRecv:
      return "tp_recv";
  }
  return "?";
}

TaskKind tp_collective_before(std::string_view name) {
  return tp_gathers_input(name) ? TaskKind::kAllGather : TaskKind::kKernel;
}

TaskKind tp_collective_after(std::string_view name) {
  if (name == "out_proj" || name == "out_proj.recompute" || name == "down_proj" ||
      name == "gate_up_proj.dgrad" || name == "up_proj.dgrad" || name == "qkv_proj.dgrad") {
    return TaskKind::kReduceScatter;
  }
  return TaskKind::kKernel;
}

std::span<const int32_t> FsdpSchedule::deps_of(int32_t task) const {
  const auto b = static_cast<size_t>(dep_begin[static_cast<size_t>(task)]);
  const auto e = static_cast<size_t>(dep_begin[static_cast<size_t>(task) + 1]);
  return std::span<const int32_t>(deps).subspan(b, e - b);
}

int64_t FsdpSchedule::count(TaskKind kind) const {
  return std::count_if(tasks.begin(), tasks.end(),
                       [kind](const Task& t) { return t.kind == kind; });
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Zero bubble's split of a backward: the weight gradients (GEMMs and eager
// norms' weight-gradient kernels) apart from the rest, each in order.
void split_weight_gradients(const std::vector<Kernel>& table, KernelRange backward,
                            std::vector<int32_t>& input_grad, std::vector<int32_t>& weight_grad) {
  for (int32_t i = backward.begin; i < backward.begin + backward.count; ++i) {
    const std::string_view name = table[static_cast<size_t>(i)].name;
    const bool weight = ends_with(name, ".wgrad") || ends_with(name, ".mul_weight.bwd_weight") ||
                        ends_with(name, ".weight_grad_sum");
    (weight ? weight_grad : input_grad).push_back(i);
  }
}

// One of tp row chunks of GEMM k (m / tp rows: a TP peer's share of the
// tokens): 1 / tp of the FLOPs; A and C shrink, B is read whole.
Kernel row_chunk(const Kernel& k, int64_t tp) {
  Kernel c = k;
  c.m = k.m / tp;
  c.flops = k.flops / static_cast<double>(tp);
  const auto d = [](int64_t x) { return static_cast<double>(x); };
  const double per_element = k.bytes / (d(k.m) * d(k.k) + d(k.k) * d(k.n) + d(k.m) * d(k.n));
  c.bytes = per_element * (d(c.m) * d(k.k) + d(k.k) * d(k.n) + d(c.m) * d(k.n));
  return c;
}

KernelRange append(std::vector<Kernel>& table, const std::vector<Kernel>& ks) {
  KernelRange r{static_cast<int32_t>(table.size()), static_cast<int32_t>(ks.size())};
  table.insert(table.end(), ks.begin(), ks.end());
  return r;
}

}  // namespace

void build_schedule_tables(const WorkloadSpec& spec, const FsdpScheduleOptions& options,
                           FsdpSchedule& s) {
  CLUSTERSIM_CHECK(
      spec.model.layers > 0 && spec.grad_accum > 0 && spec.tp > 0 && spec.shard_group_size > 0,
      "build_fsdp_schedule needs a spec from read_workload_spec()");
  KernelConfig kc;
  kc.seq_len = spec.seq_len;
  kc.micro_batch = spec.local_batch;
  kc.dtype_bytes = dtype_bytes(spec.dtype);
  kc.tp = spec.tp;
  kc.cp = spec.cp;
  kc.cp_model_kv_heads = spec.cp_kv_heads == CpKvHeads::kModel;
  kc.sequence_parallel = spec.tp > 1;
  kc.flash_attention = spec.flash_attention;
  kc.rotary_by_matrix = spec.rotary_by_matrix;
  kc.fused_norm = spec.fused_norm;
  kc.float8 = spec.float8;
  kc.float8_weights_gathered = spec.float8_all_gather || spec.fp8_param_gather;
  kc.cross_entropy = spec.cross_entropy;
  // Transformer Engine's userbuffers (async_tp stands for --tp-comm-overlap
  // under Megatron) gather FP8 inputs under its per-tensor recipes; block
  // scaling's gathers stay bf16 here (float8_kernels.h).
  kc.float8_tp_gather =
      (spec.float8 == Float8Recipe::kDelayed || spec.float8 == Float8Recipe::kCurrent) &&
      spec.async_tp;
  // torchtitan compiles the blocks only: the rest runs eager either way.
  KernelConfig eager = kc;
  eager.fusion = KernelFusion::kEager;
  kc.fusion = spec.torch_compile ? KernelFusion::kCompiled : KernelFusion::kEager;
  if (spec.float8 != Float8Recipe::kNone &&
      spec.float8_weight_casts == Float8WeightCasts::kOncePerStep) {
    KernelConfig first = kc;
    first.float8_weight_casts = Float8WeightCasts::kOncePerStep;
    kc.float8_weight_casts = Float8WeightCasts::kCached;
    s.block_forward_first = append(s.kernels, block_forward(spec.model, first));
    s.block_forward = append(s.kernels, block_forward(spec.model, kc));
  } else {
    s.block_forward = append(s.kernels, block_forward(spec.model, kc));
    s.block_forward_first = s.block_forward;
  }
  s.block_backward = append(s.kernels, block_backward(spec.model, kc));
  s.embedding_forward = append(s.kernels, embedding_forward(spec.model, eager));
  s.embedding_backward = append(s.kernels, embedding_backward(spec.model, eager));
  s.head_forward = append(s.kernels, head_forward(spec.model, eager));
  s.head_backward = append(s.kernels, head_backward(spec.model, eager));
  Recompute recompute = Recompute::kNone;
  switch (spec.activation_checkpointing) {
    case ActivationCheckpointing::kNone:
      break;
    case ActivationCheckpointing::kFull:
      recompute = Recompute::kFull;
      break;
    case ActivationCheckpointing::kSelective:
      recompute = Recompute::kSelectiveOp;
      break;
    case ActivationCheckpointing::kAttentionCore:
      recompute = Recompute::kAttentionCore;
      break;
  }
  const KernelRange again = append(s.kernels, block_recompute(spec.model, kc, recompute));
  for (int32_t i = 0; i < again.count; ++i) s.recompute.push_back(again.begin + i);
  split_weight_gradients(s.kernels, s.block_backward, s.block_input_grad, s.block_weight_grad);
  split_weight_gradients(s.kernels, s.head_backward, s.head_input_grad, s.head_weight_grad);

  const ParameterBreakdown p = parameter_breakdown(spec.model);
  const int64_t elem = dtype_bytes(spec.dtype);
  s.blocks = static_cast<int32_t>(spec.model.layers);
  s.stage = options.stage;
  s.chunks = stage_chunks(spec.model.layers, spec.pp, spec.virtual_stages, options.stage,
                          spec.pipeline_schedule, spec.layers_per_chunk);
  int64_t stage_blocks = 0;
  for (const PipelineStage& c : s.chunks) stage_blocks += c.blocks();
  s.pipeline_bytes = ceil_div(spec.rank_tokens(), spec.tp) * spec.model.hidden * elem;
  if (spec.cp > 1) {
    const int64_t heads = spec.model.heads / spec.tp;
    const int64_t kv_heads =
        spec.cp_kv_heads == CpKvHeads::kModel ? spec.model.kv_heads / spec.tp : heads;
    const RingAttentionShape ring{spec.local_batch,    spec.seq_len / spec.cp, heads, kv_heads,
                                  spec.model.head_dim(), spec.cp, static_cast<double>(elem)};
    s.cp_kv_bytes = ring_kv_bytes(ring);
    s.cp_kv_grad_bytes = ring_kv_grad_bytes(ring);
  }
  if (spec.activation_offload_layers > 0) {
    s.offload_bytes = activation_breakdown(spec).block_stored;
  }
  s.block_bytes = ceil_div(p.block, spec.tp) * elem;
  s.block_gather_bytes = s.block_bytes;
  if (spec.float8_all_gather || spec.fp8_param_gather) {
    const int64_t linear = ceil_div(p.block_linear, spec.tp);
    s.block_gather_bytes = linear + (ceil_div(p.block, spec.tp) - linear) * elem;
  }
  if (spec.float8_all_gather)
    s.float8_weights = spec.model.activation == Activation::kSwiGLU ? 7 : 6;
  // The stage's share of the model: its blocks and what it holds of the root.
  const int64_t root_params = (s.chunks.front().has_embedding ? p.embedding : 0) +
                              (s.chunks.back().has_head ? p.final_norm + p.output_head : 0);
  s.root_bytes = ceil_div(root_params, spec.tp) * elem;
  const int64_t stage_params = spec.pp == 1 ? p.total : stage_blocks * p.block + root_params;
  const int64_t local_params = ceil_div(ceil_div(stage_params, spec.tp), spec.shard_group_size);
  s.local_params = local_params;
  s.optimizer_kernel = static_cast<int32_t>(s.kernels.size());
  // FSDP keeps fp32 sharded parameters and gradients; Megatron's optimizer
  // (its DDP's or Megatron-FSDP's) reads the main-grad shard in its dtype and
  // writes the bf16 parameters its all-gather (or DDP's next forward) uses.
  const OptimizerPrecision precision =
      spec.megatron_core()
          ? OptimizerPrecision{dtype_bytes(spec.reduce_dtype), elem, spec.optimizer_state_bytes}
          : OptimizerPrecision{4, 0};
  s.kernels.push_back(adamw_step(local_params, precision, spec.optimizer_implementation));
  if (spec.grad_clip && !spec.cpu_offload) {
    // _foreach_norm over the fp32 gradient shards, then _foreach_mul_ by the clip factor.
    const auto n = static_cast<double>(local_params);
    s.kernels.push_back(pointwise("grad_norm", KernelClass::kOptimizer, 2 * n, 4 * n));
    s.grad_norm_kernel = static_cast<int32_t>(s.kernels.size() - 1);
    s.kernels.push_back(pointwise("grad_clip", KernelClass::kOptimizer, n, 8 * n));
    s.grad_clip_kernel = static_cast<int32_t>(s.kernels.size() - 1);
  }
  // Megatron-FSDP gathers into the parameters' persistent buffer and its
  // GEMMs write their weight gradients into the main-grad bucket (Transformer
  // Engine's gradient accumulation fusion): no copy either way.
  if (spec.fsdp_version == 2 && spec.strategy != ShardingStrategy::kNoShard &&
      !spec.megatron_core()) {
    const double reduce_elem = static_cast<double>(dtype_bytes(spec.reduce_dtype));
    const auto add_kernel = [&s](std::string_view name, double bytes) {
      s.kernels.push_back(pointwise(name, KernelClass::kElementwise, 0, bytes));
      return static_cast<int32_t>(s.kernels.size() - 1);
    };
    const auto block = static_cast<double>(s.block_gather_bytes);
    const auto root = static_cast<double>(s.root_bytes);
    const auto params = [&](double bytes) { return bytes / static_cast<double>(elem); };
    s.block_copy_out = add_kernel("fsdp.all_gather_copy_out", 2 * block);
    s.root_copy_out = add_kernel("fsdp.all_gather_copy_out", 2 * root);
    s.block_reduce_copy_in =
        add_kernel("fsdp.reduce_scatter_copy_in", block + params(block) * reduce_elem);
    s.root_reduce_copy_in =
        add_kernel("fsdp.reduce_scatter_copy_in", root + params(root) * reduce_elem);
    const bool accumulates = (options.no_sync || spec.pp > 1) && spec.grad_accum > 1;
    if (accumulates && spec.reduce_dtype != spec.dtype &&
        dtype_bytes(spec.reduce_dtype) != elem) {
      // Unsharded gradients in the compute dtype: the block's and the root's bf16 bytes.
      const auto block_grads = static_cast<double>(s.block_bytes);
      s.block_grad_cast = add_kernel("fsdp.grad_to_reduce_dtype",
                                     block_grads + params(block_grads) * reduce_elem);
      s.root_grad_cast =
          add_kernel("fsdp.grad_to_reduce_dtype", root + params(root) * reduce_elem);
      s.block_grad_accumulate = add_kernel("fsdp.accumulate_grad",
                                           block_grads + 2 * params(block_grads) * reduce_elem);
      s.root_grad_accumulate =
          add_kernel("fsdp.accumulate_grad", root + 2 * params(root) * reduce_elem);
    }
  }

  if (spec.tp > 1 && spec.tp_sequence_dim == 1) {
    // The full activation, T x hidden, read and written once per TP collective.
    const double activation =
        static_cast<double>(spec.rank_tokens() * spec.model.hidden * dtype_bytes(spec.dtype));
    s.kernels.push_back(pointwise("tp.sequence_cat", KernelClass::kElementwise, 0, 2 * activation));
    s.tp_cat_copy = static_cast<int32_t>(s.kernels.size() - 1);
  }

  if (spec.async_tp && spec.tp > 1) {
    // Async TP (fsdp_schedule.h): each GEMM beside a TP collective also as a
    // row chunk, and the sum of the reduce-scatter's partial chunks.
    const size_t table = s.kernels.size();
    s.tp_chunk.assign(table, kNoKernel);
    for (size_t i = 0; i < table; ++i) {
      const Kernel k = s.kernels[i];
      if (k.cls != KernelClass::kGemm || (tp_collective_before(k.name) == TaskKind::kKernel &&
                                          tp_collective_after(k.name) == TaskKind::kKernel)) {
        continue;
      }
      s.kernels.push_back(row_chunk(k, spec.tp));
      s.tp_chunk[i] = static_cast<int32_t>(s.kernels.size() - 1);
    }
    s.tp_chunk_bytes = spec.rank_tokens() / spec.tp * spec.model.hidden * elem;
    s.tp_gather_chunk_bytes = kc.float8_tp_gather ? s.tp_chunk_bytes / elem : s.tp_chunk_bytes;
    const double chunk = static_cast<double>(s.tp_chunk_bytes);
    const auto tp = static_cast<double>(spec.tp);
    s.kernels.push_back(pointwise("tp.reduce_partials", KernelClass::kElementwise,
                                  (tp - 1) * chunk / static_cast<double>(elem),
                                  (tp + 1) * chunk));
    s.tp_reduce_partials = static_cast<int32_t>(s.kernels.size() - 1);
  }

  if (spec.float8_precompute_scales) {
    // torch._foreach_norm(ord=inf) over the local fp32 shards of the linear weights.
    const double local_linear = static_cast<double>(ceil_div(
        ceil_div(stage_blocks * p.block_linear, spec.tp), spec.shard_group_size));
    s.kernels.push_back(pointwise("float8.precompute_amax", KernelClass::kOptimizer,
                                  local_linear, 4 * local_linear));
    s.float8_amax_kernel = static_cast<int32_t>(s.kernels.size() - 1);
  }
}

}  // namespace clustersim::workloads
