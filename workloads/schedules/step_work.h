// How much work a training step is, estimated before it is built: the tasks
// of one rank's schedule (what its program holds, so its memory) and tasks x
// timelines (what the engine will run through). The estimate builds the schedule
// of a few micro-batches and extrapolates linearly in the micro-batch count,
// so it costs milliseconds however many micro-batches the step has.
//
// Measured (2026-12-03): about 230 bytes of memory per task per program
// (10,000 micro-batches of a one-layer model: 1.37 M tasks, 0.32 GB peak),
// and between 0.2 and 0.5 engine events per task per rank (Llama-3-405B HSDP
// on 98,304 GPUs: 5,590 tasks, 1,130 events per rank; the 4D FT-HSDP step:
// 10,044 and about 4,900).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

struct StepWork {
  int64_t tasks_per_rank = 0;  // the largest stage's schedule
  int64_t ranks = 0;
  // The timelines the engine runs them on (exec/timelines.h; 0: one per
  // rank): identical ranks once, or one per TP group.
  int64_t timelines = 0;
  // Tasks x timelines, saturating at INT64_MAX: the engine's work, an
  // estimate of (and so far above) its event count.
  int64_t task_timelines() const;
};

// `w` from read_workload_spec() (validated), `options` as the step uses them.
StepWork estimate_step_work(const WorkloadSpec& w, const FsdpScheduleOptions& options);

}  // namespace clustersim::workloads
