// `clustersim import torchtitan CONFIG.toml` and `clustersim import nemo
// CONFIG.yaml`: a training framework's config as a scenario, written to -o
// FILE (atomically) or stdout, every key with a comment naming its source,
// the config's keys without a counterpart listed with their values, and
// what the config cannot say (GPUs, hardware, node, fabric) taken from the
// options (scenario/torchtitan_import.h, scenario/nemo_import.h,
// docs/import.md). What is only approximated is also said on stderr.
// Errors: bad config or options -> sim::ConfigError (exit 1), every problem
// at the config's file:line:col; bad flags -> UsageError (exit 2).
// Thread safety: no shared state.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec import_command_spec();
int run_import_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
