#include "workloads/model/compute_model.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "sim/check.h"
#include "workloads/model/float8_kernels.h"

namespace clustersim::workloads {

double EfficiencyCurve::at(double x, double dim, bool causal) const {
  const double size = std::max(x, 1.0);
  // e_max / (1 + h / x + d / dim) written as e_max x / (x + h + x d / dim),
  // which without shape terms is bit for bit the plain curve.
  const double half = x_half + (causal ? causal_x_half : 0.0);
  const double shape = dim > 0 && dim_half > 0 ? size * dim_half / dim : 0.0;
  return e_max * size / (size + half + shape);
}

namespace {

EfficiencyCurve curve_of(const collectives::EfficiencyCurveParams& params) {
  return EfficiencyCurve{.e_max = params.e_max,
                         .x_half = params.x_half,
                         .dim_half = params.dim_half,
                         .causal_x_half = params.causal_x_half};
}

}  // namespace

GpuComputeSpec compute_spec_from_profile(const collectives::HardwareProfile& profile,
                                         bool cudnn_attention) {
  const collectives::GpuProfile& gpu = profile.gpu;
  GpuComputeSpec spec;
  spec.hardware = gpu.curves_fitted_to;
  spec.peak_flops = gpu.peak_flops_per_s;
  spec.peak_fp8_flops = gpu.peak_fp8_flops_per_s;
  spec.fp8_gemm_efficiency = gpu.fp8_gemm_efficiency;
  spec.peak_fp4_flops = gpu.peak_fp4_flops_per_s;
  spec.mxfp8_gemm_efficiency = gpu.mxfp8_gemm_efficiency;
  spec.nvfp4_gemm_efficiency = gpu.nvfp4_gemm_efficiency;
  spec.hbm_Bps = gpu.hbm_Bps;
  spec.mem_efficiency = gpu.mem_efficiency;
  // The profile's classes are named as the kernels' (kernel_class_name).
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    const std::string_view name = kernel_class_name(static_cast<KernelClass>(c));
    for (const collectives::MemEfficiencyClassKey& k : collectives::kMemEfficiencyClasses) {
      if (k.name == name) spec.mem_efficiency_by_class[c] = gpu.mem_efficiency_by_class.*k.field;
    }
  }
  spec.gemm = curve_of(gpu.gemm);
  const bool cudnn = cudnn_attention && gpu.cudnn_attention_fwd && gpu.cudnn_attention_bwd;
  spec.attention_fwd = curve_of(cudnn ? *gpu.cudnn_attention_fwd : gpu.attention_fwd);
  spec.attention_bwd = curve_of(cudnn ? *gpu.cudnn_attention_bwd : gpu.attention_bwd);
  spec.comm_overlap_slowdown = gpu.comm_overlap_slowdown;
  spec.sustained_clock = gpu.sustained_clock;
  spec.speed_variation = gpu.speed_variation;
  spec.segment_jitter = gpu.segment_jitter;
  return spec;
}

double gemm_size(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double attention_size(int64_t seq, bool causal) {
  return causal ? static_cast<double>(seq) / 2.0 : static_cast<double>(seq);
}

namespace {

bool is_backward(std::string_view name) {
  return name.size() >= 4 && name.substr(name.size() - 4) == ".bwd";
}

}  // namespace

double gemm_peak(GemmFormat format, const GpuComputeSpec& spec) {
  switch (format) {
    case GemmFormat::kBf16:
      return spec.peak_flops;
    case GemmFormat::kFp8:
    case GemmFormat::kMxfp8:
      return spec.peak_fp8_flops;
    case GemmFormat::kNvfp4:
      return spec.peak_fp4_flops;
  }
  return spec.peak_flops;
}

double gemm_format_efficiency(GemmFormat format, const GpuComputeSpec& spec) {
  switch (format) {
    case GemmFormat::kBf16:
      return 1.0;
    case GemmFormat::kFp8:
      return spec.fp8_gemm_efficiency;
    case GemmFormat::kMxfp8:
      return spec.mxfp8_gemm_efficiency;
    case GemmFormat::kNvfp4:
      return spec.nvfp4_gemm_efficiency;
  }
  return 1.0;
}

double kernel_efficiency(const Kernel& kernel, const GpuComputeSpec& spec) {
  switch (kernel.cls) {
    case KernelClass::kGemm: {
      EfficiencyCurve curve = spec.gemm;
      if (kernel.format != GemmFormat::kBf16) {
        curve.x_half *= gemm_peak(kernel.format, spec) / spec.peak_flops;
        curve.e_max *= gemm_format_efficiency(kernel.format, spec);
      }
      // Without a shape, the FLOPs are the work.
      if (kernel.m > 0 && kernel.n > 0 && kernel.k > 0) {
        const double smallest = static_cast<double>(std::min({kernel.m, kernel.n, kernel.k}));
        // A grouped GEMM pays the kernel's fixed cost once over all its problems.
        const auto groups = static_cast<double>(std::max<int64_t>(1, kernel.groups));
        return curve.at(groups * gemm_size(kernel.m, kernel.n, kernel.k), smallest, false);
      }
      return curve(kernel.flops);
    }
    case KernelClass::kAttention: {
      const EfficiencyCurve& curve =
          is_backward(kernel.name) ? spec.attention_bwd : spec.attention_fwd;
      return curve.at(attention_size(kernel.seq, kernel.causal),
                      static_cast<double>(kernel.head_dim), kernel.causal);
    }
    case KernelClass::kElementwise:
    case KernelClass::kNorm:
    case KernelClass::kEmbedding:
    case KernelClass::kLoss:
    case KernelClass::kOptimizer:
      return 1.0;
  }
  return 1.0;
}

double memory_efficiency(KernelClass cls, const GpuComputeSpec& spec) {
  const double own = spec.mem_efficiency_by_class[static_cast<size_t>(cls)];
  return own > 0 ? own : spec.mem_efficiency;
}

double kernel_seconds(const Kernel& kernel, const GpuComputeSpec& spec, bool comm_active) {
  CLUSTERSIM_CHECK(spec.peak_flops > 0 && spec.hbm_Bps > 0 && spec.mem_efficiency > 0 &&
                       spec.mem_efficiency <= 1 && spec.comm_overlap_slowdown >= 1 &&
                       spec.sustained_clock > 0 && spec.sustained_clock <= 1 &&
                       spec.stack_efficiency > 0,
                   "GpuComputeSpec " + spec.hardware + " out of range");
  CLUSTERSIM_CHECK(kernel.flops >= 0 && kernel.bytes >= 0,
                   "kernel " + std::string(kernel.name) + " has negative flops or bytes");
  const double peak = gemm_peak(kernel.format, spec);
  CLUSTERSIM_CHECK(peak > 0, std::string(gemm_format_name(kernel.format)) + " kernel " +
                                 std::string(kernel.name) + " on " + spec.hardware +
                                 ", which has no peak for it");
  const double compute_s =
      kernel.flops > 0 ? kernel.flops / (peak * spec.sustained_clock * spec.stack_efficiency *
                                         kernel_efficiency(kernel, spec))
                       : 0.0;
  const double memory_s = kernel.bytes / (spec.hbm_Bps * memory_efficiency(kernel.cls, spec));
  double seconds = std::max(compute_s, memory_s);
  if (comm_active) seconds *= spec.comm_overlap_slowdown;
  return seconds;
}

sim::SimTime kernel_time(const Kernel& kernel, const GpuComputeSpec& spec, bool comm_active) {
  return sim::SimTime::from_seconds_rounded(kernel_seconds(kernel, spec, comm_active));
}

}  // namespace clustersim::workloads
