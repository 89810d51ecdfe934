// Fabric faults: the links a failed spine switch, core switch or
// switch-to-switch cable takes out of a Cluster (Cluster::take_down), by the
// tree-local numbering of cluster.h. Routes then avoid them (routing.h), so a
// step simulated on the degraded cluster pays for the traffic the remaining
// uplinks carry instead.
//  * spine (tree, s) of pod p = s / (k/2), index j = s % (k/2): uplink j of
//    every leaf of pod p (with 2 tiers, of every leaf) and, with 3 tiers,
//    the spine's k/2 uplinks to cores;
//  * core (tree, c) of group j = c / (k/2), index m = c % (k/2): uplink m of
//    spine j of every pod;
//  * cable: one leaf's uplink j (fail_leaf_uplink; a spine-to-core cable
//    is the same one link taken down, Cluster::take_down(spine_up(...))).
// Preconditions (InvariantError): the tree has the tier and the indices are
// in range.
// Thread safety: mutates the cluster; call before it is shared.
#pragma once

#include <cstdint>

#include "topology/cluster.h"

namespace clustersim::topology {

void fail_spine(Cluster& cluster, int64_t tree, int64_t spine);
void fail_core(Cluster& cluster, int64_t tree, int64_t core);
void fail_leaf_uplink(Cluster& cluster, int64_t tree, int64_t leaf, int64_t j);

}  // namespace clustersim::topology
