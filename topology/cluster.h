// Cluster: the graph of one GPU cluster — GPUs, NVSwitch domains, NICs, host
// CPUs and the IB switches of the fabric — built from a ClusterSpec.
//
// Representation (why this shape):
//  * The Boost.Graph is adjacency_list<vecS, vecS, directedS> with no
//    properties. Directed, because every physical link is full duplex: its
//    two directions are two edges with their own capacity, and routes are
//    lists of directed edges. Not bidirectionalS: nothing needs in-edge
//    lists, which would double the memory. No edge properties: Boost 1.74's
//    adjacency_list heap-allocates each edge's property (one allocation per
//    edge, ~1.7M at 131,072 GPUs), so edge data lives in flat arrays here.
//  * Edge ids are dense: physical link l has edges 2l ("up": towards the
//    NVSwitch, NIC, host or higher switch tier) and 2l+1 ("down");
//    reverse(e) == e ^ 1. Links are laid out in blocks by kind, so the
//    builder and the router compute ids from the structure (no searching).
//  * Vertex ids are dense and grouped by kind in this order: GPUs, NVSwitch
//    domains (one vertex per node, standing for all its NVSwitch chips),
//    hosts (one per node), NICs, then leaf, spine and core switches.
//
// Fabric: one switch tree per rail (rail_optimized: NIC i of every node goes
// to rail i's tree) or one tree for all NICs (fat_tree, single_switch), each
// copied once per plane. A tree of E NICs with radix-k switches has 1 tier
// (one switch, E <= k), 2 tiers (leaves of k/2 down and k/2 up ports, k/2
// spines, leaf j-th uplink to spine j) or 3 tiers (pods of k/2 leaves and
// k/2 spines; (k/2)^2 cores in k/2 groups; spine j of every pod links to the
// k/2 cores of group j), i.e. the k-ary fat-tree, partially populated at the
// end. Leaves fill in order: NIC endpoint e sits on leaf e / (k/2).
// Oversubscription o divides each uplink's bandwidth by o (cumulatively:
// spine uplinks carry nic/(planes * o_leaf * o_spine)).
// Fabric faults: take_down() marks a physical link failed (both directions);
// routes avoid failed links (routing.h), so a failed spine or core switch is
// all of its links taken down (topology/fabric_faults.h).
// Units: bandwidth bytes/s per direction, latency SimTime per traversal.
// Ownership: a Cluster owns its graph; it is movable, not copyable.
// Thread safety: immutable after build_cluster() and any take_down() calls;
// share freely for reading.
#pragma once

#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/sim_time.h"
#include "topology/cluster_config.h"

namespace clustersim::topology {

using VertexId = uint32_t;
using EdgeId = uint32_t;

enum class VertexKind : uint8_t { kGpu, kNvSwitch, kHost, kNic, kLeaf, kSpine, kCore };
inline constexpr int kVertexKinds = 7;
const char* vertex_kind_name(VertexKind kind);

enum class LinkKind : uint8_t { kNvLink, kGpuNic, kGpuHost, kNicLeaf, kLeafSpine, kSpineCore };
inline constexpr int kLinkKinds = 6;
const char* link_kind_name(LinkKind kind);

// Sizes of the fabric's trees (all trees are identical).
struct FabricShape {
  int tiers = 1;            // 1, 2 or 3
  int64_t trees = 0;        // planes x rails (rail_optimized) or planes
  int64_t endpoints = 0;    // NICs per tree
  int64_t half_radix = 0;   // k/2: leaf down and up ports, spines per pod
  int64_t leaves = 0;       // per tree
  int64_t pods = 0;         // per tree (3 tiers), else 1
  int64_t spines = 0;       // per tree
  int64_t cores = 0;        // per tree
  double plane_Bps = 0;     // NIC-leaf link: NIC line rate / planes
  double leaf_up_Bps = 0;   // leaf-spine link
  double spine_up_Bps = 0;  // spine-core link
};

class Cluster {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

  const ClusterSpec& spec() const { return spec_; }
  const FabricShape& shape() const { return shape_; }
  const Graph& graph() const { return *graph_; }

  // GPUs are numbered node-major: GPU g is local GPU g % gpus_per_node of
  // node g / gpus_per_node. NICs likewise: NIC n is local NIC (rail)
  // n % nics_per_node of node n / nics_per_node.
  int64_t gpu_count() const { return gpus_; }
  int64_t node_count() const { return spec_.nodes; }
  int64_t nic_count() const { return nics_; }
  int64_t node_of_gpu(int64_t gpu) const { return gpu / gpn_; }
  int64_t first_gpu_of_node(int64_t node) const { return node * gpn_; }
  int64_t gpus_per_node() const { return gpn_; }
  // The rail of a GPU is the local index of the NIC it uses.
  int64_t rail_of_gpu(int64_t gpu) const { return (gpu % gpn_) / (gpn_ / npn_); }
  int64_t nic_of_gpu(int64_t gpu) const { return node_of_gpu(gpu) * npn_ + rail_of_gpu(gpu); }
  // The GPU that owns NIC `rail` of `node` (the first of the GPUs sharing it).
  int64_t gpu_on_rail(int64_t node, int64_t rail) const {
    return node * gpn_ + rail * (gpn_ / npn_);
  }

