// The replay's deadlock report (internal to chakra/): from where every rank
// stopped (exec's Unfinished), the ConfigError chakra_replay.h promises --
// how many nodes on how many ranks never ran, then the first stuck nodes
// (file and id) and what each waits for.
//
// Thread safety: pure.
#pragma once

#include <vector>

#include "exec/engine.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/replay_program.h"

namespace clustersim::workloads::chakra::replay {

// Throws sim::ConfigError.
[[noreturn]] void report_deadlock(const ReplayJob& job, const std::vector<Template>& templates,
                                  const std::vector<CompiledGraph>& graphs,
                                  const Unfinished& stopped);

}  // namespace clustersim::workloads::chakra::replay
