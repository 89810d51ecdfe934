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
//  * Shapes are per rank. T = micro_batch * seq_len tokens (/ cp with context
//    parallelism: KernelConfig::cp).
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
// one write; squared ReLU the same with 2 flops/element. Backward of a norm
// or elementwise kernel: 2x its forward bytes and flops (saved inputs and
// the output gradient read, input gradients written; norm weight gradients
// folded in), except the residual add, whose backward is the sum of the two
// gradient streams (same cost as forward).
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
// Optimizer: workloads/model/optimizer_step.h (AdamW, fused or foreach).
//
// Kernel fusion (KernelConfig::fusion). Everything above describes
// KernelFusion::kCompiled, the default: one minimal-traffic kernel per
// operation, as torch.compile (Inductor) generates them for the blocks,
// each fusion group's bytes its external inputs and outputs only (RMSNorm
// reads x and the weight and writes y; rotary reads and writes q and k;
// SwiGLU reads gate and up and writes their product; the loss reads the
// logits once). Assumptions where Inductor does differently (each worth
// under 0.5% of torchtitan's Llama 3 8B step time at HBM bandwidth; kept so
// that the compiled kernels stay those of the model before fusion modes
// existed):
//  * Inductor fuses the attention residual add into the following mlp_norm
//    (one kernel reading x, attn_out and the weight, writing h and y: 4 T H d
//    instead of 5); here they stay two kernels.
//  * torchtitan's repeat_kv materialises K and V with all query heads for
//    SDPA, also under Inductor; compiled mode has no such copy (the attention
//    reads K and V at kv_heads, like FlashAttention's native GQA).
//  * torchtitan compiles only the transformer blocks: its final norm, head
//    and loss run eager even with torch.compile. To reproduce it, pass a
//    config with kEager to head_forward() and head_backward().
//
// KernelFusion::kEager: the kernels eager PyTorch launches for torchtitan's
// Llama 3 code as of its published runs (torchtitan/models/llama3/model.py:
// the Python RMSNorm, or the composite at::rms_norm that nn.RMSNorm ran
// before PyTorch had a fused CUDA RMSNorm; apply_rotary_emb through complex
// numbers; separate wq/wk/wv and w1/w3 linears; repeat_kv; SDPA with the
// flash backend; cross_entropy on logits.float()). The op sequences below
// were checked against a TorchDispatchMode trace of that Python code,
// forward and backward (PyTorch 1.13 on CPU, attention stubbed). Each
// kernel reads its inputs once and writes its output once; fp32
// intermediates are 4 bytes/element.
// FLOPs: 1 per output element of an arithmetic kernel (add, mul, pow,
// rsqrt, div), 1 per input element of a reduction, 0 for casts and copies,
// 3 per real element of a complex multiply; silu 4, silu backward 8,
// log_softmax and its backward 4 per logit. GEMMs and attention are the
// same kernels, with the same FLOPs and bytes, in both modes.
// With E = tokens x hidden of the norm, R = its tokens (rows), d = dtype_bytes:
//  * RMSNorm forward, 8 kernels: <norm>.to_fp32 (d+4)E; .pow 8E, E flops;
//    .mean 4E+4R, E; .add_eps 8R, R; .rsqrt 8R, R; .mul_rstd 8E+4R, E;
//    .type_as (4+d)E; .mul_weight 2dE+dH, E. Sum (28+4d)E + 24R + dH bytes,
//    4E + 2R flops.
//  * RMSNorm backward, 16 kernels (autograd's formulas): .mul_weight.bwd_weight
//    3dE, E; .mul_weight.bwd_input 2dE+dH, E; .weight_grad_sum dE+dH, E;
//    .type_as.bwd (d+4)E; .mul_rstd.bwd_rstd 12E, E; .mul_rstd.bwd_input
//    8E+4R, E; .rstd_grad_sum 4E+4R, E; .rsqrt.bwd_cube 8R, 2R;
//    .rsqrt.bwd_scale 8R, R; .rsqrt.bwd_mul 12R, R; .mean.bwd 4E+4R, E;
//    .pow.bwd_pow1 8E (pow(x, 1) is a copy); .pow.bwd_scale 8E, E;
//    .pow.bwd_mul 12E, E; .grad_accumulate 12E, E (autograd sums the two
//    gradients of the fp32 input); .to_fp32.bwd (4+d)E. Sum (76+8d)E + 40R +
//    2dH bytes, 10E + 4R flops.
//  * Rotary: workloads/model/eager_rotary.h (torchtitan's complex form, or
//    foundation-model-stack's rotation matrices: KernelConfig::rotary_by_matrix).
//  * repeat_kv (only when a rank has fewer KV heads than query heads):
//    repeat_kv.k and repeat_kv.v copy T x kv_width to T x q_width, d(Ekv+Eq);
//    backward repeat_kv.{v,k}.bwd sum the copies back, d(Eq+Ekv), Eq flops.
//  * SwiGLU: swiglu.silu 2dEf, 4Ef; swiglu.mul 3dEf, Ef (Ef = T x ffn / tp).
//    Backward: swiglu.mul.bwd_gate and swiglu.mul.bwd_up 3dEf, Ef each;
//    swiglu.silu.bwd 3dEf, 8Ef.
//  * Gradient sums of the separate linears reading one input (E = T x hidden,
//    3dE bytes, E flops each): qkv_proj.dgrad_sum_kv, qkv_proj.dgrad_sum_q,
//    and gate_up_proj.dgrad_sum (SwiGLU). Our GEMMs stay fused (qkv_proj,
//    gate_up_proj: same FLOPs, one launch instead of three or two).
//  * Residual adds are single kernels in both modes; in eager backward each
//    residual's gradient sum runs where autograd runs it, after the norm
//    backward of its branch (mlp_residual.bwd after mlp_norm's, attn_residual.bwd
//    after attn_norm's).
//  * Cross-entropy, L = T x ceil(vocab / tp) logits: cross_entropy.to_fp32
//    (d+4)L; cross_entropy.log_softmax 8L, 4L; cross_entropy.nll_loss 12T+8
//    (int64 label and fp32 value per token read, mean and weight written), T.
//    Backward: cross_entropy.nll_loss.bwd_zero 4L (fills the fp32 gradient);
//    cross_entropy.nll_loss.bwd 12T+8, T; cross_entropy.log_softmax.bwd 12L, 4L;
//    cross_entropy.to_fp32.bwd (4+d)L. 36 bytes per logit against compiled's 6.
//  * LayerNorm and GELU (GPT-style models) are PyTorch's native fused
//    kernels in eager mode too: the same single kernels as compiled. The
//    embedding and position embedding are the same in both modes.
// Kernel counts of a Llama block with GQA (llama3-8b), forward / backward:
// compiled 11 / 15, eager 33 / 59; every kernel is one launch.
//
// Recomputation under activation checkpointing (block_recompute): the
// forward kernels re-run before a block's backward. PyTorch's non-reentrant
// checkpoint stops recomputing once the last tensor the backward needs has
// been saved again (early stop): the inputs of the block's last matmul are
// saved before it runs, so neither down_proj nor mlp_residual is ever
// recomputed (torch.compile's partitioner recomputes only what the backward
// needs, the same set).
//  * Recompute::kFull: the block forward without down_proj and mlp_residual.
//  * Recompute::kSelectiveOp: torchtitan's op-level SAC policy
//    (torchtitan/models/llama3/infra/parallelize.py, "op"): the outputs of
//    flash attention and of every odd-numbered mm of the forward are saved.
//    The mms are wq, wk, wv, wo, w1, w3, w2 (SwiGLU) or wq, wk, wv, wo, w_up,
//    w_down (GELU); wq, wv, w1 / w_up and w2 are saved. Recomputed: the
//    GEMMs k_proj.recompute (m = T, n = kv_width, k = hidden),
//    out_proj.recompute (wo) and, for SwiGLU, up_proj.recompute (w3: m = T,
//    n = ffn / tp, k = hidden), plus every non-matmul forward kernel of the
//    fusion mode up to the MLP activation (norms, rotary, repeat_kv,
//    attn_residual, the activation). For compiled mode this assumes
//    Inductor emits the recomputed pointwise groups as the forward's kernels
//    rather than fusing them into backward kernels.
//  * Recompute::kAttentionCore: Megatron-Core's selective recompute
//    (--recompute-granularity selective; Korthikanti et al. 2022,
//    arXiv:2205.05198, sec. 4.2): the attention core alone, the forward's
//    attention kernels (flash, or the math path's scores, softmax and
//    context; ring attention's steps with cp > 1) again.
//
// Thread safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/model/model_spec.h"

