// The GPU kernels of one training step of a decoder transformer, each with
// its FLOPs and HBM bytes and, for GEMMs and attention, its shape, so that
// the compute model can apply efficiency curves by kernel class and size.
//
// Units and conventions:
//  * flops: floating-point operations as a double; a multiply-add is 2.
//  * bytes: HBM bytes read plus written, as a double: the minimum traffic of
//    the kernel (each operand read once, each result written once; caches
//    and re-reads of tiles are the compute model's efficiency to absorb).
//  * Tensors are `dtype_bytes` wide (bf16 = 2) unless said otherwise; token
//    ids are int64 (8 bytes); softmax statistics are fp32 (4 bytes).
//  * Shapes are per rank. T = micro_batch * seq_len tokens.
//
// GEMMs: C[m x n] = A[m x k] * B[k x n], flops = 2*m*n*k exactly, bytes =
// dtype_bytes * (m*k + k*n + m*n). Bias epilogues are neither counted nor
// split out. Backward of Y = X*W (X: T x in, W: in x out) is two kernels:
// dgrad dX = dY * W^T (m = T, n = in, k = out) and wgrad dW = X^T * dY
// (m = in, n = out, k = T); each has the forward's FLOPs, so backward GEMM
// FLOPs are exactly 2x forward.
//
// Tensor parallelism (Megatron-LM, Shoeybi et al. 2019): q/k/v and the MLP
// input are column-parallel (their n / tp per rank), the attention output
// and MLP down projections row-parallel (k / tp); each rank holds heads/tp
// query and kv_heads/tp KV heads; the output head and embedding are
// vocab-parallel (ceil(vocab / tp) rows, Megatron pads the vocabulary).
// With sequence parallelism (Korthikanti et al. 2022) norms and residual
// adds run on T / tp tokens, otherwise every rank repeats them on all T.
// The collectives TP needs are not kernels here.
//
// Attention (FlashAttention-2, Dao 2023), per rank with Hq = heads / tp:
//   non-causal forward = 4 * b * s^2 * Hq * head_dim  (QK^T and PV, each
//   2 * s * s * head_dim per head and sequence); causal = exactly half
//   (s^2 / 2, the convention of the FlashAttention papers; the diagonal's
//   s / 2 is ignored). Backward = 2.5 x forward: five matmuls (S = QK^T
//   recomputed, dV, dP, dQ, dK) against the forward's two.
//   Bytes forward: Q, K, V read, O written, fp32 log-sum-exp per (row, head).
//   Bytes backward: Q, K, V, O, dO read, dQ, dK, dV written, fp32
//   log-sum-exp read and the fp32 row sums D = rowsum(dO * O) written and read.
//
// Elementwise and norm kernels (flops per element are estimates; these
// kernels are bandwidth-bound): RMSNorm 4 flops/element, LayerNorm 7;
// reads x (and the weight; LayerNorm also its bias), writes y. Rotary: 3
// flops/element of q and k, read and written. Residual add: 1 flop, two
// reads one write. SwiGLU: silu(gate) * up, 5 flops per output element,
// two reads one write. GELU (tanh approximation): 9 flops/element, one read
// one write. Backward of a norm or elementwise kernel: 2x its forward bytes
// and flops (saved inputs and the output gradient read, input gradients
// written; norm weight gradients folded in), except the residual add, whose
// backward is the sum of the two gradient streams (same cost as forward).
//
// Embedding (vocab-parallel): forward reads T int64 ids and the rows this
// rank owns (T / tp rows expected), writes T x hidden (zeros for rows owned
// elsewhere; the TP all-reduce is communication). Backward zeroes this
// rank's gradient table (ceil(vocab / tp) x hidden), reads ids and dY
// (T x hidden), read-modify-writes the owned rows (1 add per element).
// A learned position table (GPT-3) adds one kEmbedding kernel (1 flop, two
// reads one write per element; backward per the 2x rule). Tied embeddings
// need no kernel of their own: the head's wgrad accumulates into the table.
//
// Loss (cross-entropy over the logits, in dtype_bytes; vocab-parallel):
// forward 4 flops per logit (max, subtract, exp, sum), reads the logits and
// int64 labels, writes an fp32 loss per token; backward recomputes the
// softmax and writes dlogits: 4 flops per logit, logits read and written
// once each, labels read.
//
// Optimizer (AdamW, PyTorch mixed precision): fp32 master weights and two
// fp32 moments; the gradient arrives in `grad_bytes` (bf16 = 2; 4 when FSDP
// upcasts to its fp32 flat parameter); the step writes a low-precision
// parameter copy of `param_copy_bytes` (2 for bf16; 0 when none is kept,
// e.g. FSDP casts during its all-gather). Bytes per parameter: grad_bytes +
// 12 read (master, m, v) + 12 written + param_copy_bytes = 28 by default.
// FLOPs per parameter: 14 (weight decay 1, first moment 3, second moment 4,
// sqrt / bias correction / eps 3, update 3; sqrt and divide count 1 each).
//
// Thread safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/model_spec.h"

