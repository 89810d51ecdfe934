#include "scenario/live_throughput.h"

#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "sim/check.h"
#include "workloads/schedules/step_program.h"

namespace clustersim::cli {

LiveThroughput::LiveThroughput(const topology::Cluster& cluster,
                               const collectives::HardwareProfile& profile,
                               workloads::StepConfig config, double full_step_s,
                               std::shared_ptr<const StepCache> cache)
    : cluster_(cluster),
      profile_(profile),
      config_(std::move(config)),
      full_step_s_(full_step_s),
      cache_(std::move(cache)),
      groups_(config_.workload.replica_group_size),
      once_(std::make_unique<std::once_flag[]>(static_cast<size_t>(groups_ + 1))),
      done_(static_cast<size_t>(groups_ + 1)),
      fraction_(static_cast<size_t>(groups_ + 1), 0.0),
      result_(static_cast<size_t>(groups_ + 1)) {
  CLUSTERSIM_CHECK(groups_ >= 2 && full_step_s_ > 0, "a step of at least 2 replica groups");
}

double LiveThroughput::operator()(int64_t live) {
  CLUSTERSIM_CHECK(live >= 0 && live <= groups_, "0 to R groups alive");
  if (live == 0) return 0;
  if (live == groups_) return 1;
  const auto k = static_cast<size_t>(live);
  std::call_once(once_[k], [this, live] { compute(live); });
  return fraction_[k];
}

void LiveThroughput::compute(int64_t live) {
  const auto k = static_cast<size_t>(live);
  Simulated& out = result_[k];
  out.groups = live;
  const double linear = static_cast<double>(live) / static_cast<double>(groups_);
  fraction_[k] = linear;
  workloads::StepConfig fewer = config_;
  workloads::WorkloadSpec& w = fewer.workload;
  w.replica_group_size = live;
  w.dp_size = w.shard_group_size * live;
  w.world_size = w.dp_size * w.tp * w.pp;
  if (live == 1) w.strategy = workloads::ShardingStrategy::kFullShard;
  std::erase_if(fewer.stragglers,
                [&w](const workloads::Straggler& s) { return s.rank >= w.world_size; });
  if (workloads::step::uneven_group(cluster_, workloads::step::mesh_layout(w),
                                    /*every_group=*/true)) {
    out.note = "groups uneven over the nodes";
  } else {
    try {
      out.step_s = cached_step(cache_.get(), "groups_" + std::to_string(live), [&] {
        return workloads::simulate_step(cluster_, profile_, fewer).step_time_s;
      });
      fraction_[k] = std::clamp(linear * full_step_s_ / out.step_s, 0.0, 1.0);
    } catch (const std::exception& e) {
      out.step_s = 0;
      out.note = std::string("simulation failed: ") + e.what();
    }
  }
  done_[k].store(true, std::memory_order_release);
}

std::vector<LiveThroughput::Simulated> LiveThroughput::simulated() const {
  std::vector<Simulated> out;
  for (size_t k = 1; k < result_.size() - 1; ++k) {
    if (done_[k].load(std::memory_order_acquire)) out.push_back(result_[k]);
  }
  return out;
}

}  // namespace clustersim::cli
