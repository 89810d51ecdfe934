#include "workloads/model/math_attention.h"

#include <string_view>

namespace clustersim::workloads {

namespace {

constexpr double kFp32 = 4;
constexpr double kMaskBytes = 1;  // torch.bool
// FLOPs per score: softmax's max, subtract, exp, sum and divide (5), its
// backward's (y * (dy - sum(y * dy)): 3); scale and mask 1 each.
constexpr double kSoftmaxFlops = 5;
constexpr double kSoftmaxBackwardFlops = 3;

double dbl(int64_t x) { return static_cast<double>(x); }

// A batched GEMM of `count` independent m x n x k products, stacked along m.
Kernel batched_gemm(std::string_view name, int64_t count, int64_t m, int64_t n, int64_t k,
                    double d) {
  Kernel g;
  g.name = name;
  g.cls = KernelClass::kGemm;
  g.m = count * m;
  g.n = n;
  g.k = k;
  g.flops = 2 * dbl(count) * dbl(m) * dbl(n) * dbl(k);
  g.bytes = d * dbl(count) * (dbl(m) * dbl(k) + dbl(k) * dbl(n) + dbl(m) * dbl(n));
  return g;
}

}  // namespace

void math_attention_forward(std::vector<Kernel>& out, const MathAttentionShape& a) {
  const int64_t bh = a.batch * a.heads;
  const double e = dbl(bh) * dbl(a.seq) * dbl(a.seq);
  const double c = a.dtype_bytes;
  out.push_back(batched_gemm("attention.scores", bh, a.seq, a.seq, a.head_dim, c));
  if (a.eager) {
    out.push_back(pointwise("attention.scale", KernelClass::kElementwise, e, 2 * c * e));
    out.push_back(
        pointwise("attention.mask", KernelClass::kElementwise, e, 2 * c * e + kMaskBytes * e));
    out.push_back(pointwise("attention.softmax", KernelClass::kElementwise, kSoftmaxFlops * e,
                            (c + kFp32) * e));
    out.push_back(
        pointwise("attention.softmax_cast", KernelClass::kElementwise, 0, (kFp32 + c) * e));
  } else {
    out.push_back(pointwise("attention.softmax", KernelClass::kElementwise, (kSoftmaxFlops + 2) * e,
                            2 * c * e));
  }
  out.push_back(batched_gemm("attention.context", bh, a.seq, a.head_dim, a.seq, c));
}

void math_attention_backward(std::vector<Kernel>& out, const MathAttentionShape& a) {
  const int64_t bh = a.batch * a.heads;
  const double e = dbl(bh) * dbl(a.seq) * dbl(a.seq);
  const double c = a.dtype_bytes;
  // dP = dO V^T (s x d times d x s), dV = P^T dO (s x s times s x d).
  out.push_back(batched_gemm("attention.context.dgrad", bh, a.seq, a.seq, a.head_dim, c));
  out.push_back(batched_gemm("attention.context.wgrad", bh, a.seq, a.head_dim, a.seq, c));
  if (a.eager) {
    out.push_back(
        pointwise("attention.softmax_cast.bwd", KernelClass::kElementwise, 0, (c + kFp32) * e));
    // Reads the fp32 output and gradient, writes the input gradient (c).
    out.push_back(pointwise("attention.softmax.bwd", KernelClass::kElementwise,
                            kSoftmaxBackwardFlops * e, (2 * kFp32 + c) * e));
    out.push_back(
        pointwise("attention.mask.bwd", KernelClass::kElementwise, e, 2 * c * e + kMaskBytes * e));
    out.push_back(pointwise("attention.scale.bwd", KernelClass::kElementwise, e, 2 * c * e));
  } else {
    out.push_back(pointwise("attention.softmax.bwd", KernelClass::kElementwise,
                            (kSoftmaxBackwardFlops + 2) * e, 3 * c * e));
  }
  // dQ = dS K (s x s times s x d), dK = dS^T Q.
  out.push_back(batched_gemm("attention.scores.dgrad", bh, a.seq, a.head_dim, a.seq, c));
  out.push_back(batched_gemm("attention.scores.wgrad", bh, a.seq, a.head_dim, a.seq, c));
}

}  // namespace clustersim::workloads
