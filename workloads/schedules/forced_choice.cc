#include "workloads/schedules/forced_choice.h"

#include <set>
#include <stdexcept>
#include <utility>

#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_program.h"

namespace clustersim::workloads {

namespace {

std::string group_text(GroupRole role) {
  switch (role) {
    case GroupRole::kShard:
      return "the FSDP shard group";
    case GroupRole::kReplica:
      return "the replica group";
    case GroupRole::kTp:
      return "the tensor-parallel group";
    case GroupRole::kPp:
      return "the pipeline group";
    case GroupRole::kCp:
      return "the context-parallel group";
    case GroupRole::kNone:
      break;
  }
  return "no group";
}

}  // namespace

std::optional<std::string> forced_choice_problem(const topology::Cluster& cluster,
                                                 const collectives::HardwareProfile& profile,
                                                 const StepConfig& config,
                                                 const collectives::ForcedChoice& forced) {
  const WorkloadSpec& w = config.workload;
  const Layout layout = step::step_layout(w, cluster);
  const FsdpSchedule schedule = build_fsdp_schedule(w, config.schedule_options);
  // A template repeats each (group, collective) pair for every block and
  // micro-batch; one tuning of each answers for all.
  std::set<std::pair<GroupRole, collectives::CollectiveOp>> tried;
  for (const Task& t : schedule.tasks) {
    const std::optional<collectives::CollectiveOp> op = collective_of(t.kind);
    if (!op || !tried.emplace(t.group, *op).second) continue;
    try {
      collectives::tune_collective(profile, step::group_geometry(layout, t.group, cluster), *op,
                                   t.bytes, forced);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()) + " (" + group_text(t.group) + " of the step)";
    }
  }
  return std::nullopt;
}

}  // namespace clustersim::workloads
