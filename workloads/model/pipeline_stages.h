// Pipeline parallelism's stages (workload.parallelism.pp > 1): which blocks,
// and which of the embedding and the output head, each stage holds, and how
// many micro-batches' activations a stage keeps alive at once under its
// schedule. The schedule of one stage (the order of its forward and backward
// micro-batches) is workloads/schedules/fsdp_schedule.h's; the per-stage memory is
// workloads/model/memory_model.h's.
//
// Stage split (torchtitan's even split of the layers, its pipeline_module_split
// before the weighted split of 2025): the L blocks are split into pp * v
// contiguous chunks (v virtual stages per rank; 1 but for interleaved 1F1B),
// the first L mod (pp * v) chunks one block longer; rank-stage s holds chunks
// s, s + pp, ..., s + (v - 1) pp (torch.distributed.pipelining's "loop"
// placement; ZBV's "v" placement instead: chunks s and 2 pp - 1 - s, so rank
// 0 holds the first and the last); the embedding is in chunk 0, the final norm and the
// output head (and the loss) in the last chunk (stage pp - 1). The imbalance
// this causes (the ends carry extra work) is real and shows in the step. An
// explicit split (workload.pipeline.layers_per_stage, torchtitan's
// pipeline_parallel_layers_per_stage idea) gives each chunk's blocks in model
// order instead.
//
// Micro-batches alive (torch.distributed.pipelining's schedules, m
// micro-batches):
//   GPipe: every forward before any backward: m on every stage.
//   1F1B:  stage s runs min(pp - 1 - s, m) warm-up forwards, then alternates
//          one forward and one backward: min(pp - s, m) alive at its peak.
//   Interleaved 1F1B (v >= 2, m a multiple of pp; Narayanan et al.,
//          arXiv:2104.04473, sec. 2.2; torch's ScheduleInterleaved1F1B): the
//          i-th forward of a stage is chunk (i / pp) mod v of micro-batch
//          (i / (pp v)) pp + i mod pp, the i-th backward the same from the
//          last chunk back; min((v - 1) pp + 2 (pp - 1 - s), m v) warm-up
//          forwards, then one forward and one backward in turn: one more
//          chunk-micro-batch than the warm-up alive at the peak.
//   ZBV (zero bubble, V shape; Qi et al., arXiv:2401.10241 sec. 6; torch's
//          ScheduleZBVZeroBubble, 2 chunks per rank): the backward split into
//          the input gradient (I) and the weight gradient (W), which fills
//          the bubbles. Rank s: 2 (pp - s) - 1 forwards of chunk 0; s pairs
//          (F chunk 1, F chunk 0); pp - s triples (F, I, W of chunk 1); then
//          while forwards remain (F0? I0 W0 F1 I1 W1); then s pairs (I0, I1),
//          pp - s pairs (I0, W0), and the weight gradients left, chunk 1's
//          first; over max(m, 2 pp - 1) micro-batches, those past m dropped.
//   DualPipeV (DeepSeek-V3's DualPipe cut in half: deepseek-ai/DualPipe,
//          dualpipev.py; torch's ScheduleDualPipeV; 2 chunks per rank in a V,
//          m >= 2 pp): rank s runs 2 (pp - s - 1) forwards of chunk 0;
//          s + 1 pairs (F0, F1); pp - s - 1 triples (I1, W, F1); then
//          m - 2 pp + s + 1 rounds (F0, B1, F1, B0), where DualPipe overlaps
//          each forward with the other chunk's backward; pp - s - 1 rounds
//          (B1, F1, B0); s + 1 pairs (B1, B0), the second half of them split
//          into I and a W deferred; pp - s - 1 pairs (W, I0); then the
//          deferred W left. W runs the oldest deferred weight gradient. In
//          a sequential model of one GPU's compute, the overlap is the
//          order: forward, then backward.
// Alive at the peak: the most chunk-micro-batches forwarded and not yet
// through their (weight-)backward, walking the order.
//
// Units: counts of blocks and micro-batches. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved1F1B, kZbv, kDualPipeV };
// Whether the schedule places each rank's two chunks in a V (s, 2 pp - 1 - s).
bool v_shaped(PipelineSchedule schedule);
std::string_view pipeline_schedule_name(PipelineSchedule schedule);

// One chunk of blocks (a stage without virtual stages).
struct PipelineStage {
  int64_t index = 0;  // the chunk's place in the model, 0 .. pp * v - 1
  int64_t first_block = 0;  // blocks [first_block, end_block)
  int64_t end_block = 0;
  bool has_embedding = true;
  bool has_head = true;  // final norm, output head and loss
  int64_t blocks() const { return end_block - first_block; }
};

// The chunks rank-stage `stage` holds with `virtual_stages` per rank, in
// model order (pp * virtual_stages <= layers), placed as `schedule` places them.
// `split`: blocks per chunk in model order (pp * virtual_stages entries,
// each >= 1, summing to `layers`), or empty for the even split.
std::vector<PipelineStage> stage_chunks(int64_t layers, int64_t pp, int64_t virtual_stages,
                                        int64_t stage,
                                        PipelineSchedule schedule = PipelineSchedule::k1F1B,
                                        std::span<const int64_t> split = {});
// The rank-stage that holds chunk `chunk` (0 .. pp * virtual_stages - 1).
int64_t rank_of_chunk(PipelineSchedule schedule, int64_t pp, int64_t chunk);

// Chunk-micro-batches (one chunk's activations of one micro-batch) stage
// `stage` holds at its peak; without virtual stages, micro-batches.
int64_t microbatches_alive(PipelineSchedule schedule, int64_t pp, int64_t virtual_stages,
                           int64_t stage, int64_t microbatches);

// One stage's order of work: the forward, the backward, or (zero bubble)
// the backward's input-gradient or weight-gradient half, of one micro-batch
// on one of its chunks (0 .. virtual_stages - 1), as the schedule issues it.
enum class PipelineWorkKind { kForward, kBackward, kBackwardInput, kBackwardWeight };
struct PipelineWork {
  PipelineWorkKind kind = PipelineWorkKind::kForward;
  int32_t micro_batch = 0;
  int32_t chunk = 0;
  bool forward() const { return kind == PipelineWorkKind::kForward; }
};
std::vector<PipelineWork> pipeline_order(PipelineSchedule schedule, int64_t pp,
                                         int64_t virtual_stages, int64_t stage,
                                         int64_t microbatches);

}  // namespace clustersim::workloads
