#include "scenario/degraded_steps.h"

#include <algorithm>
#include <cstdio>
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

DegradedSteps::DegradedSteps(const topology::Cluster& cluster,
                             const collectives::HardwareProfile& profile,
                             workloads::StepConfig config, double healthy_step_s,
                             std::shared_ptr<const StepCache> cache)
    : cluster_(cluster),
      profile_(profile),
      config_(std::move(config)),
      healthy_step_s_(healthy_step_s),
      cache_(std::move(cache)) {
  CLUSTERSIM_CHECK(healthy_step_s_ > 0, "a healthy step time");
  slowdown_.fill(1.0);
}

double DegradedSteps::operator()(ComponentKind kind) {
  const int slot = slot_of(kind);
  if (slot < 0) return 1.0;
  const auto i = static_cast<size_t>(slot);
  std::call_once(once_[i], [this, slot, kind] { compute(slot, kind); });
  return slowdown_[i];
}

void DegradedSteps::compute(int slot, ComponentKind kind) {
  const auto i = static_cast<size_t>(slot);
  Simulated& out = result_[i];
  out.kind = kind;
  const int tiers = cluster_.shape().tiers;
  const bool has_tier = kind == ComponentKind::kCoreSwitch ? tiers == 3 : tiers >= 2;
  if (!has_tier) {
    out.note = "the fabric has no such tier";
  } else {
    try {
      out.step_s = cached_step(cache_.get(), failures::component_kind_name(kind), [&] {
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
        return workloads::simulate_step(degraded, profile_, config).step_time_s;
      });
      slowdown_[i] = std::max(1.0, out.step_s / healthy_step_s_);
    } catch (const std::exception& e) {
      out.step_s = 0;
      out.note = std::string("simulation failed: ") + e.what();
    }
  }
  done_[i].store(true, std::memory_order_release);
}

double DegradedSteps::straggler(double slowdown) {
  constexpr size_t kSlot = kKinds - 1;
  std::call_once(once_[kSlot], [this, slowdown] { compute_straggler(slowdown); });
  return slowdown_[kSlot];
}

void DegradedSteps::compute_straggler(double slowdown) {
  constexpr size_t kSlot = kKinds - 1;
  Simulated& out = result_[kSlot];
  out.kind = ComponentKind::kHost;
  workloads::StepConfig config = config_;
  const int64_t gpus = std::min(cluster_.gpus_per_node(), config.workload.world_size);
  std::erase_if(config.stragglers, [gpus](const workloads::Straggler& s) { return s.rank < gpus; });
  for (int64_t r = 0; r < gpus; ++r) config.stragglers.push_back({r, slowdown});
  std::sort(
      config.stragglers.begin(), config.stragglers.end(),
      [](const workloads::Straggler& a, const workloads::Straggler& b) { return a.rank < b.rank; });
  try {
    char item[48];
    std::snprintf(item, sizeof item, "straggler_%.17g", slowdown);
    out.step_s = cached_step(cache_.get(), item, [&] {
      return workloads::simulate_step(cluster_, profile_, config).step_time_s;
    });
    slowdown_[kSlot] = std::max(1.0, out.step_s / healthy_step_s_);
  } catch (const std::exception& e) {
    // The scenario's own slowdown, as without a simulated step.
    slowdown_[kSlot] = slowdown;
    out.step_s = 0;
    out.note = std::string("simulation failed: ") + e.what();
  }
  done_[kSlot].store(true, std::memory_order_release);
}

std::vector<DegradedSteps::Simulated> DegradedSteps::simulated() const {
  std::vector<Simulated> out;
  for (size_t i = 0; i < result_.size(); ++i) {
    if (done_[i].load(std::memory_order_acquire)) out.push_back(result_[i]);
  }
  return out;
}

}  // namespace clustersim::cli
