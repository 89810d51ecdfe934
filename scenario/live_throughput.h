// Fault-tolerant HSDP's throughput with k of its R replica groups alive,
// simulated the first time a campaign runs with k groups (not scaled from
// one point): the job with k groups steps in step(k) and does k / R of the
// full job's work per step, so its fraction of the full job's throughput is
//   f(k) = (k / R) x step(R) / step(k),
// at most 1. A k whose groups would not hold as many members on each node
// they use (the collective model's precondition: groups smaller than a node
// leaving one partly filled) gets the linear k / R instead, and so does a k
// whose simulation fails (with the reason kept for the report).
//
// Ownership: keeps references to the cluster and profile, which must
// outlive it (and every campaign that calls it).
// Thread safety: operator() may be called from several threads at once;
// each k is simulated once (std::call_once) and its answer depends on k
// alone, so a campaign's results do not depend on its thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hardware/hardware_profile.h"
#include "scenario/step_cache.h"
#include "topology/cluster.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

class LiveThroughput {
 public:
  // `config`: the full job's step (R = its replica_group_size >= 2);
  // `full_step_s`: that step's time.
  // `cache`: where simulated steps are kept between runs (null: none).
  LiveThroughput(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
                 workloads::StepConfig config, double full_step_s,
                 std::shared_ptr<const StepCache> cache = nullptr);

  // f(k) for 0 <= k <= R (InvariantError otherwise); f(0) = 0, f(R) = 1.
  double operator()(int64_t live);

  struct Simulated {
    int64_t groups = 0;
    double step_s = 0;  // 0 when the linear k / R was used
    std::string note;   // why the linear k / R was used
  };
  // The k asked for so far (1 <= k < R), ascending. Call when no campaign is
  // running.
  std::vector<Simulated> simulated() const;

 private:
  void compute(int64_t live);

  const topology::Cluster& cluster_;
  const collectives::HardwareProfile& profile_;
  workloads::StepConfig config_;
  double full_step_s_;
  std::shared_ptr<const StepCache> cache_;
  int64_t groups_;
  std::unique_ptr<std::once_flag[]> once_;
  std::vector<std::atomic<bool>> done_;
  std::vector<double> fraction_;
  std::vector<Simulated> result_;
};

}  // namespace clustersim::cli
