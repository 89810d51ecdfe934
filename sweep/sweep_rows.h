// The rows of a `clustersim sweep` CSV (sweep/sweep_runner.h): the columns,
// one row per point (simulated, skipped or failed), and the CSV quoting that
// the journal and the ranked table read back.
//
// A row is the point's swept values, then kFigureColumns (then
// kCampaignColumns with --campaign). Numbers are the shortest text that reads
// back to the same double, so rows are the same bytes on every run.
// Thread safety: pure functions and constants.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "exec/step_result.h"
#include "scenario/sweep_grid.h"
#include "workloads/model/memory_model.h"

namespace clustersim::cli {

extern const std::vector<std::string> kFigureColumns;
// With --campaign, after kFigureColumns.
extern const std::vector<std::string> kCampaignColumns;

// Offsets of the figures after the swept keys.
constexpr size_t kStatus = 0;
constexpr size_t kReason = 1;
constexpr size_t kStepTime = 2;
constexpr size_t kTokens = 3;
constexpr size_t kMfu = 5;
constexpr size_t kPeak = 6;
constexpr size_t kFits = 7;
// 8: exposed_comm_s, 9-19: the step's breakdown; 20-21 tokens per joule;
// then the campaign's.
constexpr size_t kTokensPerJouleGpu = 20;
constexpr size_t kTokensPerJouleSystem = 21;
constexpr size_t kEttr = 22;
constexpr size_t kTimeToTrain = 23;

// The status column: simulated (ok, out_of_memory) or not (skipped: the
// point's input is invalid; failed: clustersim itself failed on it).
inline bool simulated_status(std::string_view status) {
  return status == "ok" || status == "out_of_memory";
}

// "0" for zero, else the shortest round-trip text of x.
std::string number_text(double x);
// `text` as one CSV field: newlines become spaces; quoted when it holds a
// comma or a double quote.
std::string csv_field(std::string text);
// Fields of one CSV line (double-quoted fields may hold commas and "").
std::vector<std::string> csv_split(std::string_view line);
std::string join(const std::vector<std::string>& parts, std::string_view separator);

// The errors of a ConfigError without their file: "key: message; ...".
std::string reason_of(const sim::ConfigError& e);

// The header line: the swept keys, then the figure columns.
std::string sweep_header(const std::vector<SweepAxis>& axes, bool campaign);

// A campaign's figures of a point: ETTR and time to train (none without
// campaign.tokens).
struct CampaignFigures {
  double ettr_mean = 0;
  std::optional<double> time_to_train_days;
};

std::string simulated_row(const SweepPoint& point, const workloads::StepResult& r,
                          const std::optional<CampaignFigures>& campaign);
std::string skipped_row(const SweepPoint& point, const std::string& reason, bool campaign);
// A point not simulated because its step does not fit (SweepSettings::
// fitting_only): `skipped`, the reason naming its peak per GPU (and the
// pipeline stage holding it, when that is not stage 0) against the
// capacity, peak_memory_bytes and fits_in_memory (false) filled in.
std::string oversized_row(const SweepPoint& point, const workloads::MemoryBreakdown& memory,
                          int64_t capacity_bytes, bool campaign);
std::string failed_row(const SweepPoint& point, const std::string& reason, bool campaign);

}  // namespace clustersim::cli
