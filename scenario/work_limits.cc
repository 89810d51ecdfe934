#include "scenario/work_limits.h"

#include <string>

#include "config/config_error.h"
#include "topology/cluster_config.h"

namespace clustersim::cli {

namespace {

// The key a scenario sets that makes the schedule long: its micro-batches
// when there are several, else the model's depth.
std::string tasks_key(const workloads::WorkloadSpec& w, const sim::ConfigValues& values) {
  if (w.pp > 1 && values.has("workload.pipeline.microbatches")) {
    return "workload.pipeline.microbatches";
  }
  if (w.grad_accum > 1 && values.has("workload.grad_accum")) return "workload.grad_accum";
  return "workload.model";
}

std::string found_text(const std::string& key, const workloads::WorkloadSpec& w) {
  if (key == "workload.model") {
    return "a model of " + with_separators(w.model.layers) + " layers";
  }
  return std::to_string(w.grad_accum) + " micro-batches";
}

}  // namespace

std::string timelines_text(const workloads::StepWork& work) {
  const std::string ranks = with_separators(work.ranks) + " ranks";
  if (work.timelines <= 0 || work.timelines == work.ranks) return ranks;
  return ranks + " as " + with_separators(work.timelines) + " timelines";
}

std::optional<WorkExcess> work_excess(const workloads::StepWork& work,
                                      const workloads::WorkloadSpec& w,
                                      const sim::ConfigValues& values, const WorkLimits& limits) {
  if (work.tasks_per_rank > limits.max_tasks_per_rank) {
    const std::string key = tasks_key(w, values);
    return WorkExcess{key, "expected at most " + with_separators(limits.max_tasks_per_rank) +
                               " tasks per rank (--max-tasks-per-rank raises the limit), found " +
                               found_text(key, w) + ", about " +
                               with_separators(work.tasks_per_rank) + " tasks per rank"};
  }
  if (work.task_timelines() > limits.max_task_timelines) {
    return WorkExcess{std::string(topology::job_size_key(values)),
                      "expected at most " + with_separators(limits.max_task_timelines) +
                          " tasks x timelines to simulate (--max-events raises the limit), found " +
                          timelines_text(work) + " of " + with_separators(work.tasks_per_rank) +
                          " tasks, " + with_separators(work.task_timelines())};
  }
  return std::nullopt;
}

void check_step_work(const workloads::StepWork& work, const workloads::WorkloadSpec& w,
                     const sim::ConfigValues& values, const WorkLimits& limits) {
  const std::optional<WorkExcess> excess = work_excess(work, w, values, limits);
  if (!excess) return;
  sim::DiagnosticSink sink;
  sink.add(values.where(values.has(excess->key) ? excess->key : "workload.model"), excess->key,
           excess->message);
  sink.throw_if_any();
}

}  // namespace clustersim::cli
