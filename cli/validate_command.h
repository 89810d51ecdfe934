// `clustersim validate SCENARIO MEASUREMENTS...`: predicted vs measured
// collective times, row by row, ending with
//   cases=N median_abs_error=X% max_abs_error=Y%
// (relative error of the time, |predicted - measured| / measured).
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec validate_command_spec();
int run_validate_command(const ParsedCommand& parsed, std::ostream& out);

}  // namespace clustersim::cli
