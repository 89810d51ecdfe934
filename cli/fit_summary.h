// What calibrate's two fits (cli/calibrate_command: a hardware profile to
// measurements; cli/calibrate_stack: a stack to training runs) print and
// write alike: the date of a fit and the summary of its relative errors.
// Thread safety: pure functions (today() reads the clock and the environment).
#pragma once

#include <string>
#include <vector>

namespace clustersim::cli {

// "2026-11-30": SOURCE_DATE_EPOCH when set (reproducible outputs), else
// today (UTC).
std::string fit_date();

// "4.72%": a fraction as a percentage with two decimals.
std::string fit_percent(double fraction);

// The cases, median and largest |error| of relative errors (0 cases: all 0).
struct ErrorSummary {
  int cases = 0;
  double median = 0;
  double max = 0;
};
ErrorSummary summarize_errors(const std::vector<double>& errors);

}  // namespace clustersim::cli
