// `clustersim validate SCENARIO MEASUREMENTS...`: predicted vs measured
// GEMM and attention throughput, collective times and Kineto traces (per
// kernel class and step), case by case, a summary per kind, and at the end
//   cases=N median_abs_error=X% max_abs_error=Y%
// (relative error of the time, |predicted - measured| / measured);
// --max-error P exits 1 when the median exceeds P percent.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec validate_command_spec();
int run_validate_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