namespace clustersim::workloads {

enum class KernelClass { kGemm, kAttention, kElementwise, kNorm, kEmbedding, kLoss, kOptimizer };

// The format of a GEMM's operands: the training dtype, or a low precision
// that workload.float8 casts them to (workloads/model/float8_kernels.h).
enum class GemmFormat {
  kBf16,   // the training dtype's tensor cores
  kFp8,    // E4M3/E5M2 with per-tensor, per-row or 128-element block scales
  kMxfp8,  // OCP MXFP8: E4M3 with an E8M0 scale per 32 elements, applied by the MMA
  kNvfp4,  // NVFP4: E2M1 with an E4M3 scale per 16 elements and a per-tensor fp32 scale
};

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
  // kGemm only: a grouped GEMM of this many problems in one kernel (the
  // local experts of a mixture-of-experts layer, workloads/model/moe_kernels.h),
  // m their mean rows; 1 for a plain GEMM.
  int64_t groups = 1;
  // kAttention only: per-rank heads.
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool causal = false;
  // kGemm only: the operands' format (workload.float8), which decides the
  // tensor-core peak it is timed at (workloads/model/compute_model.h).
  GemmFormat format = GemmFormat::kBf16;
};

// Which kernels the non-matmul operations run as; see the top of this file.
enum class KernelFusion {
  kCompiled,  // torch.compile (Inductor) fusion groups: one kernel per norm, rotary, SwiGLU, ...
  kEager,     // eager PyTorch: one kernel per aten op, fp32 intermediates
};

