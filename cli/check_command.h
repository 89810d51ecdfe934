// `clustersim check SCENARIO [--for COMMAND] [--set K=V]...`: every check the
// command would make of the scenario short of simulating, in one pass, so
// that `check` passes exactly the files that command accepts:
//  * run (the default; also sweep's points, export-chakra, kernels, and
//    campaign when campaign.step_time is not given): the keys, the cluster,
//    the hardware profile, the workload on that cluster (mesh, batch,
//    schedule, stragglers, forced NCCL choices), the peak memory per GPU
//    (--allow-oom as run's) and the step's estimated work against the
//    limits (--max-tasks-per-rank, --max-events as run's);
//  * collective (also validate of nccl-tests, replay): keys, cluster and
//    hardware profile; topo: keys and cluster; keys: the keys alone.
// Prints "ok: <name>" and what was checked, and what only simulating tells.
// Errors as the command's own (ConfigError, every problem at once; an
// out-of-memory step with its memory table), exit 1.
// Thread safety: no shared state.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec check_command_spec();
int run_check_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
