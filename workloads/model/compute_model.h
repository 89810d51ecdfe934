// Compute cost of one GPU kernel: a roofline with calibrated efficiency
// (docs/architecture.md, the model layer):
//   time = max(flops / (peak_flops * sustained_clock * stack_efficiency * eff_class(shape)),
//              bytes / (hbm_Bps * mem_efficiency(class)))
// times comm_overlap_slowdown while communication kernels share the SMs.
//
// Efficiency curves: eff(x) = e_max * x / (x + x_half), bounded to (0, e_max]
// with e_max in (0, 1], non-decreasing in x, half of e_max at x = x_half,
// optionally lowered by a shape term (EfficiencyCurve::at). The size x is, by
// kernel class:
//  * kGemm: the work 2*m*n*k in FLOPs (a fixed per-kernel cost -- launch,
//    tile-wave fill and drain -- amortised over the work); the shape term is
//    the smallest of m, n, k (skinny GEMMs stream their large operand); a
//    grouped GEMM (Kernel::groups > 1) is one kernel: its work is all its
//    problems', its shape one problem's (m the mean rows). A
//    low-precision GEMM (Kernel::format) runs at its format's peak (FP8 and
//    MXFP8: peak_fp8_flops; NVFP4: peak_fp4_flops) on the same curve with
//    x_half scaled by that peak / peak_flops (the same fixed time per kernel,
//    workloads/model/float8_kernels.h says why) and e_max scaled by the
//    format's efficiency (fp8_, mxfp8_, nvfp4_gemm_efficiency).
//  * kAttention: keys attended per query, seq for full attention and seq / 2
//    for causal (FlashAttention's per-row work; the fixed per-row cost of
//    loading Q and writing O is amortised over it); the shape term is the
//    head dimension, and a causal mask adds causal_x_half. Forward kernels
//    ("attention") use attention_fwd, backward ones (names ending ".bwd")
//    attention_bwd.
//  * Other classes (elementwise, norm, embedding, loss, optimizer) run at
//    peak_flops (efficiency 1) for their FLOPs: with a few FLOPs per byte they
//    are memory-bound, so the bytes term decides their time; the FLOPs stay
//    counted for totals. Their bandwidth is the class's own measured
//    fraction of the datasheet (gpu.mem_efficiency_by_class) where the
//    profile has one, else gpu.mem_efficiency: an eager cast or broadcast
//    reaches under half of HBM's rate where a streaming add reaches 80-90%
//    (scenarios/measurements/2026-12-04_h200-sxm/memory_kernels.csv).
//
// Units: FLOP/s, bytes per second, FLOPs, bytes; times in SimTime (rounded to
// the nanosecond once, at the end).
//
// Where the numbers live: a hardware profile's `gpu` section
// (scenarios/hardware/*.yaml, hardware/hardware_profile.h) holds the
// datasheet figures and the fitted curves; compute_spec_from_profile turns it
// into a GpuComputeSpec (no copy of the numbers lives in code, so a re-fit
// changes one file). The curves are fitted to measured GEMM and attention
// timings by calibration/compute_fit.h (`clustersim calibrate`).
// Thread safety: pure functions and value types.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "hardware/hardware_profile.h"
#include "sim/sim_time.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

struct EfficiencyCurve {
  double e_max = 1.0;   // plateau efficiency, in (0, 1]
  double x_half = 0.0;  // size at which eff = e_max / 2 (shape terms zero), >= 0
  // Shape terms (collectives::EfficiencyCurveParams): the dimension (GEMM:
  // min(m, n, k); attention: head_dim) at which it alone halves eff, and
  // attention's extra x_half under a causal mask. Both >= 0; 0 = no term.
  double dim_half = 0.0;
  double causal_x_half = 0.0;

  // e_max * x / (x + x_half); x is clamped to >= 1 so that the result is > 0.
  double operator()(double x) const { return at(x, 0.0, false); }
  // e_max / (1 + (x_half + causal_x_half if causal) / x + dim_half / dim);
  // dim <= 0 means "not known" and drops the shape term.
  double at(double x, double dim, bool causal) const;
};

