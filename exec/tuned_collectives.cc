#include "exec/tuned_collectives.h"

#include "sim/sim_time.h"

namespace clustersim::workloads {

TunedTimes tuned_times(const collectives::TunedCollective& tuned, int64_t bytes) {
  TunedTimes t;
  t.latency_ns = sim::SimTime::from_seconds_rounded(tuned.cost.latency_s).count_ns();
  t.transfer_ns = sim::SimTime::from_seconds_rounded(tuned.cost.transfer_s).count_ns();
  t.alone_Bps = tuned.cost.transfer_s > 0 ? static_cast<double>(bytes) / tuned.cost.transfer_s : 0;
  t.algorithm = collectives::to_string(tuned.choice.algorithm);
  t.protocol = collectives::to_string(tuned.choice.protocol);
  return t;
}

int32_t TunedCollectives::find_or_tune(const collectives::GroupGeometry& geometry,
                                       collectives::CollectiveOp op, int64_t bytes, bool forced) {
  const auto key = std::make_tuple(geometry.ranks, geometry.nodes, geometry.ranks_per_node,
                                   static_cast<int>(op), bytes, forced);
  const auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  const collectives::TunedCollective tc = collectives::tune_collective(
      profile_, geometry, op, bytes, forced ? forced_ : collectives::ForcedChoice{});
  tuned_.push_back(tuned_times(tc, bytes));
  const auto id = static_cast<int32_t>(tuned_.size() - 1);
  index_.emplace(key, id);
  return id;
}

}  // namespace clustersim::workloads
