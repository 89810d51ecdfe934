// What `run`, `replay`, `sweep`, `campaign`, `calibrate` and `validate`
// share to keep a run's work bounded: the --max-tasks-per-rank and
// --max-events options (scenario/work_limits.h). Progress while the work
// runs is cli/progress.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "scenario/work_limits.h"

namespace clustersim::cli {

// The two options, for a CommandSpec.
std::vector<OptionSpec> work_limit_options();
// Their values (the defaults of WorkLimits when absent); UsageError when one
// is not a whole number > 0.
WorkLimits work_limits_from(const ParsedCommand& parsed);

}  // namespace clustersim::cli
