#include "workloads/model/eager_rotary.h"

namespace clustersim::workloads {

namespace {

constexpr double kFp32 = 4;
constexpr double kComplexMulFlops = 3;  // per real element (see the header)
constexpr double kRotationFlops = 2;    // one product and one sum per output element
constexpr KernelClass kCls = KernelClass::kElementwise;

double dbl(int64_t x) { return static_cast<double>(x); }

double q_elements(const EagerRotaryShape& r) { return dbl(r.tokens) * dbl(r.q_width); }
double k_elements(const EagerRotaryShape& r) { return dbl(r.tokens) * dbl(r.kv_width); }
// freqs_cis[:seq]: seq x head_dim / 2 complex64 values.
double complex_table(const EagerRotaryShape& r) { return kFp32 * dbl(r.seq) * dbl(r.head_dim); }
// The gathered rotation matrices: T x head_dim / 2 pairs of 2 x 2 fp32 values.
double rotation_table(const EagerRotaryShape& r) {
  return 2 * kFp32 * dbl(r.tokens) * dbl(r.head_dim);
}

void complex_forward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  const double q = q_elements(r), k = k_elements(r), t = complex_table(r);
  const double d = r.dtype_bytes, f = kFp32;
  out.push_back(pointwise("rotary.q_to_fp32", kCls, 0, (d + f) * q));
  out.push_back(pointwise("rotary.k_to_fp32", kCls, 0, (d + f) * k));
  out.push_back(pointwise("rotary.q_mul_freqs", kCls, kComplexMulFlops * q, 2 * f * q + t));
  out.push_back(pointwise("rotary.k_mul_freqs", kCls, kComplexMulFlops * k, 2 * f * k + t));
  out.push_back(pointwise("rotary.q_type_as", kCls, 0, (f + d) * q));
  out.push_back(pointwise("rotary.k_type_as", kCls, 0, (f + d) * k));
}

void complex_backward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  const double q = q_elements(r), k = k_elements(r), t = complex_table(r);
  const double d = r.dtype_bytes, f = kFp32;
  out.push_back(pointwise("rotary.k_type_as.bwd", kCls, 0, (d + f) * k));
  out.push_back(pointwise("rotary.q_type_as.bwd", kCls, 0, (d + f) * q));
  out.push_back(pointwise("rotary.k_conj_freqs", kCls, 0, 2 * t));
  out.push_back(pointwise("rotary.k_mul_freqs.bwd", kCls, kComplexMulFlops * k, 2 * f * k + t));
  out.push_back(pointwise("rotary.q_conj_freqs", kCls, 0, 2 * t));
  out.push_back(pointwise("rotary.q_mul_freqs.bwd", kCls, kComplexMulFlops * q, 2 * f * q + t));
  out.push_back(pointwise("rotary.k_to_fp32.bwd", kCls, 0, (f + d) * k));
  out.push_back(pointwise("rotary.q_to_fp32.bwd", kCls, 0, (f + d) * q));
}

// One of q, k: names are literals (Kernel::name is a view).
struct MatrixNames {
  std::string_view mul, sum, type_as, type_as_bwd, mul_bwd, sum_bwd;
};
constexpr MatrixNames kQ{"rotary.q_mul_rotation",     "rotary.q_sum_pairs",
                         "rotary.q_type_as",          "rotary.q_type_as.bwd",
                         "rotary.q_mul_rotation.bwd", "rotary.q_sum_to_pairs"};
constexpr MatrixNames kK{"rotary.k_mul_rotation",     "rotary.k_sum_pairs",
                         "rotary.k_type_as",          "rotary.k_type_as.bwd",
                         "rotary.k_mul_rotation.bwd", "rotary.k_sum_to_pairs"};

void matrix_forward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  const double q = q_elements(r), k = k_elements(r), g = rotation_table(r);
  const double d = r.dtype_bytes, f = kFp32;
  out.push_back(pointwise("rotary.q_to_fp32", kCls, 0, (d + f) * q));
  out.push_back(pointwise("rotary.k_to_fp32", kCls, 0, (d + f) * k));
  out.push_back(pointwise("rotary.freqs_gather", kCls, 0, 2 * g));
  for (const auto& [n, e] : {std::pair{kQ, q}, std::pair{kK, k}}) {
    out.push_back(pointwise(n.mul, kCls, kRotationFlops * e, 3 * f * e + g));
    out.push_back(pointwise(n.sum, kCls, kRotationFlops * e, 3 * f * e));
    out.push_back(pointwise(n.type_as, kCls, 0, (f + d) * e));
  }
}

void matrix_backward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  const double q = q_elements(r), k = k_elements(r), g = rotation_table(r);
  const double d = r.dtype_bytes, f = kFp32;
  for (const auto& [n, e] : {std::pair{kK, k}, std::pair{kQ, q}}) {
    out.push_back(pointwise(n.type_as_bwd, kCls, 0, (d + f) * e));
    out.push_back(pointwise(n.mul_bwd, kCls, kRotationFlops * e, 3 * f * e + g));
    out.push_back(pointwise(n.sum_bwd, kCls, kRotationFlops * e, 3 * f * e));
  }
  out.push_back(pointwise("rotary.k_to_fp32.bwd", kCls, 0, (f + d) * k));
  out.push_back(pointwise("rotary.q_to_fp32.bwd", kCls, 0, (f + d) * q));
}

}  // namespace

void eager_rotary_forward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  if (r.by_matrix) {
    matrix_forward(out, r);
  } else {
    complex_forward(out, r);
  }
}

void eager_rotary_backward(std::vector<Kernel>& out, const EagerRotaryShape& r) {
  if (r.by_matrix) {
    matrix_backward(out, r);
  } else {
    complex_backward(out, r);
  }
}

}  // namespace clustersim::workloads
