#include "workloads/transformer_kernels.h"

#include <string>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

// FLOPs per element of the bandwidth-bound kernels (see the header).
constexpr double kRmsNormFlops = 4;
constexpr double kLayerNormFlops = 7;
constexpr double kRotaryFlops = 3;
constexpr double kResidualFlops = 1;
constexpr double kSwigluFlops = 5;
constexpr double kGeluFlops = 9;
constexpr double kCrossEntropyFlops = 4;
constexpr double kAdamwFlops = 14;
// Backward of a norm or elementwise kernel relative to its forward.
constexpr double kPointwiseBackward = 2;
// FlashAttention-2: five matmuls in the backward against two forward.
constexpr double kAttentionBackward = 2.5;

constexpr double kIdBytes = 8;    // int64 token ids and labels
constexpr double kStatBytes = 4;  // fp32 softmax statistics and per-token loss

double dbl(int64_t x) { return static_cast<double>(x); }

// Per-rank sizes of one block; all counts are exact integers.
struct Dims {
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
  bool rotary = true;
  bool layer_norm = false;

  int64_t q_width() const { return q_heads * head_dim; }
  int64_t kv_width() const { return kv_heads * head_dim; }
};

Dims dims_of(const ModelSpec& model, const KernelConfig& c) {
  CLUSTERSIM_CHECK(c.seq_len > 0 && c.micro_batch > 0 && c.dtype_bytes > 0,
                   "seq_len " + std::to_string(c.seq_len) + ", micro_batch " +
                       std::to_string(c.micro_batch) + ", dtype_bytes " +
                       std::to_string(c.dtype_bytes));
  const std::string problem = tensor_parallel_problem(model, c.tp);
  CLUSTERSIM_CHECK(problem.empty(), "tp " + std::to_string(c.tp) + ": " + problem);
  Dims x;
  x.tokens = c.micro_batch * c.seq_len;
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
  x.rotary = model.learned_positions == 0;
  x.layer_norm = model.norm == NormKind::kLayerNorm;
  return x;
}

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

Kernel pointwise(std::string_view name, KernelClass cls, double flops, double bytes) {
  Kernel p;
  p.name = name;
  p.cls = cls;
  p.flops = flops;
  p.bytes = bytes;
  return p;
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
  return x.swiglu ? pointwise("swiglu", KernelClass::kElementwise, kSwigluFlops * elements,
                              x.d * 3 * elements)
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

std::string_view mlp_in_name(const Dims& x) { return x.swiglu ? "gate_up_proj" : "up_proj"; }
int64_t mlp_in_width(const Dims& x) { return x.swiglu ? 2 * x.ffn : x.ffn; }

}  // namespace

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

std::string tensor_parallel_problem(const ModelSpec& model, int64_t tp) {
  if (tp < 1) return "expected a tensor-parallel degree >= 1, found " + std::to_string(tp);
  if (model.heads % tp != 0 || model.kv_heads % tp != 0 || model.ffn_hidden % tp != 0) {
    return "expected a tensor-parallel degree dividing heads (" + std::to_string(model.heads) +
           "), kv_heads (" + std::to_string(model.kv_heads) + ") and ffn_hidden (" +
           std::to_string(model.ffn_hidden) + "), found " + std::to_string(tp);
  }
  return "";
}

std::vector<Kernel> block_forward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  const int64_t t = x.tokens;
  std::vector<Kernel> out;
  out.push_back(norm("attn_norm", x, x.norm_tokens));
  out.push_back(linear("qkv_proj", t, x.hidden, x.q_width() + 2 * x.kv_width(), x.d));
  if (x.rotary) out.push_back(rotary("rotary", x));
  out.push_back(attention("attention", x, config, /*backward=*/false));
  out.push_back(linear("out_proj", t, x.q_width(), x.hidden, x.d));
  out.push_back(residual("attn_residual", x));
  out.push_back(norm("mlp_norm", x, x.norm_tokens));
  out.push_back(linear(mlp_in_name(x), t, x.hidden, mlp_in_width(x), x.d));
  out.push_back(activation(x));
  out.push_back(linear("down_proj", t, x.ffn, x.hidden, x.d));
  out.push_back(residual("mlp_residual", x));
  return out;
}

