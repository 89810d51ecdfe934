// Measurement files of every kind calibrate and validate take, recognised by
// content: a Kineto trace (JSON: the first non-blank character is '{'), a
// GEMM or attention CSV (by its header, compute_measurements.h), otherwise
// collective timings (our CSV or nccl-tests output,
// collective_measurements.h). A gzip-compressed file (gzip's magic bytes,
// whatever its name: a trace.json.gz) is recognised, and read, by its
// decompressed content (config/gzip_text.h). Errors are the readers'
// (file:line:col).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "calibration/collective_measurements.h"
#include "calibration/compute_measurements.h"

namespace clustersim::calibration {

enum class MeasurementKind { kGemm, kAttention, kCollective, kKinetoTrace };
std::string_view measurement_kind_name(MeasurementKind kind);  // "gemm", ..., "kineto trace"

struct MeasurementFile {
  std::string path;
  MeasurementKind kind = MeasurementKind::kCollective;
  int rows = 0;  // rows read (steps are read later for traces: 0)
};

struct MeasurementSet {
  std::vector<MeasurementFile> files;
  std::vector<GemmMeasurement> gemm;
  std::vector<AttentionMeasurement> attention;
  std::vector<CollectiveMeasurement> collectives;
  std::vector<std::string> kineto_traces;  // paths, read by their user
};

// `op_hint` names the collective of nccl-tests files whose name does not.
// Every file's problems are collected and reported together.
MeasurementSet read_measurement_files(const std::vector<std::string>& paths,
                                      std::string_view op_hint = "");

}  // namespace clustersim::calibration
