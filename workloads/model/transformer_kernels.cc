#include "workloads/model/transformer_kernels.h"

#include <string>
#include <utility>

#include "sim/check.h"
#include "workloads/model/eager_rotary.h"
#include "workloads/model/float8_kernels.h"
#include "workloads/model/math_attention.h"
#include "workloads/model/ring_attention.h"
#include "workloads/model/vocab_parallel_loss.h"

namespace clustersim::workloads {

namespace {

// FLOPs per element of the bandwidth-bound kernels (see the header).
constexpr double kRmsNormFlops = 4;
constexpr double kLayerNormFlops = 7;
constexpr double kRotaryFlops = 3;
constexpr double kResidualFlops = 1;
constexpr double kSwigluFlops = 5;
constexpr double kGeluFlops = 9;
constexpr double kSquaredReluFlops = 2;  // max(x, 0), then its square
constexpr double kCrossEntropyFlops = 4;
// Eager kernels (see the header): silu, its backward, log_softmax per logit.
constexpr double kSiluFlops = 4;
constexpr double kSiluBackwardFlops = 8;
constexpr double kLogSoftmaxFlops = 4;
constexpr double kFp32Bytes = 4;  // eager fp32 intermediates
// Backward of a norm or elementwise kernel relative to its forward.
constexpr double kPointwiseBackward = 2;
// FlashAttention-2: five matmuls in the backward against two forward.
constexpr double kAttentionBackward = 2.5;

constexpr double kIdBytes = 8;    // int64 token ids and labels
constexpr double kStatBytes = 4;  // fp32 softmax statistics and per-token loss

double dbl(int64_t x) { return static_cast<double>(x); }

// Per-rank sizes of one block; all counts are exact integers.
struct Dims {
  int64_t seq = 0;          // seq_len
  int64_t tokens = 0;       // T = micro_batch * seq_len
  int64_t norm_tokens = 0;  // T / tp with sequence parallelism, else T
  int64_t hidden = 0;
  int64_t head_dim = 0;
  int64_t q_heads = 0;   // heads / tp
  int64_t kv_heads = 0;  // kv_heads / tp
  int64_t ffn = 0;       // ffn_hidden / tp
  int64_t vocab = 0;     // ceil(vocab / tp)
  double d = 2;          // dtype bytes
  bool swiglu = true;
  bool squared_relu = false;  // Nemotron-4's relu(x)^2 (else GELU when not swiglu)
  bool rotary = true;
  bool layer_norm = false;
  bool eager = false;  // KernelFusion::kEager
  bool rotary_by_matrix = false;
  bool fused_norm = false;  // KernelConfig::fused_norm
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::kAten;

