// Routing: the deterministic path between two GPUs, as directed edge ids of
// a Cluster (see cluster.h for the id scheme), in the order traversed.
//
//  * Same node: GPU -> NVSwitch -> GPU (2 hops).
//  * Different nodes: GPU -> its NIC -> up the NIC's switch tree only as far
//    as the lowest tier shared with the destination's NIC -> down -> NIC ->
//    GPU. With rail_optimized fabrics, when the destination uses another
//    rail, the data first crosses NVLink to the source node's GPU on the
//    destination's rail, as NCCL's PXN does, so it stays on one rail's tree.
//  * ECMP: the plane, the leaf's uplink and the spine's uplink are each
//    chosen by ecmp_hash(src, dst, decision) modulo the number of choices;
//    the same pair always takes the same path, and different pairs spread.
//    Down-going hops are then fixed by the tree.
//  * Failed links (Cluster::take_down, topology/fabric_faults.h): a pair
//    whose hashed uplink is down, or leads to a spine that cannot reach the
//    destination, re-hashes over the uplinks that can (resilient ECMP: the
//    other pairs keep their paths). InvariantError if none can.
// Hops = number of edges.
// Thread safety: pure functions of an immutable Cluster.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/cluster.h"

namespace clustersim::topology {

// A stable 64-bit mix (SplitMix64's finaliser) of the pair and a salt that
// names the decision; identical on every platform and standard library.
uint64_t ecmp_hash(int64_t src_gpu, int64_t dst_gpu, uint64_t salt);

// Appends the route's edges to `out` (cleared first). src == dst: empty.
// Preconditions: 0 <= src, dst < gpu_count() (InvariantError otherwise).
void route(const Cluster& cluster, int64_t src_gpu, int64_t dst_gpu, std::vector<EdgeId>& out);
std::vector<EdgeId> route(const Cluster& cluster, int64_t src_gpu, int64_t dst_gpu);

// The most hops of any route in the cluster, from its structure (not by
// trying pairs): 2 within a node, 2 + 2 x (tiers climbed) between nodes,
// plus 2 for a PXN detour on rail_optimized fabrics with several rails.
int longest_route_hops(const Cluster& cluster);

}  // namespace clustersim::topology