std::vector<Kernel> block_backward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  const int64_t t = x.tokens;
  const int64_t qkv = x.q_width() + 2 * x.kv_width();
  std::vector<Kernel> out;
  out.push_back(residual("mlp_residual.bwd", x));
  out.push_back(linear_dgrad("down_proj.dgrad", t, x.ffn, x.hidden, x.d));
  out.push_back(linear_wgrad("down_proj.wgrad", t, x.ffn, x.hidden, x.d));
  out.push_back(backward_of(activation(x), x.swiglu ? "swiglu.bwd" : "gelu.bwd"));
  out.push_back(linear_dgrad(x.swiglu ? "gate_up_proj.dgrad" : "up_proj.dgrad", t, x.hidden,
                             mlp_in_width(x), x.d));
  out.push_back(linear_wgrad(x.swiglu ? "gate_up_proj.wgrad" : "up_proj.wgrad", t, x.hidden,
                             mlp_in_width(x), x.d));
  out.push_back(backward_of(norm("mlp_norm", x, x.norm_tokens), "mlp_norm.bwd"));
  out.push_back(residual("attn_residual.bwd", x));
  out.push_back(linear_dgrad("out_proj.dgrad", t, x.q_width(), x.hidden, x.d));
  out.push_back(linear_wgrad("out_proj.wgrad", t, x.q_width(), x.hidden, x.d));
  out.push_back(attention("attention.bwd", x, config, /*backward=*/true));
  if (x.rotary) out.push_back(backward_of(rotary("rotary", x), "rotary.bwd"));
  out.push_back(linear_dgrad("qkv_proj.dgrad", t, x.hidden, qkv, x.d));
  out.push_back(linear_wgrad("qkv_proj.wgrad", t, x.hidden, qkv, x.d));
  out.push_back(backward_of(norm("attn_norm", x, x.norm_tokens), "attn_norm.bwd"));
  return out;
}

namespace {

Kernel position_add(const Dims& x) {
  const double elements = dbl(x.tokens) * dbl(x.hidden);
  return pointwise("position_embedding", KernelClass::kEmbedding, elements, x.d * 3 * elements);
}

}  // namespace

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

namespace {

Kernel cross_entropy(std::string_view name, const Dims& x, bool backward) {
  const double t = dbl(x.tokens);
  const double logits = t * dbl(x.vocab);
  return backward ? pointwise(name, KernelClass::kLoss, kCrossEntropyFlops * logits,
                              x.d * 2 * logits + kIdBytes * t)
                  : pointwise(name, KernelClass::kLoss, kCrossEntropyFlops * logits,
                              x.d * logits + kIdBytes * t + kStatBytes * t);
}

}  // namespace

std::vector<Kernel> head_forward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  std::vector<Kernel> out;
  out.push_back(norm("final_norm", x, x.norm_tokens));
  out.push_back(linear("lm_head", x.tokens, x.hidden, x.vocab, x.d));
  out.push_back(cross_entropy("cross_entropy", x, /*backward=*/false));
  return out;
}

std::vector<Kernel> head_backward(const ModelSpec& model, const KernelConfig& config) {
  const Dims x = dims_of(model, config);
  std::vector<Kernel> out;
  out.push_back(cross_entropy("cross_entropy.bwd", x, /*backward=*/true));
  out.push_back(linear_dgrad("lm_head.dgrad", x.tokens, x.hidden, x.vocab, x.d));
  out.push_back(linear_wgrad("lm_head.wgrad", x.tokens, x.hidden, x.vocab, x.d));
  out.push_back(backward_of(norm("final_norm", x, x.norm_tokens), "final_norm.bwd"));
  return out;
}

Kernel adamw_step(int64_t local_params, const OptimizerPrecision& precision) {
  CLUSTERSIM_CHECK(local_params >= 0 && precision.grad_bytes > 0 && precision.param_copy_bytes >= 0,
                   "local_params " + std::to_string(local_params));
  const double n = dbl(local_params);
  const double per_param = dbl(precision.grad_bytes) + 12 + 12 + dbl(precision.param_copy_bytes);
  return pointwise("adamw", KernelClass::kOptimizer, kAdamwFlops * n, per_param * n);
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
