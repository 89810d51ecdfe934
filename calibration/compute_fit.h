// Fitting the compute model's efficiency curves (workloads/model/compute_model.h)
// to measured GEMM and attention timings, and predicting those timings from
// a profile.
//
// The curves, eff = e_max / (1 + x_half / x + dim_half / dim [+ causal_x_half / x]),
// make the relative error of a predicted time linear in the coefficients
// (1 / e_max, x_half / e_max, dim_half / e_max, causal_x_half / e_max): with
// m = measured efficiency (measured TFLOP/s / peak), predicted / measured
// time - 1 = m x (1 / eff) - 1. So every fit is one robust_fit.h problem:
// least squares on relative error, Tukey-robust, and bounded by physics:
// e_max <= 1 (no kernel beats the tensor-core peak), every half-size >= 0.
//
//  * GEMM (16-bit tensor-core dtypes fp16 and bf16, which share the peak):
//    x = 2*m*n*k FLOPs, dim = min(m, n, k).
//  * Attention: x = keys per query (seq, seq / 2 causal), dim = head_dim,
//    forward and backward curves fitted together: a "fwd" row measures the
//    forward curve, a "fwd_bwd" row (forward 1 F + backward 2.5 F at 3.5 F
//    counted) both. Without "fwd" rows one curve serves both passes;
//    without "fwd_bwd" rows the backward borrows the forward's. A term the
//    rows cannot separate (one head_dim measured; causal and non-causal
//    rows not both present) keeps the base profile's value (its coefficient
//    over the base e_max) and is reported.
//
// Predictions use the simulator's own kernel model (workloads::kernel_seconds:
// the roofline with the memory term) at the nominal clock: microbenchmarks
// run for milliseconds, below the power limits that sustained_clock
// describes for training.
// Thread safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "calibration/compute_measurements.h"
#include "calibration/robust_fit.h"
#include "hardware/hardware_profile.h"

namespace clustersim::calibration {

// What one fitted group says beyond its numbers: bounds hit, terms not
// identifiable, outlying cases.
struct FitGroupReport {
  std::string name;  // "gpu.gemm", "gpu.attention", "all_reduce ring LL nvlink", ...
  int cases = 0;
  std::vector<sim::SourceLocation> outliers;  // cases the robust fit gave weight 0
  std::vector<std::string> notes;             // "e_max hit its bound 1 (efficiency <= 1)", ...
  double rms_relative_error = 0;              // of the inliers, in the fit itself
};

// True for the dtypes whose GEMMs the profile's gpu.gemm curve describes.
bool is_16_bit_dtype(const std::string& dtype);

// Predicted TFLOP/s of a row under `gpu` (the measured row's own convention,
// see compute_measurements.h). The relative error of the predicted time is
// measured / predicted TFLOP/s - 1.
double predicted_tflops(const GemmMeasurement& row, const collectives::GpuProfile& gpu);
double predicted_tflops(const AttentionMeasurement& row, const collectives::GpuProfile& gpu);

struct GemmCurveFit {
  collectives::EfficiencyCurveParams curve;
  FitGroupReport report;
};
// Rows: one part's 16-bit GEMMs (the caller selects). Requires at least one.
GemmCurveFit fit_gemm_curve(std::span<const GemmMeasurement> rows,
                            const collectives::GpuProfile& base,
                            const RobustFitOptions& options = {});

struct AttentionCurveFit {
  collectives::EfficiencyCurveParams fwd;
  collectives::EfficiencyCurveParams bwd;
  FitGroupReport report;
};
// Rows: one part's and one kernel's (the caller selects). Requires at least one.
AttentionCurveFit fit_attention_curves(std::span<const AttentionMeasurement> rows,
                                       const collectives::GpuProfile& base,
                                       const RobustFitOptions& options = {});

}  // namespace clustersim::calibration
