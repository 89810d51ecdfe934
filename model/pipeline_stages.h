// Pipeline parallelism's stages (workload.parallelism.pp > 1): which blocks,
// and which of the embedding and the output head, each stage holds, and how
// many micro-batches' activations a stage keeps alive at once under its
// schedule. The schedule of one stage (the order of its forward and backward
// micro-batches) is schedules/fsdp_schedule.h's; the per-stage memory is
// model/memory_model.h's.
//
// Stage split (torchtitan's even split of the layers, its pipeline_module_split
// before the weighted split of 2025): the L blocks are split into pp
// contiguous runs, the first L mod pp stages one block longer; the embedding
// is on stage 0, the final norm and the output head (and the loss) on stage
// pp - 1. The imbalance this causes (the ends carry extra work) is real and
// shows in the step.
//
// Micro-batches alive (torch.distributed.pipelining's schedules, m
// micro-batches):
//   GPipe: every forward before any backward: m on every stage.
//   1F1B:  stage s runs min(pp - 1 - s, m) warm-up forwards, then alternates
//          one forward and one backward: min(pp - s, m) alive at its peak.
//
// Units: counts of blocks and micro-batches. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class PipelineSchedule { kGpipe, k1F1B };
std::string_view pipeline_schedule_name(PipelineSchedule schedule);

struct PipelineStage {
  int64_t index = 0;
  int64_t first_block = 0;  // blocks [first_block, end_block)
  int64_t end_block = 0;
  bool has_embedding = true;
  bool has_head = true;  // final norm, output head and loss
  int64_t blocks() const { return end_block - first_block; }
};

// Stage `stage` of `pp` over `layers` blocks (0 <= stage < pp <= layers).
PipelineStage pipeline_stage(int64_t layers, int64_t pp, int64_t stage);

// Micro-batches whose activations stage `stage` holds at its peak.
int64_t microbatches_alive(PipelineSchedule schedule, int64_t pp, int64_t stage,
                           int64_t microbatches);

// One stage's order of work: forward (true) or backward (false) of each
// micro-batch, as the schedule issues it.
struct PipelineWork {
  bool forward = true;
  int32_t micro_batch = 0;
};
std::vector<PipelineWork> pipeline_order(PipelineSchedule schedule, int64_t pp, int64_t stage,
                                         int64_t microbatches);

}  // namespace clustersim::workloads