  int64_t q_width() const { return q_heads * head_dim; }
  int64_t kv_width() const { return kv_heads * head_dim; }
};

Dims dims_of(const ModelSpec& model, const KernelConfig& c) {
  CLUSTERSIM_CHECK(c.seq_len > 0 && c.micro_batch > 0 && c.dtype_bytes > 0 && c.cp > 0 &&
                       c.seq_len % c.cp == 0 && (c.cp == 1 || c.flash_attention),
                   "cp " + std::to_string(c.cp) + ", seq_len " + std::to_string(c.seq_len) +
                       ", micro_batch " + std::to_string(c.micro_batch) + ", dtype_bytes " +
                       std::to_string(c.dtype_bytes));
  const std::string problem = tensor_parallel_problem(model, c.tp);
  CLUSTERSIM_CHECK(problem.empty(), "tp " + std::to_string(c.tp) + ": " + problem);
  Dims x;
  x.seq = c.seq_len / c.cp;
  x.tokens = c.micro_batch * x.seq;
  CLUSTERSIM_CHECK(!c.sequence_parallel || x.tokens % c.tp == 0,
                   "sequence parallelism needs tp " + std::to_string(c.tp) + " to divide " +
                       std::to_string(x.tokens) + " tokens");
  x.norm_tokens = c.sequence_parallel ? x.tokens / c.tp : x.tokens;
  x.hidden = model.hidden;
  x.head_dim = model.head_dim();
  x.q_heads = model.heads / c.tp;
  x.kv_heads = model.kv_heads / c.tp;
  x.ffn = model.ffn_hidden / c.tp;
  x.vocab = (model.vocab + c.tp - 1) / c.tp;
  x.d = dbl(c.dtype_bytes);
  x.swiglu = model.activation == Activation::kSwiGLU;
  x.squared_relu = model.activation == Activation::kSquaredRelu;
  x.rotary = model.learned_positions == 0;
  x.layer_norm = model.norm == NormKind::kLayerNorm;
  x.eager = c.fusion == KernelFusion::kEager;
  x.rotary_by_matrix = c.rotary_by_matrix;
  x.fused_norm = c.fused_norm;
  x.cross_entropy = c.cross_entropy;
  return x;
}

// Y[tokens x out] = X[tokens x in] * W[in x out]: the forward GEMM.
Kernel linear(std::string_view name, int64_t tokens, int64_t in, int64_t out, double d) {
  return gemm(name, tokens, out, in, d);
}
Kernel linear_dgrad(std::string_view name, int64_t tokens, int64_t in, int64_t out, double d) {
  return gemm(name, tokens, in, out, d);
}
Kernel linear_wgrad(std::string_view name, int64_t tokens, int64_t in, int64_t out, double d) {
  return gemm(name, in, out, tokens, d);
}

Kernel backward_of(const Kernel& forward, std::string_view name) {
  return pointwise(name, forward.cls, kPointwiseBackward * forward.flops,
                   kPointwiseBackward * forward.bytes);
}

Kernel norm(std::string_view name, const Dims& x, int64_t tokens) {
  const double elements = dbl(tokens) * dbl(x.hidden);
  const double params = (x.layer_norm ? 2 : 1) * dbl(x.hidden);
  return pointwise(name, KernelClass::kNorm,
                   (x.layer_norm ? kLayerNormFlops : kRmsNormFlops) * elements,
                   x.d * (2 * elements + params));
}

Kernel residual(std::string_view name, const Dims& x) {
  const double elements = dbl(x.norm_tokens) * dbl(x.hidden);
  return pointwise(name, KernelClass::kElementwise, kResidualFlops * elements, x.d * 3 * elements);
}

Kernel rotary(std::string_view name, const Dims& x) {
  const double elements = dbl(x.tokens) * dbl(x.q_width() + x.kv_width());
  return pointwise(name, KernelClass::kElementwise, kRotaryFlops * elements, x.d * 2 * elements);
}

Kernel activation(const Dims& x) {
  const double elements = dbl(x.tokens) * dbl(x.ffn);
  if (x.swiglu) {
    return pointwise("swiglu", KernelClass::kElementwise, kSwigluFlops * elements,
                     x.d * 3 * elements);
  }
  return x.squared_relu ? pointwise("squared_relu", KernelClass::kElementwise,
                                    kSquaredReluFlops * elements, x.d * 2 * elements)
                        : pointwise("gelu", KernelClass::kElementwise, kGeluFlops * elements,
                                    x.d * 2 * elements);
}

Kernel attention(std::string_view name, const Dims& x, const KernelConfig& c, bool backward) {
  Kernel a;
  a.name = name;
  a.cls = KernelClass::kAttention;
  a.batch = c.micro_batch;
  a.seq = c.seq_len;
  a.heads = x.q_heads;
  a.kv_heads = x.kv_heads;
  a.head_dim = x.head_dim;
  a.causal = c.causal;
  const double s = dbl(c.seq_len);
  const double forward =
      4 * dbl(c.micro_batch) * s * s * dbl(x.q_heads) * dbl(x.head_dim) * (c.causal ? 0.5 : 1.0);
  a.flops = backward ? kAttentionBackward * forward : forward;
  const double t = dbl(x.tokens);
  const double q = t * dbl(x.q_width());    // elements of Q (= O, dO, dQ)
  const double kv = t * dbl(x.kv_width());  // elements of K (= V, dK, dV)
  const double rows = t * dbl(x.q_heads);   // softmax rows
  a.bytes = backward ? x.d * (4 * q + 4 * kv) + kStatBytes * 3 * rows
                     : x.d * (2 * q + 2 * kv) + kStatBytes * rows;
  return a;
}

// The block's attention: the ring's steps with context parallelism, else
// one flash kernel or the math path's kernels.
void attention_pass(std::vector<Kernel>& out, const Dims& x, const KernelConfig& c, bool backward) {
  if (c.cp > 1) {
    const RingAttentionShape ring{
        c.micro_batch, x.seq, x.q_heads, c.cp_model_kv_heads ? x.kv_heads : x.q_heads,
        x.head_dim,    c.cp,  x.d};
    return backward ? ring_attention_backward(out, ring) : ring_attention_forward(out, ring);
  }
  if (!c.flash_attention) {
    const MathAttentionShape math{c.micro_batch, c.seq_len, x.q_heads, x.head_dim, x.d, x.eager};
    return backward ? math_attention_backward(out, math) : math_attention_forward(out, math);
  }
  out.push_back(attention(backward ? "attention.bwd" : "attention", x, c, backward));
}

std::string_view mlp_in_name(const Dims& x) { return x.swiglu ? "gate_up_proj" : "up_proj"; }
int64_t mlp_in_width(const Dims& x) { return x.swiglu ? 2 * x.ffn : x.ffn; }

// The kernel names of one norm in both fusion modes, all string literals
// (Kernel::name is a view): the compiled kernel and its backward, then the
// eager RMSNorm's forward and backward kernels in execution order.
struct NormNames {
  std::string_view fused, fused_bwd;
  std::string_view to_fp32, pow, mean, add_eps, rsqrt, mul_rstd, type_as, mul_weight;
  std::string_view mul_weight_bwd_weight, mul_weight_bwd_input, weight_grad_sum, type_as_bwd,
      mul_rstd_bwd_rstd, mul_rstd_bwd_input, rstd_grad_sum, rsqrt_bwd_cube, rsqrt_bwd_scale,
      rsqrt_bwd_mul, mean_bwd, pow_bwd_pow1, pow_bwd_scale, pow_bwd_mul, grad_accumulate,
      to_fp32_bwd;
};

// Adjacent literals concatenate at compile time, so every name stays a literal.
#define CLUSTERSIM_NORM_NAMES(p)                                                                 \
  NormNames {                                                                                    \
    p, p ".bwd", p ".to_fp32", p ".pow", p ".mean", p ".add_eps", p ".rsqrt", p ".mul_rstd",     \
        p ".type_as", p ".mul_weight", p ".mul_weight.bwd_weight", p ".mul_weight.bwd_input",    \
        p ".weight_grad_sum", p ".type_as.bwd", p ".mul_rstd.bwd_rstd", p ".mul_rstd.bwd_input", \
        p ".rstd_grad_sum", p ".rsqrt.bwd_cube", p ".rsqrt.bwd_scale", p ".rsqrt.bwd_mul",       \
        p ".mean.bwd", p ".pow.bwd_pow1", p ".pow.bwd_scale", p ".pow.bwd_mul",                  \
        p ".grad_accumulate", p ".to_fp32.bwd"                                                   \
  }
constexpr NormNames kAttnNorm = CLUSTERSIM_NORM_NAMES("attn_norm");
constexpr NormNames kMlpNorm = CLUSTERSIM_NORM_NAMES("mlp_norm");
constexpr NormNames kFinalNorm = CLUSTERSIM_NORM_NAMES("final_norm");
#undef CLUSTERSIM_NORM_NAMES

// Compiled mode, LayerNorm (a native kernel in eager PyTorch too) and a
// fused RMSNorm kernel: one kernel. Eager RMSNorm: x.float(), pow(2),
// mean(-1), + eps, rsqrt, mul, type_as, * weight.
bool one_norm_kernel(const Dims& x) { return !x.eager || x.layer_norm || x.fused_norm; }

void norm_forward(std::vector<Kernel>& out, const NormNames& n, const Dims& x, int64_t tokens) {
  if (one_norm_kernel(x)) {
    out.push_back(norm(n.fused, x, tokens));
    return;
  }
  const double e = dbl(tokens) * dbl(x.hidden);
  const double r = dbl(tokens);
  const double d = x.d;
  const double f = kFp32Bytes;
  const KernelClass k = KernelClass::kNorm;
  out.push_back(pointwise(n.to_fp32, k, 0, (d + f) * e));
  out.push_back(pointwise(n.pow, k, e, 2 * f * e));
  out.push_back(pointwise(n.mean, k, e, f * e + f * r));
  out.push_back(pointwise(n.add_eps, k, r, 2 * f * r));
  out.push_back(pointwise(n.rsqrt, k, r, 2 * f * r));
  out.push_back(pointwise(n.mul_rstd, k, e, 2 * f * e + f * r));
  out.push_back(pointwise(n.type_as, k, 0, (f + d) * e));
  out.push_back(pointwise(n.mul_weight, k, e, 2 * d * e + d * dbl(x.hidden)));
}

// Eager: autograd's formulas for the ops above, in the order autograd runs them.
void norm_backward(std::vector<Kernel>& out, const NormNames& n, const Dims& x, int64_t tokens) {
  if (one_norm_kernel(x)) {
    out.push_back(backward_of(norm(n.fused, x, tokens), n.fused_bwd));
    return;
  }
  const double e = dbl(tokens) * dbl(x.hidden);
  const double r = dbl(tokens);
  const double h = dbl(x.hidden);
  const double d = x.d;
  const double f = kFp32Bytes;
  const KernelClass k = KernelClass::kNorm;
  out.push_back(pointwise(n.mul_weight_bwd_weight, k, e, 3 * d * e));
  out.push_back(pointwise(n.mul_weight_bwd_input, k, e, 2 * d * e + d * h));
  out.push_back(pointwise(n.weight_grad_sum, k, e, d * e + d * h));
  out.push_back(pointwise(n.type_as_bwd, k, 0, (d + f) * e));
  out.push_back(pointwise(n.mul_rstd_bwd_rstd, k, e, 3 * f * e));
  out.push_back(pointwise(n.mul_rstd_bwd_input, k, e, 2 * f * e + f * r));
  out.push_back(pointwise(n.rstd_grad_sum, k, e, f * e + f * r));
  out.push_back(pointwise(n.rsqrt_bwd_cube, k, 2 * r, 2 * f * r));
  out.push_back(pointwise(n.rsqrt_bwd_scale, k, r, 2 * f * r));
  out.push_back(pointwise(n.rsqrt_bwd_mul, k, r, 3 * f * r));
  out.push_back(pointwise(n.mean_bwd, k, e, f * e + f * r));
  out.push_back(pointwise(n.pow_bwd_pow1, k, 0, 2 * f * e));
  out.push_back(pointwise(n.pow_bwd_scale, k, e, 2 * f * e));
  out.push_back(pointwise(n.pow_bwd_mul, k, e, 3 * f * e));
  out.push_back(pointwise(n.grad_accumulate, k, e, 3 * f * e));
  out.push_back(pointwise(n.to_fp32_bwd, k, 0, (f + d) * e));
}

// Compiled: one kernel each way; eager: workloads/model/eager_rotary.h.
EagerRotaryShape rotary_shape(const Dims& x) {
  return {x.tokens, x.seq, x.head_dim, x.q_width(), x.kv_width(), x.d, x.rotary_by_matrix};
}

void rotary_forward(std::vector<Kernel>& out, const Dims& x) {
  if (x.eager) {
    eager_rotary_forward(out, rotary_shape(x));
  } else {
    out.push_back(rotary("rotary", x));
  }
}

void rotary_backward(std::vector<Kernel>& out, const Dims& x) {
  if (x.eager) {
    eager_rotary_backward(out, rotary_shape(x));
  } else {
    out.push_back(backward_of(rotary("rotary", x), "rotary.bwd"));
  }
}

// torchtitan's repeat_kv: expand + reshape copies K and V to every query
// head; eager only (see the header for compiled mode).
bool repeats_kv(const Dims& x) { return x.eager && x.kv_heads < x.q_heads; }

Kernel repeat_kv(std::string_view name, const Dims& x, bool backward) {
  const double q = dbl(x.tokens) * dbl(x.q_width());
  const double kv = dbl(x.tokens) * dbl(x.kv_width());
  return pointwise(name, KernelClass::kElementwise, backward ? q : 0, x.d * (q + kv));
}

// Eager SwiGLU: F.silu(w1(x)) * w3(x), two kernels. GELU is one native kernel.
void activation_forward(std::vector<Kernel>& out, const Dims& x) {
  if (!x.eager || !x.swiglu) {
    out.push_back(activation(x));
    return;
  }
  const double ef = dbl(x.tokens) * dbl(x.ffn);
  out.push_back(pointwise("swiglu.silu", KernelClass::kElementwise, kSiluFlops * ef, 2 * x.d * ef));
  out.push_back(pointwise("swiglu.mul", KernelClass::kElementwise, ef, 3 * x.d * ef));
}

void activation_backward(std::vector<Kernel>& out, const Dims& x) {
  if (!x.eager || !x.swiglu) {
    out.push_back(backward_of(activation(x), x.swiglu         ? "swiglu.bwd"
                                             : x.squared_relu ? "squared_relu.bwd"
                                                              : "gelu.bwd"));
    return;
  }
  const double ef = dbl(x.tokens) * dbl(x.ffn);
  const KernelClass k = KernelClass::kElementwise;
  out.push_back(pointwise("swiglu.mul.bwd_gate", k, ef, 3 * x.d * ef));
  out.push_back(pointwise("swiglu.mul.bwd_up", k, ef, 3 * x.d * ef));
  out.push_back(pointwise("swiglu.silu.bwd", k, kSiluBackwardFlops * ef, 3 * x.d * ef));
}

// Eager: autograd sums the input gradients of two linears that read the same
// input (torchtitan's separate wq, wk, wv and w1, w3): T x hidden.
Kernel grad_sum(std::string_view name, const Dims& x) {
  const double e = dbl(x.tokens) * dbl(x.hidden);
  return pointwise(name, KernelClass::kElementwise, e, 3 * x.d * e);
}

enum class Pass { kForward, kSelectiveOp, kFull };

// The block forward, or what of it re-runs under activation checkpointing
// (see the header): recomputation stops before down_proj (early stop), and
// the selective policy keeps the outputs of attention and of the odd mms.
std::vector<Kernel> forward_pass(const Dims& x, const KernelConfig& c, Pass pass) {
  const bool selective = pass == Pass::kSelectiveOp;
  const int64_t t = x.tokens;
  std::vector<Kernel> out;
  norm_forward(out, kAttnNorm, x, x.norm_tokens);
  out.push_back(selective ? linear("k_proj.recompute", t, x.hidden, x.kv_width(), x.d)
                          : linear("qkv_proj", t, x.hidden, x.q_width() + 2 * x.kv_width(), x.d));
  if (x.rotary) rotary_forward(out, x);
  if (repeats_kv(x)) {
    out.push_back(repeat_kv("repeat_kv.k", x, /*backward=*/false));
    out.push_back(repeat_kv("repeat_kv.v", x, /*backward=*/false));
  }
  if (!selective) attention_pass(out, x, c, /*backward=*/false);
  out.push_back(
      linear(selective ? "out_proj.recompute" : "out_proj", t, x.q_width(), x.hidden, x.d));
  out.push_back(residual("attn_residual", x));
  norm_forward(out, kMlpNorm, x, x.norm_tokens);
  if (!selective) {
    out.push_back(linear(mlp_in_name(x), t, x.hidden, mlp_in_width(x), x.d));
  } else if (x.swiglu) {
    out.push_back(linear("up_proj.recompute", t, x.hidden, x.ffn, x.d));  // w3; w1 saved
  }
  activation_forward(out, x);
  if (pass == Pass::kForward) {
    out.push_back(linear("down_proj", t, x.ffn, x.hidden, x.d));
    out.push_back(residual("mlp_residual", x));
  }
  return out;
}

Kernel position_add(const Dims& x) {
  const double elements = dbl(x.tokens) * dbl(x.hidden);
  return pointwise("position_embedding", KernelClass::kEmbedding, elements, x.d * 3 * elements);
}

Kernel cross_entropy(std::string_view name, const Dims& x, bool backward) {
  const double t = dbl(x.tokens);
  const double logits = t * dbl(x.vocab);
  return backward ? pointwise(name, KernelClass::kLoss, kCrossEntropyFlops * logits,
                              x.d * 2 * logits + kIdBytes * t)
                  : pointwise(name, KernelClass::kLoss, kCrossEntropyFlops * logits,
                              x.d * logits + kIdBytes * t + kStatBytes * t);
}

// Eager F.cross_entropy(logits.float(), labels): the upcast copy,
// log_softmax and nll_loss (mean), each over fp32 logits.
void cross_entropy_forward(std::vector<Kernel>& out, const Dims& x) {
  if (x.cross_entropy != CrossEntropyKernels::kAten) {
    vocab_parallel_cross_entropy(out, x.cross_entropy, dbl(x.tokens) * dbl(x.vocab), x.d,
                                 /*backward=*/false);
    return;
  }
  if (!x.eager) {
    out.push_back(cross_entropy("cross_entropy", x, /*backward=*/false));
    return;
  }
  const double t = dbl(x.tokens);
  const double l = t * dbl(x.vocab);
  const double f = kFp32Bytes;
  const KernelClass k = KernelClass::kLoss;
  out.push_back(pointwise("cross_entropy.to_fp32", k, 0, (x.d + f) * l));
  out.push_back(pointwise("cross_entropy.log_softmax", k, kLogSoftmaxFlops * l, 2 * f * l));
  out.push_back(pointwise("cross_entropy.nll_loss", k, t, (kIdBytes + f) * t + 2 * f));
}

void cross_entropy_backward(std::vector<Kernel>& out, const Dims& x) {
  if (x.cross_entropy != CrossEntropyKernels::kAten) {
    vocab_parallel_cross_entropy(out, x.cross_entropy, dbl(x.tokens) * dbl(x.vocab), x.d,
                                 /*backward=*/true);
    return;
  }
  if (!x.eager) {
    out.push_back(cross_entropy("cross_entropy.bwd", x, /*backward=*/true));
    return;
  }
  const double t = dbl(x.tokens);
  const double l = t * dbl(x.vocab);
  const double f = kFp32Bytes;
  const KernelClass k = KernelClass::kLoss;
  out.push_back(pointwise("cross_entropy.nll_loss.bwd_zero", k, 0, f * l));
  out.push_back(pointwise("cross_entropy.nll_loss.bwd", k, t, (kIdBytes + f) * t + 2 * f));
  out.push_back(pointwise("cross_entropy.log_softmax.bwd", k, kLogSoftmaxFlops * l, 3 * f * l));
  out.push_back(pointwise("cross_entropy.to_fp32.bwd", k, 0, (f + x.d) * l));
}

}  // namespace

Kernel gemm(std::string_view name, int64_t m, int64_t n, int64_t k, double d) {
  Kernel g;
  g.name = name;
  g.cls = KernelClass::kGemm;
  g.m = m;
  g.n = n;
  g.k = k;
  g.flops = 2 * dbl(m) * dbl(n) * dbl(k);
  g.bytes = d * (dbl(m) * dbl(k) + dbl(k) * dbl(n) + dbl(m) * dbl(n));
  return g;
}

Kernel pointwise(std::string_view name, KernelClass cls, double flops, double bytes) {
  Kernel p;
  p.name = name;
  p.cls = cls;
  p.flops = flops;
  p.bytes = bytes;
  return p;
}

std::string_view kernel_class_name(KernelClass cls) {
  switch (cls) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kNorm:
      return "norm";
    case KernelClass::kEmbedding:
      return "embedding";
    case KernelClass::kLoss:
      return "loss";
    case KernelClass::kOptimizer:
      return "optimizer";
  }
  return "?";
}

