// Compute cost of one GPU kernel: a roofline with calibrated efficiency
// (DESIGN.md, Workloads):
//   time = max(flops / (peak_flops * sustained_clock * eff_class(shape)),
//              bytes / (hbm_Bps * mem_efficiency))
// times comm_overlap_slowdown while communication kernels share the SMs.
//
// Efficiency curves: eff(x) = e_max * x / (x + x_half), bounded to (0, e_max]
// with e_max in (0, 1], non-decreasing in x, half of e_max at x = x_half,
// optionally lowered by a shape term (EfficiencyCurve::at). The size x is, by
// kernel class:
//  * kGemm: the work 2*m*n*k in FLOPs (a fixed per-kernel cost -- launch,
//    tile-wave fill and drain -- amortised over the work). The curve does not
//    see the aspect ratio: skinny GEMMs (a dimension of a few hundred) run
//    slower than their work suggests (A100 802816x192x768 predicted 48% fast).
//  * kAttention: keys attended per query, seq for full attention and seq / 2
//    for causal (FlashAttention's per-row work; the fixed per-row cost of
//    loading Q and writing O is amortised over it). Head dim is not an input:
//    the measurements are all head_dim 128 and FA2 (the FA3 rows are not
//    used). Forward kernels ("attention") use attention_fwd, backward ones
//    (names ending ".bwd") attention_bwd.
//  * Other classes (elementwise, norm, embedding, loss, optimizer) run at
//    peak_flops (efficiency 1) for their FLOPs: with a few FLOPs per byte they
//    are memory-bound, so the bytes term decides their time; the FLOPs stay
//    counted for totals.
//
// Units: FLOP/s, bytes per second, FLOPs, bytes; times in SimTime (rounded to
// the nanosecond once, at the end).
//
// Where the numbers live: a hardware profile's `gpu` section
// (scenarios/hardware/*.yaml, collectives/hardware_profile.h) holds the
// datasheet figures and the fitted curves; compute_spec_from_profile turns it
// into a GpuComputeSpec. The presets below are the same numbers in code, for
// tests; a test holds scenarios/hardware/h100.yaml and a100.yaml to them.
//
// Measurements: scenarios/measurements/compute/gemm.csv and attention.csv
// (copies of /work/shared/data/compute with their source comments). The
// readers below report problems as a ConfigError with file:line:col.
// Thread safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/hardware_profile.h"
#include "sim/config_error.h"
#include "sim/sim_time.h"
#include "workloads/transformer_kernels.h"

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

struct GpuComputeSpec {
  // The `hardware` rows of the measurement CSVs the curves come from, "H100-SXM".
  std::string hardware;
  double peak_flops = 0;          // dense tensor-core FLOP/s for the training dtype (bf16)
  double hbm_Bps = 0;             // HBM bandwidth, bytes per second (datasheet)
  double mem_efficiency = 1;      // achieved / datasheet HBM bandwidth, in (0, 1]
  EfficiencyCurve gemm;           // size: 2*m*n*k FLOPs
  EfficiencyCurve attention_fwd;  // size: keys per query (seq, or seq / 2 causal)
  EfficiencyCurve attention_bwd;
  // Compute time is multiplied by this (>= 1) while communication kernels
  // share the SMs.
  double comm_overlap_slowdown = 1.0;
  // Sustained / nominal tensor-core clock (power caps), in (0, 1]; the FLOP
  // roofline runs at peak_flops * sustained_clock, MFU stays against peak_flops.
  double sustained_clock = 1.0;
};

// Presets. Datasheet figures from /work/shared/data/README.md ("Hardware
// datasheet figures"); curves fitted to scenarios/measurements/compute/.
// Equal to compute_spec_from_profile of scenarios/hardware/h100.yaml and
// a100.yaml.
GpuComputeSpec h100_sxm_compute();
GpuComputeSpec a100_sxm_compute();

// The spec a hardware profile's `gpu` section describes (hardware =
// gpu.curves_fitted_to). The profile's ranges were validated when it was loaded.
GpuComputeSpec compute_spec_from_profile(const collectives::HardwareProfile& profile);

// The efficiency the spec applies to `kernel` (1 for the non-matmul classes).
double kernel_efficiency(const Kernel& kernel, const GpuComputeSpec& spec);

// Roofline time of `kernel` on one GPU, see the top of this file.
sim::SimTime kernel_time(const Kernel& kernel, const GpuComputeSpec& spec,
                         bool comm_active = false);

// ---- Measurements and fitting ----

struct GemmMeasurement {
  sim::SourceLocation where;
  std::string hardware;  // "A100-SXM"
  std::string dtype;     // "fp16", "bf16"
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  double tflops = 0;  // 2*m*n*k / time / 1e12
  std::string source;
};

struct AttentionMeasurement {
  sim::SourceLocation where;
  std::string hardware;
  std::string kernel;  // "FA2", "FA3"
  std::string pass;    // "fwd" or "fwd_bwd"
  int64_t head_dim = 0;
  bool causal = false;
  int64_t seq = 0;
  double tflops = 0;  // attention matmul FLOPs (causal counts half) / time / 1e12
};

// Parse CSV text (comment lines start with '#'; the first other line is the
// header naming the columns, in any order). Throws sim::ConfigError listing
// every bad line as file:line:col.
std::vector<GemmMeasurement> parse_gemm_csv(std::string_view text, const std::string& file_name);
std::vector<AttentionMeasurement> parse_attention_csv(std::string_view text,
                                                      const std::string& file_name);
// The same from a file; an unreadable file is a ConfigError too.
std::vector<GemmMeasurement> read_gemm_csv(const std::string& path);
std::vector<AttentionMeasurement> read_attention_csv(const std::string& path);

// Least squares on the log of achieved / predicted throughput over the rows
// of `hardware` (all dtypes: fp16 and bf16 share the tensor-core peak).
// Deterministic grid refinement over (e_max, log x_half). Invariant check:
// at least one row.
EfficiencyCurve fit_gemm_curve(std::span<const GemmMeasurement> rows, std::string_view hardware,
                               double peak_flops);

// Forward curve from the `kernel` "fwd" rows of `hardware`; backward curve
// from its "fwd_bwd" rows, predicting a fwd_bwd row as 3.5 F over
// (F / eff_fwd + 2.5 F / eff_bwd) (backward = 2.5 x forward FLOPs, see
// transformer_kernels.h). Without fwd rows one curve is fitted to the
// fwd_bwd rows and used for both passes.
struct AttentionCurves {
  EfficiencyCurve fwd;
  EfficiencyCurve bwd;
};
AttentionCurves fit_attention_curves(std::span<const AttentionMeasurement> rows,
                                     std::string_view hardware, std::string_view kernel,
                                     double peak_flops);

// Size arguments of the curves, exposed for tests and reports.
double gemm_size(int64_t m, int64_t n, int64_t k);  // 2*m*n*k
double attention_size(int64_t seq, bool causal);    // seq, or seq / 2 when causal

// Predicted TFLOP/s of a measurement row under `spec` (fwd_bwd rows combine
// both passes as in fit_attention_curves).
double predicted_tflops(const GemmMeasurement& row, const GpuComputeSpec& spec);
double predicted_tflops(const AttentionMeasurement& row, const GpuComputeSpec& spec);

}  // namespace clustersim::workloads
