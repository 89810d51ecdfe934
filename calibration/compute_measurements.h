// GEMM and attention timings measured on one GPU, in the CSV layouts of the
// reference data (scenarios/measurements/compute/*.csv, written by
// scripts/microbench/gemm.py and attention.py); see measurement_csv.h for
// the common rules (comments, header, errors with file:line:col).
//
//  * GEMM: hardware, dtype, m, n, k, tflops (= 2*m*n*k / time / 1e12);
//    optional source.
//  * attention: hardware, kernel (FA2, FA3, ...), pass (fwd | fwd_bwd),
//    head_dim, causal (true | false), seq, tflops (attention matmul FLOPs,
//    4 x batch x heads x seq^2 x head_dim, halved when causal; fwd_bwd
//    counts 3.5 x the forward's -- the flash-attention benchmark convention,
//    backward = 2.5 x forward).
//  * Both may carry sm_clock_mhz, the median SM clock during the timed calls
//    (scripts/microbench/ writes it where NVML is there; empty or absent
//    otherwise). With a profile's gpu.peak_clock_mhz, at_peak_clock() scales
//    each row's rate to that clock (a compute-bound kernel's rate is
//    proportional to the SM clock), so that rows measured on a power-limited
//    GPU at different clocks fit one curve.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"

namespace clustersim::calibration {

struct GemmMeasurement {
  sim::SourceLocation where;
  std::string hardware;  // "A100-SXM"
  std::string dtype;     // "fp16", "bf16", ...
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  double tflops = 0;  // 2*m*n*k / time / 1e12
  std::string source;
  double sm_clock_mhz = 0;  // SM clock of the measurement; 0 when not recorded

  double flops() const;          // 2*m*n*k
  double seconds() const;        // measured time
  int64_t smallest_dim() const;  // min(m, n, k)
};

struct AttentionMeasurement {
  sim::SourceLocation where;
  std::string hardware;
  std::string kernel;  // "FA2", "FA3"
  std::string pass;    // "fwd" or "fwd_bwd"
  int64_t head_dim = 0;
  bool causal = false;
  int64_t seq = 0;
  double tflops = 0;        // attention matmul FLOPs (causal counts half) / time / 1e12
  double sm_clock_mhz = 0;  // SM clock of the measurement; 0 when not recorded

  bool forward_only() const { return pass == "fwd"; }
};

// The rows' rates at `peak_clock_mhz` (tflops x peak_clock_mhz / sm_clock_mhz
// for each row that recorded its clock; sm_clock_mhz then reads
// peak_clock_mhz). Nothing changes when peak_clock_mhz is 0 (the profile does
// not say the clock behind its peak). Returns how many rows were scaled.
int at_peak_clock(std::vector<GemmMeasurement>& rows, double peak_clock_mhz);
int at_peak_clock(std::vector<AttentionMeasurement>& rows, double peak_clock_mhz);

// Throws sim::ConfigError naming every row (file:line) whose rate is above
// `peak_tflops`, the part's dense peak for 16-bit GEMMs (gpu.peak_tflops; the
// rows at the clock behind it, after at_peak_clock): no GEMM runs faster than
// its tensor cores, so such a row is a unit or shape error. Nothing is checked
// when peak_tflops is 0.
void check_below_peak(const std::vector<GemmMeasurement>& rows, double peak_tflops);

// Parse CSV text. Throws sim::ConfigError listing every bad line.
std::vector<GemmMeasurement> parse_gemm_csv(std::string_view text, const std::string& file_name);
std::vector<AttentionMeasurement> parse_attention_csv(std::string_view text,
                                                      const std::string& file_name);
// The same from a file; an unreadable file is a ConfigError too.
std::vector<GemmMeasurement> read_gemm_csv(const std::string& path);
std::vector<AttentionMeasurement> read_attention_csv(const std::string& path);

// Whether CSV text is in the GEMM or the attention layout (by its header).
bool looks_like_gemm_csv(std::string_view text);
bool looks_like_attention_csv(std::string_view text);

}  // namespace clustersim::calibration