std::string_view kernel_fusion_name(KernelFusion fusion) {
  switch (fusion) {
    case KernelFusion::kCompiled:
      return "compiled";
    case KernelFusion::kEager:
      return "eager";
  }
  return "?";
}

std::string tensor_parallel_problem(const ModelSpec& model, int64_t tp) {
  if (tp < 1) return "expected a tensor-parallel degree >= 1, found " + std::to_string(tp);
  if (model.heads % tp != 0 || model.kv_heads % tp != 0 || model.ffn_hidden % tp != 0) {
    return "expected a tensor-parallel degree dividing heads (" + std::to_string(model.heads) +
           "), kv_heads (" + std::to_string(model.kv_heads) + ") and ffn_hidden (" +
           std::to_string(model.ffn_hidden) + "), found " + std::to_string(tp);
  }
  return "";
}

bool tp_gathers_input(std::string_view gemm_name) {
  return gemm_name == "qkv_proj" || gemm_name == "k_proj.recompute" ||
         gemm_name == "gate_up_proj" || gemm_name == "up_proj" ||
         gemm_name == "up_proj.recompute" || gemm_name == "down_proj.dgrad" ||
         gemm_name == "out_proj.dgrad";
}

namespace {

// The blocks' linears in FP8 (workloads/model/float8_kernels.h); compiled blocks fuse
// the casts' first reads into the kernels before them.
std::vector<Kernel> with_float8(std::vector<Kernel> kernels, const KernelConfig& c) {
  apply_float8(kernels, c.float8, c.fusion == KernelFusion::kCompiled, c.float8_weights_gathered,
               c.float8_weight_casts, c.float8_tp_gather && c.sequence_parallel ? c.tp : 1);
  return kernels;
}

}  // namespace

