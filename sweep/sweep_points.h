// The points of a sweep (see sweep/sweep_runner.h) from the scenario: the
// axes its sweep.axes names, and each point loaded and validated like the
// file with its axes' values as overrides, ready to simulate or with the
// reason it cannot be.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "hardware/hardware_profile.h"
#include "scenario/sweep_grid.h"
#include "scenario/work_limits.h"
#include "topology/cluster.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

// The scenario's sweep.axes (none when it has no such key).
// Errors: sim::ConfigError at sweep.axes for a key that is not a scenario
// key.
std::vector<SweepAxis> scenario_sweep_axes(const sim::ConfigValues& values,
                                           const sim::ConfigSchema& schema);

// HYBRID_SHARD: when one of shard_group_size / replica_group_size is swept
// and the other neither swept nor --set, the other's key (its file value is
// dropped so that it is derived); else "".
std::string derived_group_key(const std::vector<SweepAxis>& axes,
                              const std::vector<std::string>& sets);

// What one point needs to be simulated, or why it cannot be.
struct PreparedPoint {
  std::string reason;   // non-empty: not to be simulated, for this reason
  bool failed = false;  // with a reason: clustersim failed, not the input
  sim::ConfigValues values;
  const topology::Cluster* cluster = nullptr;             // owned by the PointLoader
  const collectives::HardwareProfile* profile = nullptr;  // owned by the PointLoader
  workloads::StepConfig config;
  int64_t task_timelines = 0;  // its step's estimated work (workloads/schedules/step_work.h)
};

// Loads points from the scenario's text. Clusters and profiles are built
// once per distinct cluster.* setting and profile path and owned here, so
// a PointLoader must outlive the points it prepared.
// Thread safety: none (the sweep prepares points serially); the prepared
// points' clusters and profiles may then be read from any thread.
class PointLoader {
 public:
  // `dropped`: derived_group_key's key, or "".
  PointLoader(std::string path, std::string text, std::vector<std::string> sets,
              std::string dropped, WorkLimits limits = {});

  // The point's values (throws sim::ConfigError).
  sim::ConfigValues values(const std::vector<std::string>& overrides) const;
  // The point's data-parallel size, for `divisors` axes.
  DpSize dp_size(const std::vector<std::string>& overrides) const;
  // Never throws for a bad point: every error becomes the reason.
  PreparedPoint prepare(const std::vector<std::string>& overrides);

 private:
  const topology::Cluster& cluster_for(const sim::ConfigValues& v);
  // The profile the point names, or nothing with the reason in `reason`.
  const collectives::HardwareProfile* profile_for(const sim::ConfigValues& v, std::string& reason);

  std::string path_;
  std::string text_;
  std::vector<std::string> sets_;
  std::string dropped_;
  WorkLimits limits_;
  sim::ConfigSchema schema_;
  std::map<std::string, std::unique_ptr<topology::Cluster>> clusters_;
  std::map<std::string, std::unique_ptr<collectives::HardwareProfile>> profiles_;
};

}  // namespace clustersim::cli
