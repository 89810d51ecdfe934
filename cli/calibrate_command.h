// `clustersim calibrate MEASUREMENTS... --base PROFILE|SCENARIO -o PROFILE_OUT`:
// fits the hardware profile's compute curves and collective constants to
// measurements (calibration/compute_fit.h, collective_fit.h) and writes a
// complete profile YAML with its provenance (inputs, date, fit residuals per
// group) that scenarios can name as `hardware:`. `--folds K` or `--holdout F`
// report cross-validated errors: fit on part of the cases, predict the rest.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec calibrate_command_spec();
int run_calibrate_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
