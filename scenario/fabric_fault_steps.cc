#include "scenario/fabric_fault_steps.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "sim/check.h"
#include "topology/fabric_faults.h"

namespace clustersim::cli {

using failures::ComponentKind;

namespace {

int slot_of(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::kSpineSwitch:
      return 0;
    case ComponentKind::kCoreSwitch:
      return 1;
    case ComponentKind::kFabricLink:
      return 2;
    default:
      return -1;
  }
}

}  // namespace

FabricFaultSteps::FabricFaultSteps(const topology::Cluster& cluster,
                                   const collectives::HardwareProfile& profile,
                                   workloads::StepConfig config, double healthy_step_s)
    : cluster_(cluster),
      profile_(profile),
      config_(std::move(config)),
      healthy_step_s_(healthy_step_s) {
  CLUSTERSIM_CHECK(healthy_step_s_ > 0, "a healthy step time");
  slowdown_.fill(1.0);
}

double FabricFaultSteps::operator()(ComponentKind kind) {
  const int slot = slot_of(kind);
  if (slot < 0) return 1.0;
  const auto i = static_cast<size_t>(slot);
  std::call_once(once_[i], [this, slot, kind] { compute(slot, kind); });
  return slowdown_[i];
}

void FabricFaultSteps::compute(int slot, ComponentKind kind) {
  const auto i = static_cast<size_t>(slot);
  Simulated& out = result_[i];
  out.kind = kind;
  const int tiers = cluster_.shape().tiers;
  const bool has_tier = kind == ComponentKind::kCoreSwitch ? tiers == 3 : tiers >= 2;
  if (!has_tier) {
    out.note = "the fabric has no such tier";
  } else {
    try {
      topology::Cluster degraded = topology::build_cluster(cluster_.spec());
      switch (kind) {
        case ComponentKind::kSpineSwitch:
          topology::fail_spine(degraded, 0, 0);
          break;
        case ComponentKind::kCoreSwitch:
          topology::fail_core(degraded, 0, 0);
          break;
        default:
          topology::fail_leaf_uplink(degraded, 0, 0, 0);
          break;
      }
      workloads::StepConfig config = config_;
      config.healthy_fabric = &cluster_;
      out.step_s = workloads::simulate_step(degraded, profile_, config).step_time_s;
      slowdown_[i] = std::max(1.0, out.step_s / healthy_step_s_);
    } catch (const std::exception& e) {
      out.step_s = 0;
      out.note = std::string("simulation failed: ") + e.what();
    }
  }
  done_[i].store(true, std::memory_order_release);
}

std::vector<FabricFaultSteps::Simulated> FabricFaultSteps::simulated() const {
  std::vector<Simulated> out;
  for (size_t i = 0; i < result_.size(); ++i) {
    if (done_[i].load(std::memory_order_acquire)) out.push_back(result_[i]);
  }
  return out;
}

}  // namespace clustersim::cli
