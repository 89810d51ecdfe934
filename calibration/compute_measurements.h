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
  double tflops = 0;  // attention matmul FLOPs (causal counts half) / time / 1e12

  bool forward_only() const { return pass == "fwd"; }
};

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
