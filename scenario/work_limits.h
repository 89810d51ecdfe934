// Limits on the work of one simulated step, checked before the step is
// built (issue 17: no input may run for hours or exhaust memory unasked):
//  * tasks per rank: what one rank's program holds (about 230 bytes each,
//    workloads/schedules/step_work.h), default 10,000,000 (about 2.3 GB); driven by the
//    micro-batch count (workload.grad_accum, or
//    workload.pipeline.microbatches) and the model's depth;
//  * task-timelines, tasks per rank x the timelines the engine runs them on
//    (one per rank, one per TP group, or a pipeline stage's identical ranks
//    as one: exec/timelines.h): what the engine runs through (0.2 to 0.5
//    events per task per timeline), default 10^10 (Llama-3-405B HSDP on
//    1,048,576 GPUs of unequal speed is 5.9e9, about 4 minutes on one core);
//    driven by the GPU count (cluster.nodes). A step that finds its fabric
//    asymmetric runs again with one timeline per rank, and is checked again
//    then (WorkOverLimit, exec/engine.h).
// `run` and `sweep` raise them with --max-tasks-per-rank and --max-events.
//
// Errors: ConfigError at the key that drives the excess, e.g.
//   s.yaml:11:15: error: workload.grad_accum: expected at most 10,000,000
//   tasks per rank (--max-tasks-per-rank raises the limit), found 1000000
//   micro-batches, about 137,000,004 tasks per rank
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config_values.h"
#include "config/text_fields.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

struct WorkLimits {
  int64_t max_tasks_per_rank = 10'000'000;
  int64_t max_task_timelines = 10'000'000'000;
};

// The limit a step goes over: the key that drives it and what to say there
// ("expected ..., found ..."); nothing when it is within both.
struct WorkExcess {
  std::string key;
  std::string message;
};

std::optional<WorkExcess> work_excess(const workloads::StepWork& work,
                                      const workloads::WorkloadSpec& w,
                                      const sim::ConfigValues& values, const WorkLimits& limits);

// Throws the excess as a ConfigError at its key's place in the scenario.
void check_step_work(const workloads::StepWork& work, const workloads::WorkloadSpec& w,
                     const sim::ConfigValues& values, const WorkLimits& limits);

// "98,304 ranks", or "98,304 ranks as 12,288 timelines" where they differ.
std::string timelines_text(const workloads::StepWork& work);

// "12,345,678" (config/text_fields.h), as the commands print counts.
using sim::with_separators;

}  // namespace clustersim::cli
