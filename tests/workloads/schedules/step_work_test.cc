// The work estimate of a step: exact with few micro-batches, and equal to
// the schedule's size when extrapolated (a schedule grows by the same tasks
// with every micro-batch past the pipeline's warm-up).
#include "workloads/schedules/step_work.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "tests/support/step_fixtures.h"

namespace clustersim::workloads {
namespace {

int64_t built_tasks(WorkloadSpec w) {
  int64_t tasks = 0;
  for (int64_t stage = 0; stage < w.pp; ++stage) {
    FsdpScheduleOptions o;
    o.stage = stage;
    tasks = std::max<int64_t>(tasks, build_fsdp_schedule(w, o).size());
  }
  return tasks;
}

TEST(StepWork, FewMicrobatchesAreCountedExactly) {
  WorkloadSpec w = test_support::small_spec(8, 8);
  w.grad_accum = 3;
  const StepWork work = estimate_step_work(w, {});
  EXPECT_EQ(work.tasks_per_rank, built_tasks(w));
  EXPECT_EQ(work.ranks, w.world_size);
  EXPECT_EQ(work.task_timelines(), work.tasks_per_rank * w.world_size);
}

TEST(StepWork, ManyMicrobatchesAreExtrapolatedToTheScheduleSize) {
  WorkloadSpec w = test_support::small_spec(8, 8);
  for (const int64_t microbatches : {33, 100, 257}) {
    w.grad_accum = microbatches;
    EXPECT_EQ(estimate_step_work(w, {}).tasks_per_rank, built_tasks(w)) << microbatches;
  }
}

TEST(StepWork, PipelineStagesAreExtrapolatedToo) {
  WorkloadSpec w = test_support::small_spec(8, 2);
  w.model.layers = 8;
  w.pp = 4;
  w.dp_size = 2;
  w.replica_group_size = 1;
  w.strategy = ShardingStrategy::kFullShard;
  for (const PipelineSchedule schedule :
       {PipelineSchedule::k1F1B, PipelineSchedule::kGpipe, PipelineSchedule::kInterleaved1F1B,
        PipelineSchedule::kZbv, PipelineSchedule::kDualPipeV}) {
    w.pipeline_schedule = schedule;
    w.virtual_stages =
        schedule == PipelineSchedule::k1F1B || schedule == PipelineSchedule::kGpipe ? 1 : 2;
    w.grad_accum = 96;  // past the probes of 16 and 32
    EXPECT_EQ(estimate_step_work(w, {}).tasks_per_rank, built_tasks(w))
        << pipeline_schedule_name(schedule);
  }
}

TEST(StepWork, TaskRanksSaturate) {
  StepWork work;
  work.tasks_per_rank = std::numeric_limits<int64_t>::max() / 2;
  work.ranks = 3;
  EXPECT_EQ(work.task_timelines(), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace clustersim::workloads
