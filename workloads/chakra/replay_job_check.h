// Static checks of a replay job against its compiled graphs and the cluster
// (internal to chakra/): the job fits the cluster, every group holds
// distinct ranks of the job with the same number of members on every node it
// uses, and the members of a group issue the same collectives (kind and
// size, in order). Throws sim::ConfigError listing the first problems.
// Thread safety: a pure function.
#pragma once

#include <vector>

#include "topology/cluster.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/replay_template.h"

namespace clustersim::workloads::chakra::replay {

void check_job(const topology::Cluster& cluster, const ReplayJob& job,
               const std::vector<Template>& templates);

}  // namespace clustersim::workloads::chakra::replay
