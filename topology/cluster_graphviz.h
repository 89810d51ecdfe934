// GraphViz export of a (small) cluster: one vertex per GPU, NVSwitch domain,
// host, NIC and switch, labelled by kind and index; one undirected edge per
// full-duplex link, labelled with its bandwidth per direction and latency.
// Written through boost::write_graphviz.
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <string>

#include "topology/cluster.h"

namespace clustersim::topology {

// Larger graphs are unreadable as drawings and slow to lay out; the topo
// command refuses them.
inline constexpr size_t kMaxDotVertices = 2048;

// Precondition: cluster.vertex_count() <= kMaxDotVertices (InvariantError).
std::string cluster_to_dot(const Cluster& cluster);

}  // namespace clustersim::topology
