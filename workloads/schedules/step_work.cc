#include "workloads/schedules/step_work.h"

#include <algorithm>
#include <limits>

namespace clustersim::workloads {

namespace {

// The largest stage's task count with `microbatches` micro-batches. The
// stages differ only at the ends (embedding, head), so the first and last.
int64_t stage_tasks(WorkloadSpec w, FsdpScheduleOptions options, int64_t microbatches) {
  w.grad_accum = microbatches;
  int64_t tasks = 0;
  for (const int64_t stage : {int64_t{0}, w.pp - 1}) {
    options.stage = stage;
    tasks = std::max<int64_t>(tasks, build_fsdp_schedule(w, options).size());
  }
  return tasks;
}

}  // namespace

int64_t StepWork::task_timelines() const {
  const int64_t n = timelines > 0 ? timelines : ranks;
  if (tasks_per_rank > 0 && n > std::numeric_limits<int64_t>::max() / tasks_per_rank) {
    return std::numeric_limits<int64_t>::max();
  }
  return tasks_per_rank * n;
}

StepWork estimate_step_work(const WorkloadSpec& w, const FsdpScheduleOptions& options) {
  StepWork work;
  work.ranks = w.world_size;
  // Probes that every schedule accepts: multiples of the stage count, at
  // least two per stage (DualPipeV), and enough that the warm-up and
  // cool-down of a pipeline are in both.
  const int64_t first = 2 * w.pp * std::max<int64_t>(1, (16 + 2 * w.pp - 1) / (2 * w.pp));
  const int64_t second = 2 * first;
  if (w.grad_accum <= second) {
    work.tasks_per_rank = stage_tasks(w, options, w.grad_accum);
    return work;
  }
  const int64_t at_first = stage_tasks(w, options, first);
  const int64_t per_microbatch = (stage_tasks(w, options, second) - at_first) / (second - first);
  const int64_t more = w.grad_accum - first;
  work.tasks_per_rank =
      per_microbatch > 0 && more > (std::numeric_limits<int64_t>::max() - at_first) / per_microbatch
          ? std::numeric_limits<int64_t>::max()
          : at_first + more * per_microbatch;
  return work;
}

}  // namespace clustersim::workloads
