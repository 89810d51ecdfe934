// Float8 against the one microbenchmark it is fitted to, and a second it is
// not: torchao's README (torchao/float8/README.md, "Performance") reports the
// speedup of Float8Linear (tensorwise, torch.compile) over bf16 for the
// forward and backward of a LayerNorm -> Linear -> sigmoid module on an
// H100: 0.80 at M, K, N = 1024, 2048, 1024 (Example 1) and 1.39 at 4096,
// 8192, 16384 (Example 2). The module as kernels here: LayerNorm (7 FLOPs,
// its input read and output written in bf16, the weight and bias), the
// linear's three GEMMs, sigmoid (its input read, output written) and their
// backwards (sigmoid's reads its output and the incoming gradient and writes
// one; LayerNorm's twice its forward); at the microbenchmark's nominal clock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hardware/hardware_profile.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/float8_kernels.h"

namespace clustersim::workloads {
namespace {

std::vector<Kernel> ln_linear_sigmoid(int64_t m, int64_t k, int64_t n) {
  const double x = static_cast<double>(m * k), y = static_cast<double>(m * n);
  const double ln_params = 2.0 * 2 * static_cast<double>(k);  // bf16 weight and bias
  return {pointwise("ln", KernelClass::kNorm, 7 * x, 2 * 2 * x + ln_params),
          gemm("proj", m, n, k, 2),
          pointwise("sigmoid", KernelClass::kElementwise, 4 * y, 2 * 2 * y),
          pointwise("sigmoid.bwd", KernelClass::kElementwise, 3 * y, 3 * 2 * y),
          gemm("proj.dgrad", m, k, n, 2),
          gemm("proj.wgrad", k, n, m, 2),
          pointwise("ln.bwd", KernelClass::kNorm, 14 * x, 2 * (2 * 2 * x + ln_params))};
}

double seconds(const std::vector<Kernel>& ks, const GpuComputeSpec& spec) {
  double t = 0;
  for (const Kernel& k : ks) t += kernel_seconds(k, spec);
  return t;
}

// bf16 time over Float8 time of the module; compiled, so the casts' first
// reads fuse into LayerNorm and sigmoid's backward.
double float8_speedup(int64_t m, int64_t k, int64_t n) {
  GpuComputeSpec spec = compute_spec_from_profile(collectives::load_hardware_profile(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/hardware/h100.yaml"));
  spec.sustained_clock = 1.0;
  const std::vector<Kernel> bf16 = ln_linear_sigmoid(m, k, n);
  std::vector<Kernel> fp8 = bf16;
  apply_float8(fp8, Float8Recipe::kTensorwise, /*fused_with_producer=*/true);
  return seconds(bf16, spec) / seconds(fp8, spec);
}

// h100.yaml's gpu.fp8_gemm_efficiency (0.913) is fitted to Example 2; this
// checks that it stays fitted.
TEST(Float8Microbenchmark, FittedFp8GemmEfficiencyGivesTorchaosExample2) {
  EXPECT_NEAR(float8_speedup(4096, 8192, 16384), 1.39, 0.005);
}

// Not fitted: small GEMMs, where the casts weigh most. Measured 0.80; the
// model gives 0.89 (it has no per-kernel floor for the small cast kernels).
TEST(Float8Microbenchmark, Example1IsAPredictionAndOptimistic) {
  const double speedup = float8_speedup(1024, 2048, 1024);
  EXPECT_NEAR(speedup, 0.892, 0.005);
  EXPECT_GT(speedup, 0.80);
}

}  // namespace
}  // namespace clustersim::workloads
