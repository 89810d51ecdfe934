#include "calibration/compute_measurements.h"

#include <algorithm>
#include <cstdio>

#include "calibration/measurement_csv.h"
#include "config/file_text.h"

namespace clustersim::calibration {

double GemmMeasurement::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double GemmMeasurement::seconds() const { return flops() / (tflops * 1e12); }

int64_t GemmMeasurement::smallest_dim() const { return std::min({m, n, k}); }

std::vector<GemmMeasurement> parse_gemm_csv(std::string_view text, const std::string& file_name) {
  std::vector<GemmMeasurement> rows;
  for_each_csv_row(text, file_name, {"hardware", "dtype", "m", "n", "k", "tflops"},
                   [&](CsvRow& row) {
                     GemmMeasurement g;
                     g.where = row.where();
                     g.hardware = row.text("hardware");
                     g.dtype = row.text("dtype");
                     g.m = row.positive_int("m");
                     g.n = row.positive_int("n");
                     g.k = row.positive_int("k");
                     g.tflops = row.positive_number("tflops");
                     g.source = row.optional_text("source");
                     g.sm_clock_mhz = row.optional_positive_number("sm_clock_mhz");
                     if (row.ok()) rows.push_back(std::move(g));
                   });
  return rows;
}

std::vector<AttentionMeasurement> parse_attention_csv(std::string_view text,
                                                      const std::string& file_name) {
  std::vector<AttentionMeasurement> rows;
  for_each_csv_row(text, file_name,
                   {"hardware", "kernel", "pass", "head_dim", "causal", "seq", "tflops"},
                   [&](CsvRow& row) {
                     AttentionMeasurement a;
                     a.where = row.where();
                     a.hardware = row.text("hardware");
                     a.kernel = row.text("kernel");
                     a.pass = row.one_of("pass", {"fwd", "fwd_bwd"});
                     a.head_dim = row.positive_int("head_dim");
                     a.causal = row.boolean("causal");
                     a.seq = row.positive_int("seq");
                     a.tflops = row.positive_number("tflops");
                     a.sm_clock_mhz = row.optional_positive_number("sm_clock_mhz");
                     if (row.ok()) rows.push_back(std::move(a));
                   });
  return rows;
}

namespace {

template <typename Row>
int scale_to_clock(std::vector<Row>& rows, double peak_clock_mhz) {
  if (peak_clock_mhz <= 0) return 0;
  int scaled = 0;
  for (Row& row : rows) {
    if (row.sm_clock_mhz <= 0) continue;
    row.tflops *= peak_clock_mhz / row.sm_clock_mhz;
    row.sm_clock_mhz = peak_clock_mhz;
    ++scaled;
  }
  return scaled;
}

}  // namespace

int at_peak_clock(std::vector<GemmMeasurement>& rows, double peak_clock_mhz) {
  return scale_to_clock(rows, peak_clock_mhz);
}

int at_peak_clock(std::vector<AttentionMeasurement>& rows, double peak_clock_mhz) {
  return scale_to_clock(rows, peak_clock_mhz);
}

namespace {

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

}  // namespace

void check_below_peak(const std::vector<GemmMeasurement>& rows, double peak_tflops) {
  if (peak_tflops <= 0) return;
  sim::DiagnosticSink sink;
  for (const GemmMeasurement& row : rows) {
    if (row.tflops > peak_tflops) {
      sink.add(row.where, "tflops",
               "expected at most the profile's dense peak of " + one_decimal(peak_tflops) +
                   " TFLOP/s (gpu.peak_tflops), found " + one_decimal(row.tflops) +
                   " (a unit or shape error?)");
    }
  }
  sink.throw_if_any();
}

std::vector<GemmMeasurement> read_gemm_csv(const std::string& path) {
  return parse_gemm_csv(sim::read_file_text(path), path);
}

std::vector<AttentionMeasurement> read_attention_csv(const std::string& path) {
  return parse_attention_csv(sim::read_file_text(path), path);
}

namespace {

bool header_has(std::string_view text, std::initializer_list<std::string_view> names) {
  const std::vector<std::string> header = csv_header(text);
  return std::all_of(names.begin(), names.end(), [&](std::string_view name) {
    return std::find(header.begin(), header.end(), name) != header.end();
  });
}

}  // namespace

bool looks_like_gemm_csv(std::string_view text) {
  return header_has(text, {"m", "n", "k", "tflops"});
}

bool looks_like_attention_csv(std::string_view text) {
  return header_has(text, {"pass", "head_dim", "seq", "tflops"});
}

}  // namespace clustersim::calibration