std::vector<Kernel> block_forward(const ModelSpec& model, const KernelConfig& config) {
  return with_float8(forward_pass(dims_of(model, config), config, Pass::kForward), config);
}

std::vector<Kernel> block_backward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  const int64_t t = x.tokens;
  const int64_t qkv = x.q_width() + 2 * x.kv_width();
  std::vector<Kernel> out;
  // Compiled mode keeps the residual gradient sums at the places the model
  // has always had them; eager runs each after its branch's norm backward.
  if (!x.eager) out.push_back(residual("mlp_residual.bwd", x));
  out.push_back(linear_dgrad("down_proj.dgrad", t, x.ffn, x.hidden, x.d));
  out.push_back(linear_wgrad("down_proj.wgrad", t, x.ffn, x.hidden, x.d));
  activation_backward(out, x);
  out.push_back(linear_dgrad(x.swiglu ? "gate_up_proj.dgrad" : "up_proj.dgrad", t, x.hidden,
                             mlp_in_width(x), x.d));
  out.push_back(linear_wgrad(x.swiglu ? "gate_up_proj.wgrad" : "up_proj.wgrad", t, x.hidden,
                             mlp_in_width(x), x.d));
  if (x.eager && x.swiglu) out.push_back(grad_sum("gate_up_proj.dgrad_sum", x));
  norm_backward(out, kMlpNorm, x, x.norm_tokens);
  out.push_back(residual(x.eager ? "mlp_residual.bwd" : "attn_residual.bwd", x));
  out.push_back(linear_dgrad("out_proj.dgrad", t, x.q_width(), x.hidden, x.d));
  out.push_back(linear_wgrad("out_proj.wgrad", t, x.q_width(), x.hidden, x.d));
  attention_pass(out, x, config, /*backward=*/true);
  if (repeats_kv(x)) {
    out.push_back(repeat_kv("repeat_kv.v.bwd", x, /*backward=*/true));
    out.push_back(repeat_kv("repeat_kv.k.bwd", x, /*backward=*/true));
  }
  if (x.rotary) rotary_backward(out, x);
  out.push_back(linear_dgrad("qkv_proj.dgrad", t, x.hidden, qkv, x.d));
  out.push_back(linear_wgrad("qkv_proj.wgrad", t, x.hidden, qkv, x.d));
  if (x.eager) {
    out.push_back(grad_sum("qkv_proj.dgrad_sum_kv", x));
    out.push_back(grad_sum("qkv_proj.dgrad_sum_q", x));
  }
  norm_backward(out, kAttnNorm, x, x.norm_tokens);
  if (x.eager) out.push_back(residual("attn_residual.bwd", x));
  return with_float8(std::move(out), config);
}