  VertexId gpu_vertex(int64_t gpu) const { return to_vertex(gpu); }
  VertexId nvswitch_vertex(int64_t node) const { return to_vertex(first_[1] + node); }
  VertexId host_vertex(int64_t node) const { return to_vertex(first_[2] + node); }
  VertexId nic_vertex(int64_t nic) const { return to_vertex(first_[3] + nic); }
  VertexId leaf_vertex(int64_t tree, int64_t leaf) const {
    return to_vertex(first_[4] + tree * shape_.leaves + leaf);
  }
  VertexId spine_vertex(int64_t tree, int64_t spine) const {
    return to_vertex(first_[5] + tree * shape_.spines + spine);
  }
  VertexId core_vertex(int64_t tree, int64_t core) const {
    return to_vertex(first_[6] + tree * shape_.cores + core);
  }

  size_t vertex_count() const { return static_cast<size_t>(first_[kVertexKinds]); }
  VertexKind kind(VertexId v) const;
  // Index of v among the vertices of its kind.
  int64_t index_in_kind(VertexId v) const;
  int64_t count(VertexKind kind) const;

  size_t link_count() const { return links_.size(); }
  size_t edge_count() const { return 2 * links_.size(); }
  int64_t link_count(LinkKind kind) const;
  static EdgeId reverse(EdgeId e) { return e ^ 1U; }
  VertexId source(EdgeId e) const { return (e & 1U) ? links_[e >> 1].upper : links_[e >> 1].lower; }
  VertexId target(EdgeId e) const { return (e & 1U) ? links_[e >> 1].lower : links_[e >> 1].upper; }
  LinkKind link_kind(EdgeId e) const { return classes_[links_[e >> 1].link_class].kind; }
  double bandwidth_Bps(EdgeId e) const { return classes_[links_[e >> 1].link_class].bandwidth_Bps; }
  sim::SimTime latency(EdgeId e) const { return classes_[links_[e >> 1].link_class].latency; }

  // Edge ids by structure ("up" direction; reverse() for down).
  EdgeId nvlink_up(int64_t gpu) const { return up(block_[0] + gpu); }
  EdgeId gpu_nic_up(int64_t gpu) const { return up(block_[1] + gpu); }
  EdgeId gpu_host_up(int64_t gpu) const { return up(block_[2] + gpu); }
  EdgeId nic_up(int64_t nic, int64_t plane) const {
    return up(block_[3] + nic * spec_.fabric.planes + plane);
  }
  // Uplink j of a leaf / spine (tree-local index), 0 <= j < half_radix.
  EdgeId leaf_up(int64_t tree, int64_t leaf, int64_t j) const {
    return up(block_[4] + (tree * shape_.leaves + leaf) * shape_.half_radix + j);
  }
  EdgeId spine_up(int64_t tree, int64_t spine, int64_t j) const {
    return up(block_[5] + (tree * shape_.spines + spine) * shape_.half_radix + j);
  }

  // Where NIC `nic` attaches in `plane`: its tree and endpoint index there.
  int64_t tree_of_nic(int64_t nic, int64_t plane) const;
  int64_t endpoint_of_nic(int64_t nic) const;
  int64_t leaf_of_endpoint(int64_t endpoint) const {
    return shape_.tiers == 1 ? 0 : endpoint / shape_.half_radix;
  }
  int64_t pod_of_leaf(int64_t leaf) const {
    return shape_.tiers == 3 ? leaf / shape_.half_radix : 0;
  }

  // Failed links (see the header). take_down(e) fails e's physical link;
  // call it before the cluster is shared.
  void take_down(EdgeId e);
  bool has_down_links() const { return down_links_ > 0; }
  int64_t down_link_count() const { return down_links_; }
  bool is_down(EdgeId e) const { return down_links_ > 0 && link_down_[e >> 1] != 0; }

  // Memory held by the graph and arrays, in bytes (approximate: counts
  // vector capacities, not allocator overhead).
  size_t memory_bytes() const;

 private:
  friend Cluster build_cluster(const ClusterSpec& spec);

  struct LinkClass {
    LinkKind kind;
    double bandwidth_Bps;
    sim::SimTime latency;
  };
  struct Link {
    VertexId lower;  // the endpoint nearer the GPU
    VertexId upper;
    uint8_t link_class;
  };

  static VertexId to_vertex(int64_t v) { return static_cast<VertexId>(v); }
  static EdgeId up(int64_t link) { return static_cast<EdgeId>(2 * link); }

  ClusterSpec spec_;
  FabricShape shape_;
  int64_t gpus_ = 0;
  int64_t nics_ = 0;
  int64_t gpn_ = 1;
  int64_t npn_ = 1;
  std::array<int64_t, kVertexKinds + 1> first_{};  // first vertex of each kind; [7] = total
  std::array<int64_t, kLinkKinds + 1> block_{};    // first link of each kind; [6] = total
  std::vector<LinkClass> classes_;
  std::vector<Link> links_;
  std::vector<uint8_t> link_down_;  // per physical link; empty until a take_down()
  int64_t down_links_ = 0;
  // Behind a pointer so that moving a Cluster never copies the graph
  // (Boost 1.74's adjacency_list copies on assignment).
  std::unique_ptr<Graph> graph_;
};

// Precondition: `spec` passed read_cluster_spec() (or equivalent checks);
// violations are InvariantErrors.
Cluster build_cluster(const ClusterSpec& spec);

}  // namespace clustersim::topology