// KernelClass values, for arrays indexed by class.
inline constexpr size_t kKernelClassCount = static_cast<size_t>(KernelClass::kOptimizer) + 1;

struct GpuComputeSpec {
  // The `hardware` rows of the measurement CSVs the curves come from, "H100-SXM".
  std::string hardware;
  double peak_flops = 0;           // dense tensor-core FLOP/s for the training dtype (bf16)
  double peak_fp8_flops = 0;       // dense FP8 tensor-core FLOP/s; 0 without FP8 tensor cores
  double fp8_gemm_efficiency = 1;  // an FP8 GEMM's e_max relative to the bf16 curve's
  double peak_fp4_flops = 0;       // dense FP4 (NVFP4) tensor-core FLOP/s; 0 without
  double mxfp8_gemm_efficiency = 1;  // an MXFP8 GEMM's e_max relative to the bf16 curve's
  double nvfp4_gemm_efficiency = 1;  // an NVFP4 GEMM's e_max relative to the bf16 curve's
  double hbm_Bps = 0;              // HBM bandwidth, bytes per second (datasheet)
  double mem_efficiency = 1;       // achieved / datasheet HBM bandwidth, in (0, 1]
  // Per kernel class (indexed by KernelClass), in (0, 1]; 0 = mem_efficiency.
  std::array<double, kKernelClassCount> mem_efficiency_by_class{};
  EfficiencyCurve gemm;           // size: 2*m*n*k FLOPs
  EfficiencyCurve attention_fwd;  // size: keys per query (seq, or seq / 2 causal)
  EfficiencyCurve attention_bwd;
  // Compute time is multiplied by this (>= 1) while communication kernels
  // share the SMs.
  double comm_overlap_slowdown = 1.0;
  // Sustained / nominal tensor-core clock (power caps), in (0, 1]; the FLOP
  // roofline runs at peak_flops * sustained_clock, MFU stays against peak_flops.
  double sustained_clock = 1.0;
  // The software stack's share of that rate (workload.stack_efficiency, in
  // (0, 2]): what the stack's kernels reach of the part's curves.
  double stack_efficiency = 1.0;
  // Spread of per-GPU speed (hardware profile gpu.speed_variation): the
  // standard deviation of log kernel time across GPUs, >= 0.
  double speed_variation = 0.0;
  // Per-GPU, per-segment fluctuation of kernel time (gpu.segment_jitter):
  // the standard deviation of log segment time, >= 0.
  double segment_jitter = 0.0;
};

// The spec a hardware profile's `gpu` section describes (hardware =
// gpu.curves_fitted_to). The profile's ranges were validated when it was
// loaded. With `cudnn_attention` (workload.attention cudnn) the attention
// curves are the profile's cuDNN ones where it has them.
GpuComputeSpec compute_spec_from_profile(const collectives::HardwareProfile& profile,
                                         bool cudnn_attention = false);

// The dense tensor-core peak a GEMM of `format` runs at (0: the part has none).
double gemm_peak(GemmFormat format, const GpuComputeSpec& spec);
// A GEMM of `format`'s plateau efficiency relative to the bf16 curve's.
double gemm_format_efficiency(GemmFormat format, const GpuComputeSpec& spec);

// The efficiency the spec applies to `kernel` (1 for the non-matmul classes).
double kernel_efficiency(const Kernel& kernel, const GpuComputeSpec& spec);

// Achieved / datasheet HBM bandwidth for kernels of `cls`: the class's own
// figure where the profile gives one, else mem_efficiency.
double memory_efficiency(KernelClass cls, const GpuComputeSpec& spec);

// Roofline time of `kernel` on one GPU, see the top of this file; in
// seconds, and rounded to the nanosecond.
double kernel_seconds(const Kernel& kernel, const GpuComputeSpec& spec, bool comm_active = false);
sim::SimTime kernel_time(const Kernel& kernel, const GpuComputeSpec& spec,
                         bool comm_active = false);

// Size arguments of the curves.
double gemm_size(int64_t m, int64_t n, int64_t k);  // 2*m*n*k
double attention_size(int64_t seq, bool causal);    // seq, or seq / 2 when causal

}  // namespace clustersim::workloads
