#include "workloads/model/memory_model.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/check.h"
#include "workloads/model/float8_kernels.h"

namespace clustersim::workloads {

namespace {

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

struct RankParams {
  int64_t block = 0;  // one block on one TP rank
  int64_t root = 0;   // embedding, output head, final norm on one TP rank
  int64_t model = 0;  // layers * block + root
};

RankParams rank_params(const WorkloadSpec& w, const PipelineStage& stage) {
  CLUSTERSIM_CHECK(w.tp >= 1 && w.shard_group_size >= 1,
                   "memory_breakdown needs a WorkloadSpec from read_workload_spec()");
  const ParameterBreakdown p = parameter_breakdown(w.model);
  RankParams r;
  r.block = ceil_div(p.block, w.tp);
  if (w.pp == 1) {
    r.root = ceil_div(p.embedding + p.output_head, w.tp) + p.final_norm;
  } else {
    r.root = (stage.has_embedding ? ceil_div(p.embedding, w.tp) : 0) +
             (stage.has_head ? ceil_div(p.output_head, w.tp) + p.final_norm : 0);
  }
  r.model = stage.blocks() * r.block + r.root;
  return r;
}

// Per-rank widths and byte sizes of the header's activation notation.
struct ActivationShapes {
  int64_t c = 0;       // bytes per element of the compute dtype
  int64_t tokens = 0;  // T = s * b
  int64_t sp = 0;      // Tt = T /^ t, sequence-parallel tokens
  int64_t hidden = 0;  // H
  int64_t q = 0;       // Q = heads / t * head_dim
  int64_t kv = 0;      // K = kv_heads / t * head_dim
  int64_t ffn = 0;     // F = ffn_hidden / t
  int64_t vocab = 0;   // Vt = V /^ t
  int64_t r = 0;       // norm statistics per token
  int64_t stats = 0;   // A: log-sum-exp or softmax probabilities
  // e and e': the Python RMSNorm's bytes per token beyond H*c + r, in the
  // blocks (eager only) and in the final norm (eager always).
  int64_t block_norm_extra = 0;
  int64_t head_norm_extra = 0;
};

ActivationShapes activation_shapes(const WorkloadSpec& w, const MemoryOptions& options) {
  CLUSTERSIM_CHECK(w.tp >= 1 && w.seq_len > 0 && w.local_batch > 0,
                   "activation bytes need a WorkloadSpec from read_workload_spec()");
  const ModelSpec& m = w.model;
  ActivationShapes a;
  a.c = dtype_bytes(w.dtype);
  a.tokens = w.rank_tokens();
  a.sp = ceil_div(a.tokens, w.tp);
  a.hidden = m.hidden;
  const int64_t heads = m.heads / w.tp;
  a.q = heads * m.head_dim();
  a.kv = m.kv_heads / w.tp * m.head_dim();
  a.ffn = m.ffn_hidden / w.tp;
  a.vocab = ceil_div(m.vocab, w.tp);
  a.r = m.norm == NormKind::kRmsNorm ? 4 : 8;
  // The Python RMSNorm keeps its input's fp32 copy (4 H) and the normalised
  // tensor (c H) where the fused one keeps the input (c H): 4 H more per token.
  // Megatron runs Transformer Engine's fused norms: nothing extra.
  const bool python_norm = m.norm == NormKind::kRmsNorm && !w.fused_norm && !w.megatron_core();
  a.head_norm_extra = python_norm ? 4 * a.hidden : 0;
  a.block_norm_extra = python_norm && !w.torch_compile ? 4 * a.hidden : 0;
  a.stats = options.flash_attention && w.flash_attention
                ? a.tokens * heads * 4
                : w.local_batch * heads * w.seq_len * w.seq_len * a.c;
  return a;
}

// Megatron-Core's block with Transformer Engine (the header's Megatron layout).
int64_t megatron_block_none_bytes(const WorkloadSpec& w, const ActivationShapes& a) {
  // What each linear keeps of its input: bf16, or under a float8 recipe its
  // quantized columnwise layout (the header).
  const double fp8 = saved_input_cast_bytes(w.float8);
  const double kept = fp8 > 0 ? fp8 : static_cast<double>(a.c);
  const auto bytes = [](double x) { return static_cast<int64_t>(std::ceil(x)); };
  const int64_t norms =
      2 * a.sp * (a.hidden * a.c + a.r) + 2 * bytes(kept * static_cast<double>(a.sp * a.hidden));
  // linear_proj keeps an FP8 copy of the attention output the core keeps in bf16.
  const int64_t attention = a.tokens * (2 * a.q + 2 * a.kv) * a.c + a.stats +
                            bytes(fp8 * static_cast<double>(a.tokens * a.q));
  // The activation function's input (2F wide with SwiGLU) and fc2's input.
  const int64_t act_input = (w.model.activation == Activation::kSwiGLU ? 2 : 1) * a.ffn * a.c;
  return norms + attention + a.tokens * act_input +
         bytes(kept * static_cast<double>(a.tokens * a.ffn));
}

int64_t block_none_bytes(const WorkloadSpec& w, const ActivationShapes& a) {
  if (w.megatron_core()) return megatron_block_none_bytes(w, a);
  const int64_t norms = 2 * a.sp * (a.hidden * a.c + a.r + a.block_norm_extra);
  const int64_t projection_inputs = 2 * a.tokens * a.hidden * a.c;
  const int64_t attention = 4 * a.tokens * a.q * a.c + a.stats;
  const int64_t mlp_tensors = w.model.activation == Activation::kSwiGLU ? 4 : 2;
  return norms + projection_inputs + attention + mlp_tensors * a.tokens * a.ffn * a.c;
}

struct BlockTerms {
  int64_t none = 0;
  int64_t stored = 0;
  int64_t recompute = 0;
};

BlockTerms block_terms(const WorkloadSpec& w, const ActivationShapes& a) {
  const ModelSpec& m = w.model;
  BlockTerms b;
  b.none = block_none_bytes(w, a);
  const int64_t input = a.sp * a.hidden * a.c;
  switch (w.activation_checkpointing) {
    case ActivationCheckpointing::kNone:
      b.stored = b.none;
      break;
    case ActivationCheckpointing::kFull:
      b.stored = input;
      b.recompute = b.none - input;
      break;
    case ActivationCheckpointing::kAttentionCore:
      // The core's probabilities (or flash's statistics) are not kept; its
      // inputs q, k, v are the checkpoint's, its output linear_proj's.
      // Re-run, it makes them and a second output, alive in its backward.
      b.stored = b.none - a.stats;
      b.recompute = a.stats + a.tokens * a.q * a.c;
      break;
    case ActivationCheckpointing::kSelective: {
      const bool swiglu = m.activation == Activation::kSwiGLU;
      const int64_t attention_out = a.tokens * a.q * a.c + a.stats;
      // Odd-numbered aten.mm outputs: wq, wv, w1 / up, w2 (SwiGLU's 7th mm).
      const int64_t mm_saved =
          m.linear_bias ? 0 : a.tokens * (a.q + a.kv + a.ffn + (swiglu ? a.hidden : 0)) * a.c;
      const int64_t reduce_scatter = w.tp > 1 ? 2 * input : 0;
      b.stored = input + mm_saved + attention_out + reduce_scatter;
      int64_t shared = input + attention_out;
      if (!m.linear_bias) {
        shared += a.tokens * a.ffn * a.c;                             // w1 / up output
        if (m.kv_heads == m.heads) shared += a.tokens * a.kv * a.c;   // v is wv's output
        if (m.learned_positions > 0) shared += a.tokens * a.q * a.c;  // q is wq's output
      }
      b.recompute = b.none - shared;
      break;
    }
  }
  return b;
}

}  // namespace

int64_t layer_activation_bytes(const WorkloadSpec& w, const MemoryOptions& options) {
  return block_none_bytes(w, activation_shapes(w, options));
}

ActivationBreakdown activation_breakdown(const WorkloadSpec& w, const MemoryOptions& options) {
  const ActivationShapes a = activation_shapes(w, options);
  const BlockTerms b = block_terms(w, a);
  ActivationBreakdown r;
  r.block_none = b.none;
  r.block_stored = b.stored;
  r.block_recompute = b.recompute;
  // Bytes per logit at the loss's peak: aten's fused log_softmax backward,
  // loss_parallel's decomposed one on vocab-sharded logits, or Megatron's
  // vocab-parallel cross entropy (header).
  const int64_t loss_bytes = w.megatron_core() ? 6 : w.tp > 1 ? 16 : 12;
  // The head's input: gathered (torchtitan), or Megatron's sequence-parallel
  // output layer, which keeps its local input and gathers it again.
  const int64_t head_input = (w.megatron_core() ? a.sp : a.tokens) * a.hidden * a.c;
  r.head = a.sp * (a.hidden * a.c + a.r + a.head_norm_extra) + head_input +
           loss_bytes * a.tokens * a.vocab;
  // Offloaded activations (Megatron-Core's --cpu-offloading-num-layers):
  // Transformer Engine's OffloadSynchronizer keeps at most L - n layers' on
  // the GPU (transformer_engine/pytorch/cpu_offload.py, _default_offload_sync_init).
  r.offloaded = w.activation_offload_layers * b.stored;
  r.layers = (w.model.layers - w.activation_offload_layers) * b.stored;
  if (w.cp > 1) {
    // The width of the K and V the ring moves, and one rank's K and V.
    const int64_t width = w.cp_kv_heads == CpKvHeads::kModel ? a.kv : a.q;
    const int64_t kv = 2 * a.tokens * width * a.c;
    r.ring = (w.cp_rotate == CpRotateMethod::kAllGather ? w.cp : 2) * kv + 4 * a.tokens * a.q +
             24 * a.tokens * width;
  }
  const int64_t block_backward = b.recompute + a.sp * a.hidden * a.c + r.ring;
  r.total = r.layers + std::max(r.head, block_backward);
  return r;
}

int64_t activation_bytes(const WorkloadSpec& w, const MemoryOptions& options) {
  return activation_breakdown(w, options).total;
}

MemoryBreakdown stage_memory_breakdown(const WorkloadSpec& w, int64_t stage_index,
                                       const MemoryOptions& options) {
  // What the stage holds over all its chunks: their blocks and root parts.
  const std::vector<PipelineStage> chunks =
      stage_chunks(w.model.layers, w.pp, w.virtual_stages, stage_index, w.pipeline_schedule,
                   w.layers_per_chunk);
  PipelineStage stage;
  for (const PipelineStage& chunk : chunks) stage.end_block += chunk.blocks();
  stage.has_embedding = chunks.front().has_embedding;
  stage.has_head = chunks.back().has_head;
  const RankParams r = rank_params(w, stage);
  const bool pipelined = w.pp > 1;
  const int64_t c = dtype_bytes(w.dtype);
  const int64_t shard = ceil_div(r.model, w.shard_group_size);
  // An unsharded block: its linear weights in FP8 with the float8 all-gather.
  const int64_t linear = ceil_div(parameter_breakdown(w.model).block_linear, w.tp);
  const int64_t gathered_block = w.float8_all_gather ? linear + c * (r.block - linear) : c * r.block;
  const bool sharded = w.shard_group_size > 1;

  MemoryBreakdown m;
  m.params = c * shard;
  m.grads = c * shard;
  m.optimizer = (w.dtype == Dtype::kFp32 ? 8 : 12) * shard;
  if (w.megatron) {
    // Whole parameters and main-grad buffer on every rank; the optimizer's
    // shard (the whole model for plain DDP, S = 1). The buckets' collectives
    // run in place in those buffers.
    m.params = c * r.model;
    m.grads = dtype_bytes(w.reduce_dtype) * r.model;
    if (w.store_param_remainders) m.optimizer = 10 * shard;
    if (w.optimizer_state_bytes != 4) {
      // Adam's moments in 16 bits; the bf16 parameters are the master
      // weights unless they are FP8 (NeMo's store_params rule).
      const int64_t states = w.fp8_param_gather ? 3 : 2;
      m.optimizer = states * w.optimizer_state_bytes * shard;
    }
  }
  if (w.megatron_fsdp) {
    // The main-grad shard in its dtype; the optimizer's fp32 main weights
    // and Adam's moments over the shard, as above.
    m.grads = dtype_bytes(w.reduce_dtype) * shard;
  }
  if (w.float8 != Float8Recipe::kNone && w.float8_weight_casts == Float8WeightCasts::kOncePerStep &&
      !w.fp8_param_gather) {
    // Transformer Engine keeps each linear weight's FP8 casts, both layouts
    // with their block scales, for the step. (With fp8_param_gather the FP8 weight and its kept
    // transpose take the bf16 weight's 2 bytes: params as they are.)
    m.unsharded_params += static_cast<int64_t>(
        std::ceil(kept_weight_cast_bytes(w.float8) * static_cast<double>(stage.blocks() * linear)));
  }
  if (w.cpu_offload) {
    m.host_bytes = m.params + m.grads + m.optimizer;
    m.params = m.grads = m.optimizer = 0;
  }

  if (sharded && !w.megatron) {
    const bool keep_unsharded =
        w.strategy == ShardingStrategy::kShardGradOp || !w.reshard_after_forward || pipelined;
    if (keep_unsharded) {
      m.unsharded_params = c * r.root + stage.blocks() * gathered_block;
    } else {
      const bool prefetch = w.backward_prefetch != BackwardPrefetch::kNone || w.forward_prefetch;
      const int64_t depth = !prefetch ? 0 : (w.limit_all_gathers && w.fsdp_version != 1 ? 1 : 2);
      const int64_t in_flight = std::min(w.model.layers, 1 + depth);
      m.unsharded_params = c * r.root + in_flight * gathered_block;
    }
    // Megatron-FSDP's backward writes each weight's gradient into the unit's
    // unsharded main-grad bucket, the reduce-scatter's input.
    m.comm_buffers = (w.megatron_fsdp ? dtype_bytes(w.reduce_dtype) : c) * r.block;
    // no_sync(): micro-batches before the last accumulate unsharded
    // gradients of the whole model (FSDP keeps them in each parameter's .grad).
    // A pipeline stage reduces once per step, as under no_sync(). FSDP2
    // accumulates them in the reduce dtype (fsdp_schedule.h).
    const int64_t accumulated = w.fsdp_version == 2 ? dtype_bytes(w.reduce_dtype) : c;
    if ((w.no_sync || pipelined) && w.grad_accum > 1) m.grads += accumulated * r.model;
  }
  if (!pipelined) {
    const ActivationBreakdown a = activation_breakdown(w, options);
    m.activations = a.total;
    m.host_bytes += a.offloaded;
  } else {
    // The stage's blocks for each micro-batch alive, and the head's on the last stage.
    const ActivationBreakdown a = activation_breakdown(w, options);
    // Chunk-micro-batches alive, each a chunk's blocks (on average).
    const int64_t alive = microbatches_alive(w.pipeline_schedule, w.pp, w.virtual_stages,
                                             stage_index, w.grad_accum);
    const int64_t block_backward =
        a.block_recompute + ceil_div(w.rank_tokens(), w.tp) * w.model.hidden * c + a.ring;
    m.activations = ceil_div(alive * stage.blocks(), w.virtual_stages) * a.block_stored +
                    std::max(stage.has_head ? a.head : 0, block_backward);
  }

  m.stage = stage_index;
  // Megatron's buffers and optimizer shards are allocated once, up front:
  // only what each step allocates and frees fragments the allocator.
  // Megatron-FSDP's unit buffers are persistent with its double buffer and
  // come from the caching allocator without it.
  const int64_t megatron_fsdp_buffers =
      w.limit_all_gathers ? 0 : m.unsharded_params + m.comm_buffers;
  const int64_t fragmenting = w.megatron        ? m.activations
                              : w.megatron_fsdp ? m.activations + megatron_fsdp_buffers
                                                : m.total();
  m.reserve = kRuntimeReserveBytes +
              static_cast<int64_t>(std::llround(kFragmentation * static_cast<double>(fragmenting)));
  return m;
}

MemoryBreakdown memory_breakdown(const WorkloadSpec& w, const MemoryOptions& options) {
  MemoryBreakdown peak = stage_memory_breakdown(w, 0, options);
  for (int64_t s = 1; s < w.pp; ++s) {
    const MemoryBreakdown m = stage_memory_breakdown(w, s, options);
    if (m.total() > peak.total()) peak = m;
  }
  return peak;
}

bool fits(const MemoryBreakdown& memory, int64_t capacity_bytes) {
  return memory.total() <= capacity_bytes;
}

}  // namespace clustersim::workloads
