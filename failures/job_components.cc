#include "failures/job_components.h"

#include <algorithm>
#include <string>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string_view component_kind_name(ComponentKind kind) {
  static constexpr std::array<std::string_view, kComponentKinds> kNames = {
      "gpu",         "gpu_hbm",      "host",        "nic",         "nvswitch",      "nic_cable",
      "leaf_switch", "spine_switch", "core_switch", "fabric_link", "node_software", "job_software"};
  return kNames[static_cast<size_t>(kind)];
}

JobComponents::JobComponents(const topology::ClusterSpec& spec, int64_t job_gpus) {
  const int64_t gpn = spec.node.gpus_per_node;
  const int64_t npn = spec.node.nics_per_node;
  CLUSTERSIM_CHECK(spec.nodes > 0 && gpn > 0 && npn > 0 && spec.fabric.planes > 0 &&
                       spec.fabric.switch_radix >= 2,
                   "cluster spec not validated");
  CLUSTERSIM_CHECK(job_gpus > 0 && job_gpus <= spec.nodes * gpn,
                   "job of " + std::to_string(job_gpus) + " GPUs on a cluster of " +
                       std::to_string(spec.nodes * gpn));
  gpus_per_node_ = gpn;
  nics_per_node_ = npn;
  planes_ = spec.fabric.planes;
  rail_optimized_ = spec.fabric.type == topology::FabricType::kRailOptimized;
  half_radix_ = spec.fabric.switch_radix / 2;
  // The tiers are the cluster's: a job on part of a 3-tier fabric still has
  // its traffic between pods cross the cores.
  tiers_ = topology::fabric_tiers(spec.fabric.type, topology::endpoints_per_tree(spec),
                                  spec.fabric.switch_radix);
  CLUSTERSIM_CHECK(tiers_ > 0, "cluster spec not validated: the fabric cannot hold its NICs");

  const int64_t nodes = ceil_div(job_gpus, gpn);
  const int64_t nics = nodes * npn;
  const int64_t trees = planes_ * (rail_optimized_ ? npn : 1);
  endpoints_ = rail_optimized_ ? nodes : nics;
  const int64_t h = half_radix_;
  leaves_per_tree_ = tiers_ == 1 ? 1 : ceil_div(endpoints_, h);
  const int64_t pods = tiers_ == 3 ? ceil_div(leaves_per_tree_, h) : 1;
  const int64_t spines_per_tree = tiers_ >= 2 && leaves_per_tree_ > 1 ? pods * h : 0;
  const int64_t cores_per_tree = tiers_ == 3 && pods > 1 ? h * h : 0;
  const int64_t leaf_spine_links = spines_per_tree > 0 ? trees * leaves_per_tree_ * h : 0;
  const int64_t spine_core_links = cores_per_tree > 0 ? trees * spines_per_tree * h : 0;

  auto set = [this](ComponentKind kind, int64_t n) { counts_[static_cast<size_t>(kind)] = n; };
  set(ComponentKind::kGpu, job_gpus);
  set(ComponentKind::kGpuHbm, job_gpus);
  set(ComponentKind::kHost, nodes);
  set(ComponentKind::kNic, nics);
  set(ComponentKind::kNvSwitch, nodes);
  set(ComponentKind::kNicCable, nics * planes_);
  set(ComponentKind::kLeafSwitch, trees * leaves_per_tree_);
  set(ComponentKind::kSpineSwitch, trees * spines_per_tree);
  set(ComponentKind::kCoreSwitch, trees * cores_per_tree);
  set(ComponentKind::kFabricLink, leaf_spine_links + spine_core_links);
  set(ComponentKind::kNodeSoftware, nodes);
  set(ComponentKind::kJobSoftware, 1);
}

NodeRange JobComponents::nodes_of(ComponentKind kind, int64_t index) const {
  CLUSTERSIM_CHECK(index >= 0 && index < count(kind), std::string(component_kind_name(kind)) + " " +
                                                          std::to_string(index) + " of " +
                                                          std::to_string(count(kind)));
  switch (kind) {
    case ComponentKind::kGpu:
    case ComponentKind::kGpuHbm:
      return {index / gpus_per_node_, 1};
    case ComponentKind::kHost:
    case ComponentKind::kNvSwitch:
    case ComponentKind::kNodeSoftware:
      return {index, 1};
    case ComponentKind::kNic:
      return {index / nics_per_node_, 1};
    case ComponentKind::kNicCable:
      return {index / planes_ / nics_per_node_, 1};
    case ComponentKind::kLeafSwitch: {
      const int64_t leaf = index % leaves_per_tree_;
      const int64_t first = tiers_ == 1 ? 0 : leaf * half_radix_;
      const int64_t end = tiers_ == 1 ? endpoints_ : std::min(first + half_radix_, endpoints_);
      if (rail_optimized_) return {first, end - first};  // endpoints are nodes
      const int64_t first_node = first / nics_per_node_;
      return {first_node, (end - 1) / nics_per_node_ + 1 - first_node};
    }
    case ComponentKind::kSpineSwitch:
    case ComponentKind::kCoreSwitch:
    case ComponentKind::kFabricLink:
      return {0, 0};
    case ComponentKind::kJobSoftware:
      return {0, nodes()};
  }
  return {0, 0};
}

NodeRange JobComponents::leaf_nodes_of(ComponentKind kind, int64_t index) const {
  if (kind == ComponentKind::kLeafSwitch) return nodes_of(kind, index);
  const NodeRange struck = nodes_of(kind, index);
  if (count(ComponentKind::kLeafSwitch) == 0 || struck.count == 0) return struck;
  if (tiers_ == 1) return nodes_of(ComponentKind::kLeafSwitch, 0);
  const int64_t endpoint = rail_optimized_ ? struck.first : struck.first * nics_per_node_;
  return nodes_of(ComponentKind::kLeafSwitch, endpoint / half_radix_);
}

double JobComponents::capacity_left_after(ComponentKind kind) const {
  switch (kind) {
    case ComponentKind::kSpineSwitch:
    case ComponentKind::kCoreSwitch:
    case ComponentKind::kFabricLink:
      return static_cast<double>(half_radix_ - 1) / static_cast<double>(half_radix_);
    default:
      return 1.0;
  }
}

}  // namespace clustersim::failures
