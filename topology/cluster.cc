#include "topology/cluster.h"

#include <string>

#include "sim/check.h"

namespace clustersim::topology {

const char* vertex_kind_name(VertexKind kind) {
  static constexpr std::array<const char*, kVertexKinds> kNames = {
      "gpu", "nvswitch", "host", "nic", "leaf", "spine", "core"};
  return kNames[static_cast<size_t>(kind)];
}

const char* link_kind_name(LinkKind kind) {
  static constexpr std::array<const char*, kLinkKinds> kNames = {
      "nvlink", "gpu-nic", "gpu-host", "nic-leaf", "leaf-spine", "spine-core"};
  return kNames[static_cast<size_t>(kind)];
}

VertexKind Cluster::kind(VertexId v) const {
  int k = 0;
  while (k + 1 < kVertexKinds && static_cast<int64_t>(v) >= first_[static_cast<size_t>(k + 1)]) {
    ++k;
  }
  return static_cast<VertexKind>(k);
}

int64_t Cluster::index_in_kind(VertexId v) const {
  return static_cast<int64_t>(v) - first_[static_cast<size_t>(kind(v))];
}

int64_t Cluster::count(VertexKind k) const {
  const auto i = static_cast<size_t>(k);
  return first_[i + 1] - first_[i];
}

int64_t Cluster::link_count(LinkKind k) const {
  const auto i = static_cast<size_t>(k);
  return block_[i + 1] - block_[i];
}

int64_t Cluster::tree_of_nic(int64_t nic, int64_t plane) const {
  if (spec_.fabric.type == FabricType::kRailOptimized) return plane * npn_ + nic % npn_;
  return plane;
}

int64_t Cluster::endpoint_of_nic(int64_t nic) const {
  return spec_.fabric.type == FabricType::kRailOptimized ? nic / npn_ : nic;
}

size_t Cluster::memory_bytes() const {
  size_t bytes =
      sizeof(*this) + classes_.capacity() * sizeof(LinkClass) + links_.capacity() * sizeof(Link);
  // adjacency_list<vecS, vecS, directedS>: one out-edge vector per vertex,
  // one stored target per edge.
  using StoredVertex = Graph::stored_vertex;
  bytes += sizeof(Graph) + graph_->m_vertices.capacity() * sizeof(StoredVertex);
  for (const StoredVertex& v : graph_->m_vertices) {
    bytes += v.m_out_edges.capacity() * sizeof(v.m_out_edges[0]);
  }
  return bytes;
}

Cluster build_cluster(const ClusterSpec& spec) {
  const int64_t radix = spec.fabric.switch_radix;
  const int64_t planes = spec.fabric.planes;
  CLUSTERSIM_CHECK(spec.nodes > 0 && spec.node.gpus_per_node > 0 && spec.node.nics_per_node > 0 &&
                       spec.node.gpus_per_node % spec.node.nics_per_node == 0 && planes > 0 &&
                       radix >= 2 && radix % 2 == 0,
                   "cluster spec not validated");

  Cluster c;
  c.spec_ = spec;
  c.gpn_ = spec.node.gpus_per_node;
  c.npn_ = spec.node.nics_per_node;
  c.gpus_ = spec.nodes * c.gpn_;
  c.nics_ = spec.nodes * c.npn_;

  FabricShape& s = c.shape_;
  s.endpoints = endpoints_per_tree(spec);
  s.tiers = fabric_tiers(spec.fabric.type, s.endpoints, radix);
  CLUSTERSIM_CHECK(s.tiers > 0, "fabric too small for " + std::to_string(s.endpoints) + " NICs");
  s.trees = planes * (spec.fabric.type == FabricType::kRailOptimized ? c.npn_ : 1);
  s.half_radix = radix / 2;
  const int64_t h = s.half_radix;
  s.leaves = s.tiers == 1 ? 1 : (s.endpoints + h - 1) / h;
  s.pods = s.tiers == 3 ? (s.leaves + h - 1) / h : 1;
  s.spines = s.tiers == 1 ? 0 : s.pods * h;
  s.cores = s.tiers == 3 ? h * h : 0;
  s.plane_Bps = spec.node.nic_Bps / static_cast<double>(planes);
  s.leaf_up_Bps = s.plane_Bps / spec.fabric.leaf_oversubscription;
  s.spine_up_Bps = s.leaf_up_Bps / spec.fabric.spine_oversubscription;

  const std::array<int64_t, kVertexKinds> counts = {
      c.gpus_,          spec.nodes, spec.nodes, c.nics_, s.trees * s.leaves, s.trees * s.spines,
      s.trees * s.cores};
  for (size_t k = 0; k < counts.size(); ++k) c.first_[k + 1] = c.first_[k] + counts[k];

  const std::array<int64_t, kLinkKinds> link_counts = {c.gpus_,
                                                       c.gpus_,
                                                       c.gpus_,
                                                       c.nics_ * planes,
                                                       s.tiers >= 2 ? s.trees * s.leaves * h : 0,
                                                       s.tiers == 3 ? s.trees * s.spines * h : 0};
  for (size_t k = 0; k < link_counts.size(); ++k) c.block_[k + 1] = c.block_[k] + link_counts[k];
  CLUSTERSIM_CHECK(
      c.block_[kLinkKinds] * 2 < (int64_t{1} << 32) && c.first_[kVertexKinds] < (int64_t{1} << 32),
      "cluster too large for 32-bit ids");

  const LatencySpec& lat = spec.latency;
  c.classes_ = {{LinkKind::kNvLink, spec.node.nvlink_Bps, lat.nvlink},
                {LinkKind::kGpuNic, spec.node.pcie_Bps, lat.pcie},
                {LinkKind::kGpuHost, spec.node.pcie_Bps, lat.pcie},
                {LinkKind::kNicLeaf, s.plane_Bps, lat.network},
                {LinkKind::kLeafSpine, s.leaf_up_Bps, lat.network},
                {LinkKind::kSpineCore, s.spine_up_Bps, lat.network}};

  // Links in block order; the accessor formulas in cluster.h depend on it.
  c.links_.reserve(static_cast<size_t>(c.block_[kLinkKinds]));
  auto add = [&c](VertexId lower, VertexId upper, LinkKind kind) {
    c.links_.push_back({lower, upper, static_cast<uint8_t>(kind)});
  };
  for (int64_t g = 0; g < c.gpus_; ++g) {
    add(c.gpu_vertex(g), c.nvswitch_vertex(c.node_of_gpu(g)), LinkKind::kNvLink);
  }
  for (int64_t g = 0; g < c.gpus_; ++g) {
    add(c.gpu_vertex(g), c.nic_vertex(c.nic_of_gpu(g)), LinkKind::kGpuNic);
  }
  for (int64_t g = 0; g < c.gpus_; ++g) {
    add(c.gpu_vertex(g), c.host_vertex(c.node_of_gpu(g)), LinkKind::kGpuHost);
  }
  for (int64_t n = 0; n < c.nics_; ++n) {
    const int64_t leaf = c.leaf_of_endpoint(c.endpoint_of_nic(n));
    for (int64_t p = 0; p < planes; ++p) {
      add(c.nic_vertex(n), c.leaf_vertex(c.tree_of_nic(n, p), leaf), LinkKind::kNicLeaf);
    }
  }
  if (s.tiers >= 2) {
    for (int64_t t = 0; t < s.trees; ++t) {
      for (int64_t leaf = 0; leaf < s.leaves; ++leaf) {
        const int64_t pod = c.pod_of_leaf(leaf);
        for (int64_t j = 0; j < h; ++j) {
          add(c.leaf_vertex(t, leaf), c.spine_vertex(t, pod * h + j), LinkKind::kLeafSpine);
        }
      }
    }
  }
  if (s.tiers == 3) {
    for (int64_t t = 0; t < s.trees; ++t) {
      for (int64_t spine = 0; spine < s.spines; ++spine) {
        const int64_t group = spine % h;  // spine j of every pod serves core group j
        for (int64_t m = 0; m < h; ++m) {
          add(c.spine_vertex(t, spine), c.core_vertex(t, group * h + m), LinkKind::kSpineCore);
        }
      }
    }
  }
  CLUSTERSIM_CHECK(static_cast<int64_t>(c.links_.size()) == c.block_[kLinkKinds],
                   "link blocks laid out as counted");

  c.graph_ = std::make_unique<Cluster::Graph>(c.vertex_count());
  Cluster::Graph& g = *c.graph_;
  for (const Cluster::Link& link : c.links_) {
    boost::add_edge(link.lower, link.upper, g);
    boost::add_edge(link.upper, link.lower, g);
  }
  return c;
}

void Cluster::take_down(EdgeId e) {
  CLUSTERSIM_CHECK(e < edge_count(), "take_down of edge " + std::to_string(e) + " of " +
                                         std::to_string(edge_count()));
  if (link_down_.empty()) link_down_.assign(links_.size(), 0);
  uint8_t& down = link_down_[e >> 1];
  if (down == 0) ++down_links_;
  down = 1;
}

}  // namespace clustersim::topology
