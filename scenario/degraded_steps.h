// The step while something slows the job without stopping it, simulated the
// first time a campaign needs it, as a multiple of the healthy step:
//  * one failed spine switch, core switch or switch-to-switch cable
//    (failures' degrade_bandwidth blast radius): the cluster is built again
//    with the component's links taken down (topology/fabric_faults.h),
//    routes re-hash around them, and
//      slowdown(kind) = max(1, step(degraded) / step(healthy));
//    a fault that cannot slow the job (its tree has no such tier) is 1;
//  * a straggler node (failures.stragglers): the step with node 0's GPUs
//    computing `slowdown` times slower (StepConfig::stragglers), since the
//    slowest member gates every collective but not every moment of the step:
//      straggler(slowdown) = max(1, step(straggler) / step(healthy)).
//
// Which component: the first of its kind in the job's fabric (tree 0: spine
// 0, core 0, leaf 0's uplink 0). Every tree of a rail-optimized fabric and
// every spine of a tree carry the same kind of traffic, so one stands for
// all ("cached per distinct degradation" by kind); an ECMP hash may place a
// collision differently for another one.
//
// Ownership: keeps references to the cluster and profile, which must
// outlive it (and every campaign that calls it).
// Thread safety: operator() and straggler() may be called from several
// threads at once; each kind (and the straggler, one slowdown per campaign)
// is simulated once (std::call_once) and its answer depends on the kind
// alone, so a campaign's results do not depend on its thread count.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "failures/job_components.h"
#include "hardware/hardware_profile.h"
#include "scenario/step_cache.h"
#include "topology/cluster.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

class DegradedSteps {
 public:
  // `config`: the healthy job's step; `healthy_step_s` its time (> 0).
  // `cache`: where simulated steps are kept between runs (null: none).
  DegradedSteps(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
                workloads::StepConfig config, double healthy_step_s,
                std::shared_ptr<const StepCache> cache = nullptr);

  // slowdown(kind) >= 1 for kSpineSwitch, kCoreSwitch, kFabricLink; 1 for
  // any other kind.
  double operator()(failures::ComponentKind kind);
  // The step's multiple with one node `slowdown` (>= 1) times slower.
  // Precondition: every call of one object passes the same slowdown (a
  // campaign's straggler process has one).
  double straggler(double slowdown);

  struct Simulated {
    failures::ComponentKind kind{};  // kHost for the straggler
    double step_s = 0;               // 0 when not simulated (see note)
    std::string note;                // why the slowdown is 1 without a simulation
  };
  // The kinds asked for so far, in kind order, then the straggler. Call
  // when no campaign is running.
  std::vector<Simulated> simulated() const;

 private:
  static constexpr int kKinds = 4;  // spine, core, fabric link, straggler
  void compute(int slot, failures::ComponentKind kind);
  void compute_straggler(double slowdown);

  const topology::Cluster& cluster_;
  const collectives::HardwareProfile& profile_;
  workloads::StepConfig config_;
  double healthy_step_s_;
  std::shared_ptr<const StepCache> cache_;
  std::array<std::once_flag, kKinds> once_;
  std::array<std::atomic<bool>, kKinds> done_{};
  std::array<double, kKinds> slowdown_{};
  std::array<Simulated, kKinds> result_{};
};

}  // namespace clustersim::cli
