#include "model/pipeline_stages.h"

#include <algorithm>
#include <string>

#include "sim/check.h"

namespace clustersim::workloads {

std::string_view pipeline_schedule_name(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kGpipe ? "gpipe" : "1f1b";
}

PipelineStage pipeline_stage(int64_t layers, int64_t pp, int64_t stage) {
  CLUSTERSIM_CHECK(pp >= 1 && pp <= layers && stage >= 0 && stage < pp,
                   "stage " + std::to_string(stage) + " of " + std::to_string(pp) + " over " +
                       std::to_string(layers) + " layers");
  const int64_t base = layers / pp;
  const int64_t longer = layers % pp;
  PipelineStage s;
  s.index = stage;
  s.first_block = stage * base + std::min(stage, longer);
  s.end_block = s.first_block + base + (stage < longer ? 1 : 0);
  s.has_embedding = stage == 0;
  s.has_head = stage == pp - 1;
  return s;
}

int64_t microbatches_alive(PipelineSchedule schedule, int64_t pp, int64_t stage,
                           int64_t microbatches) {
  if (schedule == PipelineSchedule::kGpipe) return microbatches;
  return std::min(pp - stage, microbatches);
}

std::vector<PipelineWork> pipeline_order(PipelineSchedule schedule, int64_t pp, int64_t stage,
                                         int64_t microbatches) {
  CLUSTERSIM_CHECK(stage >= 0 && stage < pp && microbatches >= 1, "a pipeline stage's order");
  const auto m = static_cast<int32_t>(microbatches);
  std::vector<PipelineWork> order;
  order.reserve(static_cast<size_t>(2 * m));
  if (schedule == PipelineSchedule::kGpipe) {
    for (int32_t i = 0; i < m; ++i) order.push_back({true, i});
    for (int32_t i = 0; i < m; ++i) order.push_back({false, i});
    return order;
  }
  const auto warmup = static_cast<int32_t>(std::min<int64_t>(pp - 1 - stage, m));
  int32_t next_forward = 0;
  int32_t next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back({true, next_forward});
  while (next_backward < m) {
    if (next_forward < m) order.push_back({true, next_forward++});
    order.push_back({false, next_backward++});
  }
  return order;
}

}  // namespace clustersim::workloads
