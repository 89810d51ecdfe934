// `clustersim calibrate RUNS.csv... --stack STACK -o STACK_OUT`: fits the
// software stack's one constant, workload.stack_efficiency, to the training
// runs whose scenario names STACK (scenario/training_runs.h: the value at
// which their median log error of tokens/s is zero) and writes a stack file
// that extends STACK with it and the ids of those runs
// (workload.stack_efficiency_fitted_to). `--folds K` adds their K-fold
// cross-validated errors. A part's clock is never fitted here: it is
// measured (docs/stacks.md).
// Errors: sim::ConfigError naming the runs file or the stack; UsageError for
// the command line.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

int run_calibrate_stack(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
