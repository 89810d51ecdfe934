#include "workloads/model/vocab_parallel_loss.h"

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

constexpr double kFp32 = 4;
constexpr KernelClass kCls = KernelClass::kLoss;

// One pass over the logits: `read` and `written` bytes per logit, one FLOP
// per logit (max, subtract, exp, sum, divide, scale: bytes bound).
Kernel pass(std::string_view name, double logits, double read, double written) {
  return pointwise(name, kCls, logits, (read + written) * logits);
}

}  // namespace

void vocab_parallel_cross_entropy(std::vector<Kernel>& out, CrossEntropyKernels kernels,
                                  double logits, double dtype_bytes, bool backward) {
  CLUSTERSIM_CHECK(kernels != CrossEntropyKernels::kAten,
                   "vocab_parallel_cross_entropy needs a Megatron loss");
  const double l = logits;
  const double d = dtype_bytes;
  if (backward) {
    out.push_back(pass("cross_entropy.bwd", l, kFp32, kFp32));
    out.push_back(pass("cross_entropy.to_fp32.bwd", l, kFp32, d));
    return;
  }
  if (kernels == CrossEntropyKernels::kVocabParallel) {
    out.push_back(pass("cross_entropy.to_fp32", l, d, kFp32));
    out.push_back(pass("cross_entropy.max", l, kFp32, 0));
    out.push_back(pass("cross_entropy.sub_max", l, kFp32, kFp32));
  } else {
    out.push_back(pass("cross_entropy.max", l, d, kFp32));  // with the .float() copy
  }
  out.push_back(pass("cross_entropy.exp", l, kFp32, kFp32));
  out.push_back(pass("cross_entropy.sum_exp", l, kFp32, 0));
  out.push_back(pass("cross_entropy.softmax", l, kFp32, kFp32));
}

}  // namespace clustersim::workloads
