// Helpers for the topology tests: a schema with the identity and cluster
// keys, and clusters built from YAML text as a user would write it.
#pragma once

#include <string>
#include <string_view>

#include "config/config_schema.h"
#include "config/scenario_loader.h"
#include "topology/cluster.h"
#include "topology/cluster_config.h"

namespace clustersim::topology::testing {

inline sim::ConfigSchema cluster_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_cluster_keys(schema);
  return schema;
}

inline ClusterSpec spec_from_yaml(std::string_view yaml) {
  const sim::ConfigValues values = sim::load_scenario_text(yaml, "scenario.yaml", cluster_schema());
  return read_cluster_spec(values);
}

inline Cluster cluster_from_yaml(std::string_view yaml) {
  return build_cluster(spec_from_yaml(yaml));
}

// `nodes` custom nodes of 2 GPUs and 2 NICs of 100 GB/s in a fat-tree of
// radix-4 switches: small enough to draw by hand.
inline std::string small_fat_tree(int nodes, double leaf_oversubscription = 1.0) {
  return "name: t\ncluster:\n  nodes: " + std::to_string(nodes) +
         "\n  node: custom\n  custom_node:\n    gpus_per_node: 2\n"
         "    nvlink_bandwidth: 200GB/s\n    nics_per_node: 2\n    nic_bandwidth: 100GB/s\n"
         "    pcie_bandwidth: 50GB/s\n  fabric:\n    type: fat_tree\n    switch_radix: 4\n"
         "    leaf_oversubscription: " +
         std::to_string(leaf_oversubscription) + "\n";
}

}  // namespace clustersim::topology::testing
