// `clustersim export-chakra SCENARIO -o DIR`: the scenario's simulated
// training step as Chakra ET traces (workloads/chakra/chakra_export.h), the input
// of ASTRA-sim and `clustersim replay`.
//
// Writes DIR/NAME.<rank>.et for each rank of --ranks (default every rank of
// the job) and DIR/NAME.comm_groups.json, the process groups those ranks'
// collectives name (ASTRA-sim's communicator-group JSON, keyed by the
// numeric pg_name ids; the groups' names are in the traces, in each
// collective's clustersim_pg_desc, and in the summary). --no-host-nodes
// leaves out the host's nodes (launches, the CPU optimizer: a warning on
// stderr gives its time when there is one). NAME is the
// scenario's `name`, or --prefix. DIR is created when missing. Each file is
// written atomically (complete or absent); ranks are written one at a time,
// so memory stays that of one rank's graph whatever the job's size.
//
// Output (stdout): the scenario, the ranks written, nodes per rank (schedule
// tasks + host launches), bytes per rank and in all, the process groups
// (id, name, size).
// Exporting thousands of ranks writes thousands of files: past 1024 ranks a
// warning on stderr gives the count and the estimated size first.
// While writing, the files written with a percentage and ETA, then "wrote N
// files DIR/NAME.*.et and DIR/NAME.comm_groups.json" on stderr (not with
// --quiet; cli/progress.h).
//
// Exit codes: 0 ok; 1 bad scenario, ranks beyond the world size, a
// directory or file that cannot be written; 2 usage errors (no -o, a
// malformed rank list, an empty or path-like --prefix).
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec export_chakra_command_spec();
int run_export_chakra_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
