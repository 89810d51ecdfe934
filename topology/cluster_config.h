// The scenario's `cluster` section: how many nodes, what a node is (a preset
// or a custom description), and the network fabric between nodes.
//
// add_cluster_keys() declares every key once (type, unit, default, doc,
// validation); read_cluster_spec() turns validated values into a plain
// ClusterSpec and checks what no single key can: that a custom node is
// complete, that its GPUs divide evenly among its NICs, and that the nodes
// fit the fabric's tiers at the given switch radix. Each such error points at
// the responsible key's file:line (ConfigError, all problems at once).
//
// Units and conventions:
//  * Every bandwidth is bytes per second PER DIRECTION of one link. Vendor
//    NVLink figures are bidirectional totals (H100: 900 GB/s = 450 GB/s each
//    way); `nvlink_bandwidth` is the per-direction figure (450 GB/s), i.e. the
//    rate at which one GPU can send into its NVSwitch domain while it also
//    receives at the same rate. NIC figures are line rates per direction
//    (400 Gb/s = 50 GB/s each way).
//  * Latencies are SimTime per link traversal (a switch's forwarding delay
//    is folded into the link that enters it).
// Thread safety: pure functions; ClusterSpec is a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "sim/sim_time.h"

namespace clustersim::topology {

enum class FabricType { kRailOptimized, kFatTree, kSingleSwitch };

std::string_view fabric_type_name(FabricType type);

// One node: GPUs on one NVSwitch domain, NICs attached to them, a host CPU.
struct NodeSpec {
  std::string preset;  // "hgx_h100", ..., or "custom"
  int64_t gpus_per_node = 0;
  double nvlink_Bps = 0;  // per GPU, per direction, into the NVSwitch domain
  int64_t nics_per_node = 0;
  double nic_Bps = 0;   // per NIC, per direction (line rate)
  double pcie_Bps = 0;  // per GPU, per direction, GPU<->NIC and GPU<->host
};

struct FabricSpec {
  FabricType type = FabricType::kRailOptimized;
  int64_t switch_radix = 64;  // ports per switch, even
  // Downlink capacity : uplink capacity of a leaf (spine) switch. 1 is
  // non-blocking; 2 halves each uplink's capacity.
  double leaf_oversubscription = 1.0;
  double spine_oversubscription = 1.0;
  // Identical copies of the fabric; each NIC splits its line rate evenly
  // over one port per plane.
  int64_t planes = 1;
};

struct LatencySpec {
  sim::SimTime nvlink;   // GPU<->NVSwitch link
  sim::SimTime pcie;     // GPU<->NIC and GPU<->host links
  sim::SimTime network;  // NIC<->switch and switch<->switch links
};

struct ClusterSpec {
  int64_t nodes = 0;
  NodeSpec node;
  FabricSpec fabric;
  LatencySpec latency;
};

// The node presets by name (without "custom"). Returns false for an unknown
// name. Figures and their sources are in cluster_config.cc.
bool node_preset(std::string_view name, NodeSpec& out);

// The key that sizes the job, for errors about its size: cluster.gpus when
// the scenario gives it, else cluster.nodes.
std::string_view job_size_key(const sim::ConfigValues& values);

// Declares sections `cluster`, `cluster.custom_node`, `cluster.fabric`,
// `cluster.latency` and their keys. No key is required: scenarios that do
// not simulate a cluster omit the section; read_cluster_spec() reports a
// missing `cluster.nodes`.
void add_cluster_keys(sim::ConfigSchema& schema);

// Throws sim::ConfigError listing every inconsistency found.
ClusterSpec read_cluster_spec(const sim::ConfigValues& values);

// NICs that attach to one switch tree: a rail's NICs (one per node) for
// rail_optimized, every NIC for fat_tree and single_switch.
int64_t endpoints_per_tree(const ClusterSpec& spec);
// Switch tiers of one tree with `endpoints` NICs and `radix`-port switches:
// 1 if one switch holds them all (<= radix), 2 for a leaf/spine tree
// (<= radix^2/2), 3 for leaf/spine/core (<= radix^3/4, the k-ary fat-tree);
// 0 if even 3 tiers (or, for single_switch, one switch) cannot hold them.
int fabric_tiers(FabricType type, int64_t endpoints, int64_t radix);

// Largest cluster read_cluster_spec() accepts, in GPUs: ids are 32-bit and
// a graph of this size still builds in about a second.
inline constexpr int64_t kMaxClusterGpus = int64_t{1} << 20;

}  // namespace clustersim::topology
