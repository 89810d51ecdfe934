#include "workloads/model/ring_attention.h"

#include <string>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

constexpr double kFp32 = 4;
constexpr double kStatBytes = 4;  // fp32 log-sum-exp per row and head
constexpr double kAttentionBackward = 2.5;
constexpr double kMergeFlops = 3;

double dbl(int64_t x) { return static_cast<double>(x); }

void check(const RingAttentionShape& a) {
  CLUSTERSIM_CHECK(a.cp > 1 && a.batch > 0 && a.local_seq > 0 && a.local_seq % 2 == 0 &&
                       a.heads > 0 && a.head_dim > 0,
                   "ring attention needs cp > 1 and an even local sequence, found cp " +
                       std::to_string(a.cp) + ", L " + std::to_string(a.local_seq));
}

// b L Qw: elements of the local Q (= O, dO, dQ); b L Kw: of K (= V, dK, dV).
double q_elements(const RingAttentionShape& a) {
  return dbl(a.batch) * dbl(a.local_seq) * dbl(a.heads) * dbl(a.head_dim);
}
double kv_elements(const RingAttentionShape& a) {
  return dbl(a.batch) * dbl(a.local_seq) * dbl(a.kv_heads) * dbl(a.head_dim);
}
double rows(const RingAttentionShape& a) { return dbl(a.batch) * dbl(a.local_seq) * dbl(a.heads); }

Kernel flash(std::string_view name, const RingAttentionShape& a, bool local, bool backward) {
  Kernel k;
  k.name = name;
  k.cls = KernelClass::kAttention;
  k.batch = a.batch;
  k.seq = local ? a.local_seq : a.local_seq / 2;
  k.heads = a.heads;
  k.kv_heads = a.kv_heads;
  k.head_dim = a.head_dim;
  k.causal = local;
  const double l = dbl(a.local_seq);
  // The local causal step and each half step do the same work.
  const double forward = 2 * dbl(a.batch) * l * l * dbl(a.heads) * dbl(a.head_dim);
  k.flops = backward ? kAttentionBackward * forward : forward;
  const double q = q_elements(a);
  const double kv = kv_elements(a);
  const double stat_rows = local ? rows(a) : 0.75 * rows(a);
  // A half step's tensors: the mean of its two shapes (q of L, k and v of
  // L / 2; q of L / 2, k and v of L).
  if (backward) {
    k.bytes = a.dtype_bytes * (local ? 4 * (q + kv) : 3 * (q + kv)) + kStatBytes * 3 * stat_rows;
  } else {
    k.bytes = a.dtype_bytes * (local ? 2 * (q + kv) : 1.5 * (q + kv)) + kStatBytes * stat_rows;
  }
  return k;
}

Kernel kv_cat(const RingAttentionShape& a) {
  return pointwise("attention.cp_kv_cat", KernelClass::kElementwise, 0,
                   2 * a.dtype_bytes * 2 * kv_elements(a));
}

}  // namespace

int64_t ring_kv_bytes(const RingAttentionShape& a) {
  return 2 * a.batch * a.local_seq * a.kv_heads * a.head_dim * static_cast<int64_t>(a.dtype_bytes);
}

int64_t ring_kv_grad_bytes(const RingAttentionShape& a) {
  return 2 * a.batch * a.local_seq * a.kv_heads * a.head_dim * static_cast<int64_t>(kFp32);
}

void ring_attention_forward(std::vector<Kernel>& out, const RingAttentionShape& a) {
  check(a);
  const double q = q_elements(a);
  const double c = a.dtype_bytes;
  const double merged = 0.75 * q;
  for (int64_t i = 0; i < a.cp; ++i) {
    if (i < a.cp - 1) out.push_back(kv_cat(a));
    if (i == 0) {
      out.push_back(flash("attention", a, /*local=*/true, /*backward=*/false));
      continue;
    }
    out.push_back(flash("attention.cp_step", a, /*local=*/false, /*backward=*/false));
    out.push_back(pointwise("attention.cp_merge", KernelClass::kElementwise, kMergeFlops * merged,
                            (32 + c) * merged));
  }
  out.push_back(
      pointwise("attention.cp_out_cast", KernelClass::kElementwise, 0, 2 * (kFp32 + c) * q));
}

void ring_attention_backward(std::vector<Kernel>& out, const RingAttentionShape& a) {
  check(a);
  const double q = q_elements(a);
  const double kv = kv_elements(a);
  const double c = a.dtype_bytes;
  const double ring_cat = 2 * kFp32 * (2 * kv);  // dK, dV read and written in fp32
  const double all = q + 2 * kv;                 // dQ, dK, dV of the whole local L
  const double half = 0.75 * q + 1.5 * kv;       // ... of a half step, on average
  for (int64_t i = 0; i < a.cp; ++i) {
    if (i < a.cp - 1) out.push_back(kv_cat(a));
    if (i == 0) {
      out.push_back(flash("attention.bwd", a, /*local=*/true, /*backward=*/true));
      out.push_back(pointwise("attention.cp_grad_init", KernelClass::kElementwise, all,
                              kFp32 * all + (8 + c) * all + ring_cat));
      continue;
    }
    out.push_back(flash("attention.cp_step.bwd", a, /*local=*/false, /*backward=*/true));
    out.push_back(pointwise("attention.cp_grad_accumulate", KernelClass::kElementwise, half,
                            (8 + c) * half + ring_cat));
  }
  out.push_back(
      pointwise("attention.cp_grad_cast", KernelClass::kElementwise, 0, (kFp32 + c) * all));
}

}  // namespace clustersim::workloads