std::string_view kernel_fusion_name(KernelFusion fusion);  // "compiled", "eager"

// The FP8 scaling of the blocks' linears: torchao's Float8Linear recipes or
// Transformer Engine's (workloads/model/float8_kernels.h).
enum class Float8Recipe {
  kNone,        // bf16 GEMMs
  kTensorwise,  // torchao: one dynamic scale per tensor
  kRowwise,     // torchao: one dynamic scale per row
  // Transformer Engine's delayed scaling: one scale per tensor from the amax
  // history of earlier steps, so no amax pass precedes a cast.
  kDelayed,
  // Transformer Engine's current scaling (Float8CurrentScaling): one scale
  // per tensor from its own amax, an amax pass before each cast.
  kCurrent,
  // Transformer Engine's block scaling (Float8BlockScaling, DeepSeek-V3's
  // recipe): a scale per 1 x 128 tile of activations and gradients and per
  // 128 x 128 block of weights, found by the cast itself.
  kBlockwise,
  // Transformer Engine's MXFP8BlockScaling (Megatron --fp8-recipe mxfp8):
  // an E8M0 scale per 32 consecutive elements along the GEMM's reduction
  // dimension, applied inside the MMA (Blackwell); each tensor is quantized
  // in both directions from its bf16 values.
  kMxfp8,
  // Transformer Engine's NVFP4BlockScaling (Megatron --fp4-recipe nvfp4):
  // E2M1 values, an E4M3 scale per 16 elements and a per-tensor fp32 scale
  // from the tensor's amax; 16 x 16 blocks for weights, a random Hadamard
  // transform on the weight gradient's operands (Blackwell).
  kNvfp4,
};

// Transformer Engine's recipes (delayed, current, blockwise, mxfp8, nvfp4):
// those its weight cache, Megatron's FP8 parameters and userbuffers work with.
inline bool transformer_engine_recipe(Float8Recipe recipe) {
  return recipe == Float8Recipe::kDelayed || recipe == Float8Recipe::kCurrent ||
         recipe == Float8Recipe::kBlockwise || recipe == Float8Recipe::kMxfp8 ||
         recipe == Float8Recipe::kNvfp4;
}

// Which kernels compute the loss: aten's (F.cross_entropy, as `fusion` runs
// it) or Megatron-Core's vocab-parallel cross entropy, unfused or fused
// (workloads/model/vocab_parallel_loss.h).
enum class CrossEntropyKernels { kAten, kVocabParallel, kVocabParallelFused };

// Which passes cast the blocks' FP8 weights (workloads/model/float8_kernels.h).
enum class Float8WeightCasts {
  kEveryPass,  // torchao: every forward casts W, every backward casts W transposed
  // Transformer Engine under Megatron's is_first_microbatch: this forward
  // casts the step's weights once, both layouts in one kernel, and keeps them.
  kOncePerStep,
  kCached,  // Transformer Engine: later micro-batches and every backward use the kept casts
};

