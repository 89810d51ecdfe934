// The clustersim command: dispatches to subcommands and maps every outcome
// to an exit code — 0 ok, 1 bad input or simulation error (the message names
// the file, line, key, what was expected and found), 2 usage error.
// Nothing here calls exit(); main() returns what run_clustersim returns, so
// tests drive the whole command in-process.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "config/config_error.h"

namespace clustersim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

// `args` excludes the program name.
int run_clustersim(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// The same, and when the input is bad (exit 1 with a ConfigError) its
// diagnostics are also stored in `*diagnostics` (cleared first), for callers
// that want them as data rather than text (the Python package).
int run_clustersim(std::span<const std::string> args, std::ostream& out, std::ostream& err,
                   std::vector<sim::Diagnostic>* diagnostics);

// The spec of every command, in `clustersim --help` order (for tests that
// hold every command to the same error format).
std::vector<CommandSpec> command_specs();

}  // namespace clustersim::cli