namespace clustersim::workloads {

enum class KernelClass { kGemm, kAttention, kElementwise, kNorm, kEmbedding, kLoss, kOptimizer };

std::string_view kernel_class_name(KernelClass cls);

struct Kernel {
  std::string_view name;  // a string literal: "qkv_proj", "qkv_proj.dgrad", ...
  KernelClass cls = KernelClass::kElementwise;
  double flops = 0;  // floating-point operations
  double bytes = 0;  // HBM bytes read + written
  // kGemm only: C[m x n] = A[m x k] * B[k x n].
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  // kAttention only: per-rank heads.
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool causal = false;
};

struct KernelConfig {
  int64_t seq_len = 0;      // tokens per sequence, > 0
  int64_t micro_batch = 1;  // sequences per micro-batch, > 0
  int64_t dtype_bytes = 2;  // activations and weights (bf16 = 2)
  int64_t tp = 1;           // tensor-parallel degree, see tensor_parallel_problem()
  bool sequence_parallel = false;
  bool causal = true;  // decoder attention mask
};

// "" when `tp` can split `model` (tp >= 1 divides heads, kv_heads and
// ffn_hidden); otherwise an "expected ..." phrase for a ConfigError. The
// kernel functions require this (an invariant check), and with sequence
// parallelism that tp divides micro_batch * seq_len.
std::string tensor_parallel_problem(const ModelSpec& model, int64_t tp);

// One transformer block, in execution order. Forward: attn_norm, qkv_proj,
// rotary (rotary models), attention, out_proj, attn_residual, mlp_norm,
// gate_up_proj (SwiGLU, gate and up fused: n = 2 * ffn / tp) or up_proj
// (GELU), swiglu or gelu, down_proj, mlp_residual. Backward: the reverse,
// each GEMM as .dgrad then .wgrad, the rest as .bwd.
std::vector<Kernel> block_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> block_backward(const ModelSpec& model, const KernelConfig& config);

// Before the blocks: embedding (+ position_embedding with a learned table).
std::vector<Kernel> embedding_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> embedding_backward(const ModelSpec& model, const KernelConfig& config);

// After the blocks: final_norm, lm_head (m = T, k = hidden, n = ceil(vocab /
// tp)), cross_entropy. Backward in reverse order (the head's GEMM runs even
// when its weight is tied to the embedding).
std::vector<Kernel> head_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> head_backward(const ModelSpec& model, const KernelConfig& config);

struct OptimizerPrecision {
  int64_t grad_bytes = 2;        // gradient as the optimizer reads it
  int64_t param_copy_bytes = 2;  // low-precision copy written; 0 for none
};

// AdamW over `local_params` parameters (this rank's shard), one kernel.
Kernel adamw_step(int64_t local_params, const OptimizerPrecision& precision = {});

double total_flops(std::span<const Kernel> kernels);
double total_bytes(std::span<const Kernel> kernels);

// Model FLOPs per token of a training step (forward + backward), the
// numerator of MFU (PaLM, Chowdhery et al. 2022, appendix B): 6 * N + 12 *
// layers * seq_len * heads * head_dim, halved attention term (6) for causal,
// where N = layers * (q, k, v, o, MLP weights) + vocab * hidden (the output
// head GEMM, tied or not). The kernels above count what runs instead:
// attention backward is 2.5x forward (not 2x), giving 7 rather than 6 for
// causal attention, plus the norm, elementwise and loss FLOPs.
double model_flops_per_token(const ModelSpec& model, int64_t seq_len, bool causal = true);

}  // namespace clustersim::workloads