struct KernelConfig {
  int64_t seq_len = 0;      // tokens per sequence, > 0
  int64_t micro_batch = 1;  // sequences per micro-batch, > 0
  int64_t dtype_bytes = 2;  // activations and weights (bf16 = 2)
  int64_t tp = 1;           // tensor-parallel degree, see tensor_parallel_problem()
  // Context-parallel degree: each rank holds seq_len / cp tokens of every
  // sequence (T = micro_batch * seq_len / cp) and computes attention as the
  // ring of workloads/model/ring_attention.h (flash attention only, causal).
  int64_t cp = 1;
  // true: the ring moves K and V at the model's KV heads (native GQA); false:
  // at the query's, as torchtitan's repeat_kv hands them to SDPA.
  bool cp_model_kv_heads = false;
  bool sequence_parallel = false;
  bool causal = true;  // decoder attention mask
  // Default: kCompiled, the single-kernel model every caller had before.
  KernelFusion fusion = KernelFusion::kCompiled;
  // false: unfused attention over the whole score matrix (workloads/model/math_attention.h).
  bool flash_attention = true;
  // Eager only: true runs foundation-model-stack's rotary (2x2 rotation
  // matrices over fp32 pairs, see the top of this file), false torchtitan's.
  bool rotary_by_matrix = false;
  // FP8 GEMMs and their casts in the blocks (workloads/model/float8_kernels.h).
  Float8Recipe float8 = Float8Recipe::kNone;
  // The weights come from FSDP's float8 all-gather (workloads/model/float8_kernels.h).
  bool float8_weights_gathered = false;
  Float8WeightCasts float8_weight_casts = Float8WeightCasts::kEveryPass;
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::kAten;
  // Transformer Engine's userbuffers with FP8 and sequence parallelism: the
  // inputs TP all-gathers are cast on the rank's shard and gathered in FP8
  // (workloads/model/float8_kernels.h).
  bool float8_tp_gather = false;
  // RMSNorm as one kernel each way even in eager mode (torchtitan's Triton
  // fused_rmsnorm): the compiled mode's norm kernels.
  bool fused_norm = false;
};

// "" when `tp` can split `model` (tp >= 1 divides heads, kv_heads and
// ffn_hidden); otherwise an "expected ..." phrase for a ConfigError. The
// kernel functions require this (an invariant check), and with sequence
// parallelism that tp divides micro_batch * seq_len.
std::string tensor_parallel_problem(const ModelSpec& model, int64_t tp);

// Megatron's sequence parallelism: true for the block GEMMs (forward,
// recomputed or input gradient) whose input TP all-gathers along the
// sequence first: qkv_proj, gate_up_proj / up_proj, out_proj.dgrad and
// down_proj.dgrad.
bool tp_gathers_input(std::string_view gemm_name);

// One transformer block, in execution order. Forward: attn_norm, qkv_proj,
// rotary (rotary models), attention, out_proj, attn_residual, mlp_norm,
// gate_up_proj (SwiGLU, gate and up fused: n = 2 * ffn / tp) or up_proj
// (GELU), swiglu or gelu, down_proj, mlp_residual. Backward: the reverse,
// each GEMM as .dgrad then .wgrad, the rest as .bwd. In eager mode each
// norm, rotary and SwiGLU is its sequence of kernels (named as at the top of
// this file), repeat_kv follows rotary, and the backward adds the gradient
// sums; size() is the number of kernel launches.
std::vector<Kernel> block_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> block_backward(const ModelSpec& model, const KernelConfig& config);

// Activation checkpointing of a block, as it changes the kernels run.
// (workloads/model/workload_config.h's ActivationCheckpointing: kFull -> kFull;
// kSelective with torchtitan's default "op" policy -> kSelectiveOp;
// kAttentionCore -> kAttentionCore.)
enum class Recompute {
  kNone,           // activations kept: nothing re-runs
  kSelectiveOp,    // torchtitan's op-level selective AC: every other mm and attention saved
  kFull,           // only the block input kept: the forward re-runs
  kAttentionCore,  // Megatron's selective recompute: the attention core re-runs
};

// The forward kernels re-run before the block's backward, in execution order,
// in config.fusion's kernels; empty for kNone. See the top of this file.
std::vector<Kernel> block_recompute(const ModelSpec& model, const KernelConfig& config,
                                    Recompute recompute);

// Before the blocks: embedding (+ position_embedding with a learned table).
std::vector<Kernel> embedding_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> embedding_backward(const ModelSpec& model, const KernelConfig& config);

// After the blocks: final_norm, lm_head (m = T, k = hidden, n = ceil(vocab /
// tp)), cross_entropy. Backward in reverse order (the head's GEMM runs even
// when its weight is tied to the embedding). In eager mode the norm and the
// loss are their kernel sequences (final_norm.*, cross_entropy.*).
std::vector<Kernel> head_forward(const ModelSpec& model, const KernelConfig& config);
std::vector<Kernel> head_backward(const ModelSpec& model, const KernelConfig& config);

// C[m x n] = A[m x k] * B[k x n] with every operand of `dtype_bytes`: 2 m n k
// FLOPs, each matrix read or written once.
Kernel gemm(std::string_view name, int64_t m, int64_t n, int64_t k, double dtype_bytes);

// A kernel of `cls` timed by its FLOPs and HBM bytes alone (no GEMM or
// attention shape): norms, elementwise ops, copies.
Kernel pointwise(std::string_view name, KernelClass cls, double flops, double bytes);

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