std::vector<Kernel> block_recompute(const ModelSpec& model, const KernelConfig& config,
                                    Recompute recompute) {
  const Dims x = dims_of(model, config);
  switch (recompute) {
    case Recompute::kNone:
      return {};
    case Recompute::kSelectiveOp:
      return with_float8(forward_pass(x, config, Pass::kSelectiveOp), config);
    case Recompute::kFull:
      return with_float8(forward_pass(x, config, Pass::kFull), config);
    case Recompute::kAttentionCore: {
      std::vector<Kernel> out;
      attention_pass(out, x, config, /*backward=*/false);
      return out;  // no GEMM of a linear: nothing for Float8
    }
  }
  return {};
}

std::vector<Kernel> embedding_forward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  const double t = dbl(x.tokens);
  const double h = dbl(x.hidden);
  const double tp = dbl(config.tp);
  std::vector<Kernel> out;
  out.push_back(pointwise("embedding", KernelClass::kEmbedding, 0,
                          kIdBytes * t + x.d * (t * h / tp + t * h)));
  if (!x.rotary) out.push_back(position_add(x));
  return out;
}

std::vector<Kernel> embedding_backward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  const double t = dbl(x.tokens);
  const double h = dbl(x.hidden);
  const double tp = dbl(config.tp);
  std::vector<Kernel> out;
  if (!x.rotary) out.push_back(backward_of(position_add(x), "position_embedding.bwd"));
  const double zero_table = x.d * dbl(x.vocab) * h;
  out.push_back(pointwise("embedding.bwd", KernelClass::kEmbedding, t * h / tp,
                          zero_table + kIdBytes * t + x.d * (t * h + 2 * t * h / tp)));
  return out;
}

