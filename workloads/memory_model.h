// Per-rank peak GPU memory of one training step, by part, from a
// WorkloadSpec; and whether it fits a GPU of a given capacity.
//
// The peak is taken at the start of backward of a micro-batch: every stored
// activation of the micro-batch is alive, the unsharded blocks in flight are
// allocated, and the gradient shards of earlier micro-batches (gradient
// accumulation) are held. Only one micro-batch's activations are alive at a
// time, so grad_accum does not change the peak.
//
// Notation: L layers, h hidden, a query heads, V vocab, s seq_len,
// b local_batch, t = tp, S = shard_group_size (1 for NO_SHARD), c =
// dtype_bytes(dtype) (2 for bf16/fp16, 4 for fp32). ceil(x / y) is written
// x /^ y.
//
// Parameters held by one tensor-parallel rank (parameter_breakdown()):
//   block_rank = block /^ t                         (Megatron splits q/k/v/o, MLP)
//   root_rank  = (embedding + output_head) /^ t + final_norm
//                                                   (vocab-parallel embedding and head,
//                                                    replicated final norm; the FSDP root
//                                                    unit, as torchtitan wraps it)
//   model_rank = L * block_rank + root_rank
//   shard      = model_rank /^ S                    (parameters of one FSDP shard)
//
// Sharded training state (mixed precision; zero on the GPU with cpu_offload,
// where it is `host_bytes` instead):
//   params    = c * shard          low-precision parameters for compute
//   grads     = c * shard          gradients, reduce-scattered into the shard
//   optimizer = 12 * shard (bf16/fp16: fp32 master copy + Adam m + v)
//             =  8 * shard (fp32: Adam m + v; the parameters are the master)
// i.e. 16 bytes per parameter per shard, as FSDP2's fp32 sharded parameter,
// fp32 gradient and two moments (torchtitan) add up to. FULL_SHARD and
// SHARD_GRAD_OP shard over the data-parallel ranks, HYBRID_SHARD over
// shard_group_size, NO_SHARD not at all (S = 1).
//
// Unsharded parameters (all-gathered blocks; 0 when S = 1, nothing to gather):
//   in_flight = 1 + depth, at most L, with depth = 0 without prefetch
//               (backward_prefetch NONE and no forward_prefetch); with prefetch
//               depth = 1 under limit_all_gathers (FSDP's rate limiter keeps two
//               blocks unsharded) and 2 without it (the host may issue one more
//               all-gather before the previous block is freed; an assumption)
//   unsharded = c * (root_rank + in_flight * block_rank)
//   SHARD_GRAD_OP or reshard_after_forward false: every block stays unsharded
//   from its forward to its backward, unsharded = c * model_rank.
//
// Activations of one micro-batch (Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models", arXiv:2205.05198,
// Sections 4.1-4.2: bytes per layer for 16-bit activations, with tensor and
// sequence parallelism dividing every term by t; our estimate scales by c / 2
// for fp32):
//   layer_full = s*b*h*(34 + 5*a*s/h) / t * c/2     stored by one layer, without
//                                                   flash attention (5as/h: the
//                                                   attention scores, softmax and
//                                                   dropout mask, quadratic in s)
//   layer_flash = s*b*h*34 / t * c/2                with flash attention, which
//                                                   stores no score matrix
//   none:      L * layer (layer_flash with flash attention, else layer_full)
//   selective: L * layer_flash                      the paper's selective
//                                                   recomputation drops exactly the
//                                                   attention-score term (Section
//                                                   5), so with flash attention it
//                                                   saves nothing more
//   full:      L * 2*s*b*h / t * c/2 + layer        only each block's input is
//                                                   kept; one layer is recomputed
//                                                   at a time (Section 3)
//   logits = s*b*(V /^ t) * (c + 4)                 output-head logits and their
//                                                   fp32 copy for cross entropy
//                                                   (our estimate, not the paper's)
//   activations = the checkpointing term + logits
// The 34 is the paper's count for GPT blocks (4h MLP, multi-head attention,
// dropout), used for every model as a first approximation. It overestimates
// Llama-style blocks (SwiGLU, GQA, no dropout), and "selective" above is the
// paper's, not torchtitan's per-op policy: torchtitan's Llama-3-8B at seq
// 8192, local batch 2, selective AC runs in 96 GB, while this gives ~111 GB.
// A per-block count from the model's own tensors is the next refinement.
//
// Communication buffers:
//   comm_buffers = c * block_rank when S > 1: the unsharded gradient of the
//   block whose reduce-scatter is in flight; 0 for NO_SHARD (DDP gradients
//   are bucket views, gradient_as_bucket_view).
//
// Allocator reserve:
//   reserve = kRuntimeReserveBytes + kFragmentation * (everything above)
//   kRuntimeReserveBytes (1 GiB): CUDA context, cuBLAS workspaces and NCCL's
//   internal buffers; kFragmentation (5%): the caching allocator's
//   fragmentation. Placeholders until calibrated against measured peaks.
//
// Units: bytes (int64). Thread safety: pure functions; value types.
#pragma once

#include <cstdint>

#include "workloads/workload_config.h"

namespace clustersim::workloads {

inline constexpr int64_t kRuntimeReserveBytes = int64_t{1} << 30;
inline constexpr double kFragmentation = 0.05;

struct MemoryOptions {
  // The kernels model runs flash attention; false gives the paper's
  // materialised-score activations.
  bool flash_attention = true;
};

struct MemoryBreakdown {
  int64_t params = 0;
  int64_t grads = 0;
  int64_t optimizer = 0;
  int64_t unsharded_params = 0;
  int64_t activations = 0;
  int64_t comm_buffers = 0;
  int64_t reserve = 0;
  // On the host with cpu_offload (params + grads + optimizer); not in total().
  int64_t host_bytes = 0;

  // Sum of the GPU parts.
  int64_t total() const {
    return params + grads + optimizer + unsharded_params + activations + comm_buffers + reserve;
  }
};

// Activations one layer stores for one micro-batch without recomputation
// (layer_flash or layer_full above).
int64_t layer_activation_bytes(const WorkloadSpec& w, const MemoryOptions& options = {});
// Activations of one micro-batch under w.activation_checkpointing, logits included.
int64_t activation_bytes(const WorkloadSpec& w, const MemoryOptions& options = {});

// The per-rank peak, by part. `w` comes from read_workload_spec() (groups
// derived, tp splitting the model).
MemoryBreakdown memory_breakdown(const WorkloadSpec& w, const MemoryOptions& options = {});

// total() <= capacity_bytes.
bool fits(const MemoryBreakdown& memory, int64_t capacity_bytes);

}  // namespace clustersim::workloads
