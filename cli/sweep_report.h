// What `clustersim sweep` prints on stdout (see cli/sweep_command.h), from
// the finished CSV rows alone, so that resumed rows and simulated ones are
// reported the same way.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "scenario/sweep_grid.h"

namespace clustersim::cli {

struct SweepReportInputs {
  std::string scenario_path;
  const std::vector<SweepAxis>& axes;
  const std::vector<SweepPoint>& points;
  const std::vector<std::string>& rows;  // one per point, sweep/sweep_rows.h
  size_t resumed = 0;                    // rows taken from the journal
  std::string journal_path;              // where they came from
  size_t top = 10;                       // rows of the ranked table
  bool campaign = false;
};

// The counts by status, the skipped and failed points with their reasons
// (the first 10 of each), and the ranked table.
std::string sweep_report(const SweepReportInputs& in);

// The best `top` simulated points by tokens/s per GPU (times ETTR with a
// campaign), those that fit in memory first; ties keep grid order.
std::string ranked_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                         const std::vector<std::string>& rows, size_t top, bool campaign);

}  // namespace clustersim::cli
