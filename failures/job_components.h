// JobComponents: the parts of a cluster that one training job runs on, counted
// by kind, each kind numbered 0..count-1, and which nodes a failure of one of
// them takes out. Failure rates are per component-hour of these kinds, so the
// counts here turn a per-component rate into the job's failure rate.
//
// Placement: the job holds GPUs 0..job_gpus-1 of the cluster (node-major, as
// topology::Cluster numbers them), hence nodes 0..nodes()-1 (the last one may
// be partly used; it still counts as a whole node for host, NIC and software
// faults). The job's fabric is the part of the switch trees its NICs reach:
// the leaves its NIC endpoints sit on, the spines of those leaves' pods when
// it spans more than one leaf, and every core when it spans more than one
// pod. For the whole cluster the switch counts equal topology::Cluster's
// (Cluster::count(VertexKind::kLeaf) etc.; the tests check it); the shape
// formulas mirror build_cluster() (topology/cluster.h describes the trees).
//
// Numbering within a kind (what Failure::component_index means):
//  * kGpu, kGpuHbm: the job's GPU (= rank) id; kHost, kNvSwitch,
//    kNodeSoftware: node id; kNic: node * nics_per_node + rail;
//  * kNicCable (NIC-to-leaf cable): nic * planes + plane;
//  * kLeafSwitch, kSpineSwitch, kCoreSwitch: tree * (per tree) + index in the
//    tree, trees as in topology (plane * rails + rail for rail_optimized);
//  * kFabricLink (switch-to-switch cable): the leaf-spine links first, tree by
//    tree, leaf by leaf, uplink j; then the spine-core links;
//  * kJobSoftware: 0 (one per job).
//
// Units: counts; no time here. Thread safety: an immutable value type.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "topology/cluster_config.h"

namespace clustersim::failures {

enum class ComponentKind : uint8_t {
  kGpu,
  kGpuHbm,
  kHost,
  kNic,
  kNvSwitch,
  kNicCable,
  kLeafSwitch,
  kSpineSwitch,
  kCoreSwitch,
  kFabricLink,
  kNodeSoftware,  // the job's processes on one node (a per-node software fault)
  kJobSoftware,   // the job as a whole (a per-job software fault)
};
inline constexpr int kComponentKinds = 12;

// "gpu", "gpu_hbm", "host", "nic", "nvswitch", "nic_cable", "leaf_switch",
// "spine_switch", "core_switch", "fabric_link", "node_software", "job_software".
std::string_view component_kind_name(ComponentKind kind);

// Nodes first..first+count-1 of the job.
struct NodeRange {
  int64_t first = 0;
  int64_t count = 0;
};

class JobComponents {
 public:
  // An empty job (every count 0).
  JobComponents() = default;
  // `spec` as read_cluster_spec() returns it (validated); 1 <= job_gpus <=
  // spec.nodes * gpus_per_node, else InvariantError (the job's size is checked
  // where it is read, by the workload).
  JobComponents(const topology::ClusterSpec& spec, int64_t job_gpus);

  int64_t count(ComponentKind kind) const { return counts_[static_cast<size_t>(kind)]; }
  int64_t gpus() const { return count(ComponentKind::kGpu); }
  int64_t nodes() const { return count(ComponentKind::kHost); }
  int64_t gpus_per_node() const { return gpus_per_node_; }
  int64_t nics_per_node() const { return nics_per_node_; }
  // Switch tiers of the cluster's trees (1, 2 or 3) and k/2 (ports down and
  // up of a leaf; spines per pod).
  int fabric_tiers() const { return tiers_; }
  int64_t half_radix() const { return half_radix_; }

  // The nodes a failure of component `index` of `kind` takes out: the node
  // that holds it (GPU, HBM, host, NIC, NVSwitch, NIC cable, node software),
  // every job node behind a leaf switch (for a rail-optimized fabric, the
  // nodes whose NIC on that rail it serves), every node for job software, and
  // none for a spine, core or switch-to-switch cable (the fabric routes
  // around them at reduced bandwidth). InvariantError if index is out of range.
  NodeRange nodes_of(ComponentKind kind, int64_t index) const;
  // The nodes a failure of component `index` of `kind` with blast radius
  // kLeaf takes out: every job node behind the leaf switch that serves the
  // component's first node (on its first rail); a leaf switch's own nodes
  // for a leaf switch; the node alone when the job has no leaf switch.
  NodeRange leaf_nodes_of(ComponentKind kind, int64_t index) const;

  // Fraction of its tier's uplink capacity that the tree (or pod) struck by a
  // failed spine, core or switch-to-switch link keeps: (k/2 - 1) / (k/2),
  // since each leaf (spine) spreads its traffic over k/2 uplinks. 1 for other
  // kinds.
  double capacity_left_after(ComponentKind kind) const;

 private:
  std::array<int64_t, kComponentKinds> counts_{};
  int64_t gpus_per_node_ = 0;
  int64_t nics_per_node_ = 0;
  int64_t planes_ = 0;
  bool rail_optimized_ = true;
  int tiers_ = 1;
  int64_t half_radix_ = 0;
  int64_t endpoints_ = 0;        // the job's NIC endpoints per tree
  int64_t leaves_per_tree_ = 0;  // the job's leaves per tree
};

}  // namespace clustersim::failures
