#include "workloads/model/moe_kernels.h"

#include "sim/check.h"

namespace clustersim::workloads {

Kernel grouped_gemm(std::string_view name, std::span<const int64_t> rows, int64_t n, int64_t k,
                    double activation_bytes, double weight_bytes, GemmFormat format) {
  CLUSTERSIM_CHECK(n > 0 && k > 0, "grouped_gemm: n, k > 0");
  int64_t groups = 0;
  int64_t padded = 0;
  int64_t tokens = 0;
  for (const int64_t r : rows) {
    CLUSTERSIM_CHECK(r >= 0, "grouped_gemm: rows >= 0");
    if (r == 0) continue;
    ++groups;
    padded += (r + kGroupedTileRows - 1) / kGroupedTileRows * kGroupedTileRows;
    tokens += r;
  }
  Kernel kernel;
  kernel.name = name;
  kernel.cls = KernelClass::kGemm;
  kernel.format = format;
  if (groups == 0) return kernel;  // no tokens: nothing to compute
  kernel.groups = groups;
  kernel.m = padded / groups;
  kernel.n = n;
  kernel.k = k;
  const auto nk = static_cast<double>(n) * static_cast<double>(k);
  kernel.flops = 2.0 * static_cast<double>(padded) * nk;
  kernel.bytes = static_cast<double>(groups) * nk * weight_bytes +
                 static_cast<double>(tokens) * static_cast<double>(n + k) * activation_bytes;
  return kernel;
}

}  // namespace clustersim::workloads
