// `clustersim collective SCENARIO --op OP --gpus N ...`: predicted
// collective times over a range of sizes, laid out like nccl-tests so that
// users can put it beside their own runs.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec collective_command_spec();
// With --csv, names the file written on `err` (cli/progress.h).
int run_collective_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
