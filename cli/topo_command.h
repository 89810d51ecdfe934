// `clustersim topo SCENARIO [--set K=V]... [--dot FILE]`: builds the
// scenario's cluster and prints its size, switch counts per tier, links,
// bisection bandwidth and longest route (topology/cluster_summary.h);
// --dot writes the graph for GraphViz (refused above kMaxDotVertices).
// Errors: bad scenario input -> sim::ConfigError (exit 1); a graph too large
// for --dot -> sim::OutputError (exit 1); bad flags -> UsageError (exit 2).
// Thread safety: no shared state.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec topo_command_spec();
int run_topo_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