std::vector<Kernel> head_forward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  std::vector<Kernel> out;
  norm_forward(out, kFinalNorm, x, x.norm_tokens);
  out.push_back(linear("lm_head", x.tokens, x.hidden, x.vocab, x.d));
  cross_entropy_forward(out, x);
  return out;
}

std::vector<Kernel> head_backward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  std::vector<Kernel> out;
  cross_entropy_backward(out, x);
  out.push_back(linear_dgrad("lm_head.dgrad", x.tokens, x.hidden, x.vocab, x.d));
  out.push_back(linear_wgrad("lm_head.wgrad", x.tokens, x.hidden, x.vocab, x.d));
  norm_backward(out, kFinalNorm, x, x.norm_tokens);
  return out;
}

double total_flops(std::span<const Kernel> kernels) {
  double sum = 0;
  for (const Kernel& k : kernels) sum += k.flops;
  return sum;
}

double total_bytes(std::span<const Kernel> kernels) {
  double sum = 0;
  for (const Kernel& k : kernels) sum += k.bytes;
  return sum;
}

double model_flops_per_token(const ModelSpec& model, int64_t seq_len, bool causal) {
  const double h = dbl(model.hidden);
  const double q_width = dbl(model.heads * model.head_dim());
  const double kv_width = dbl(model.kv_heads * model.head_dim());
  const double f = dbl(model.ffn_hidden);
  const double block_weights = h * q_width + 2 * h * kv_width + q_width * h +
                               (model.activation == Activation::kSwiGLU ? 3 : 2) * h * f;
  const double n = dbl(model.layers) * block_weights + dbl(model.vocab) * h;
  const double attention = (causal ? 6 : 12) * dbl(model.layers) * dbl(seq_len) * q_width;
  return 6 * n + attention;
}

}  // namespace clustersim::workloads
