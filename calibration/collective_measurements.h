// Reading collective timings measured on real GPUs, in two layouts:
//
//  * our CSV (the layout of the reference data): comment lines start with
//    '#'; a header names the columns; required: op, gpus, gpus_per_node,
//    bytes, and time_us or busbw_GBps; optional: algbw_GBps, algo, note.
//    Extra columns are ignored.
//  * nccl-tests' own stdout (all_reduce_perf, all_gather_perf,
//    reduce_scatter_perf, broadcast_perf), as printed: the "# Rank ... on
//    HOST device ..." lines give the GPU count and GPUs per node, the column
//    header gives the layout (old and new nccl-tests versions differ), data
//    rows give the out-of-place time, algbw and busbw, and the "Avg bus
//    bandwidth" footer is checked for. nccl-tests does not print which
//    collective ran: it is taken from the file name (e.g.
//    h100_all_gather.txt) unless the caller names it.
//
// Units: bytes as nccl-tests counts them (all_gather: total output,
// reduce_scatter: total input), time in microseconds, GB/s = 1e9 B/s.
// Every malformed line is a ConfigError naming file:line:col, the column
// and what was expected; all problems of a file are reported at once.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"

namespace clustersim::calibration {

struct CollectiveMeasurement {
  std::string op;  // all_reduce | all_gather | reduce_scatter | broadcast
  int gpus = 0;
  int gpus_per_node = 0;
  int64_t bytes = 0;
  std::optional<double> time_us;     // out-of-place time
  std::optional<double> busbw_GBps;  // as measured (nccl-tests convention)
  std::string algo;                  // when the source names it (e.g. NVLS, Ring)
  sim::SourceLocation where;         // the row, for reports and errors
};

// The collectives nccl-tests measures that clustersim models.
const std::vector<std::string>& measured_ops();

// Reads either layout (recognised by content). `op_hint` names the
// collective for nccl-tests output; empty means "from the file name".
std::vector<CollectiveMeasurement> read_collective_measurements(const std::string& path,
                                                                std::string_view op_hint = "");

// The same for text in memory; `file_name` is what messages show (and,
// without `op_hint`, where nccl-tests output's collective comes from).
std::vector<CollectiveMeasurement> parse_collective_measurements(std::string_view text,
                                                                 const std::string& file_name,
                                                                 std::string_view op_hint = "");
std::vector<CollectiveMeasurement> parse_collective_csv(std::string_view text,
                                                        const std::string& file_name);
std::vector<CollectiveMeasurement> parse_nccl_tests_output(std::string_view text,
                                                           const std::string& file_name,
                                                           std::string_view op);

}  // namespace clustersim::calibration
