#include "workloads/model/pipeline_stages.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

// Chunk `chunk` of `chunks` over `layers` blocks.
PipelineStage chunk_of(int64_t layers, int64_t chunks, int64_t chunk) {
  const int64_t base = layers / chunks;
  const int64_t longer = layers % chunks;
  PipelineStage s;
  s.index = chunk;
  s.first_block = chunk * base + std::min(chunk, longer);
  s.end_block = s.first_block + base + (chunk < longer ? 1 : 0);
  s.has_embedding = chunk == 0;
  s.has_head = chunk == chunks - 1;
  return s;
}

int64_t interleaved_warmup(int64_t pp, int64_t v, int64_t stage, int64_t microbatches) {
  return std::min((v - 1) * pp + 2 * (pp - 1 - stage), microbatches * v);
}

using Kind = PipelineWorkKind;

// ZBV's order for rank-stage `stage` (see the header), chunk 0 the V's
// descending arm, chunk 1 its ascending one.
std::vector<PipelineWork> zbv_order(int64_t pp, int64_t stage, int64_t microbatches) {
  const int64_t n = std::max(2 * pp - 1, microbatches);
  std::vector<PipelineWork> order;
  int32_t f[2] = {0, 0};  // next forward, input and weight gradient per chunk
  int32_t b[2] = {0, 0};
  int32_t w[2] = {0, 0};
  const auto forward = [&](int c) { order.push_back({Kind::kForward, f[c]++, c}); };
  const auto input = [&](int c) { order.push_back({Kind::kBackwardInput, b[c]++, c}); };
  const auto weight = [&](int c) { order.push_back({Kind::kBackwardWeight, w[c]++, c}); };
  for (int64_t i = 0; i < 2 * (pp - stage) - 1; ++i) forward(0);
  for (int64_t i = 0; i < stage; ++i) {
    forward(1);
    forward(0);
  }
  for (int64_t i = 0; i < pp - stage; ++i) {
    forward(1);
    input(1);
    weight(1);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n) forward(0);
    input(0);
    weight(0);
    forward(1);
    input(1);
    weight(1);
  }
  for (int64_t i = 0; i < stage; ++i) {
    input(0);
    input(1);
  }
  for (int64_t i = 0; i < pp - stage; ++i) {
    input(0);
    weight(0);
  }
  while (w[1] < b[1]) weight(1);
  while (w[0] < b[0]) weight(0);
  CLUSTERSIM_CHECK(f[0] == b[0] && b[0] == w[0] && f[1] == b[1] && b[1] == w[1],
                   "ZBV runs every forward's input and weight gradient");
  std::erase_if(order, [&](const PipelineWork& x) { return x.micro_batch >= microbatches; });
  return order;
}

// DualPipeV's order for rank-stage `stage` (see the header), in the steps
// of dualpipev.py.
std::vector<PipelineWork> dualpipev_order(int64_t pp, int64_t stage, int64_t microbatches) {
  CLUSTERSIM_CHECK(microbatches >= 2 * pp, "DualPipeV runs at least 2 pp micro-batches");
  std::vector<PipelineWork> order;
  int32_t f[2] = {0, 0};  // next forward and backward per chunk
  int32_t b[2] = {0, 0};
  std::deque<std::pair<int32_t, int32_t>> deferred;  // (micro-batch, chunk) of split backwards
  const auto forward = [&](int32_t c) { order.push_back({Kind::kForward, f[c]++, c}); };
  const auto backward = [&](int32_t c, bool split) {
    if (split) deferred.emplace_back(b[c], c);
    order.push_back({split ? Kind::kBackwardInput : Kind::kBackward, b[c]++, c});
  };
  const auto weight = [&]() {
    CLUSTERSIM_CHECK(!deferred.empty(), "a DualPipeV weight gradient with a backward deferred");
    order.push_back({Kind::kBackwardWeight, deferred.front().first, deferred.front().second});
    deferred.pop_front();
  };
  const int64_t later = pp - stage - 1;  // ranks after this one
  for (int64_t i = 0; i < 2 * later; ++i) forward(0);
  for (int64_t i = 0; i <= stage; ++i) {
    forward(0);
    forward(1);
  }
  for (int64_t i = 0; i < later; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (int64_t i = 0; i < microbatches - 2 * pp + stage + 1; ++i) {
    forward(0);
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  for (int64_t i = 0; i < later; ++i) {
    backward(1, false);
    forward(1);
    backward(0, false);
  }
  const int64_t pairs = stage + 1;
  bool split = false;
  for (int64_t i = 0; i < pairs; ++i) {
    if (i == pairs / 2 && stage % 2 == 1) split = true;
    backward(1, split);
    if (i == pairs / 2 && stage % 2 == 0) split = true;
    backward(0, split);
  }
  for (int64_t i = 0; i < later; ++i) {
    weight();
    backward(0, true);
  }
  while (!deferred.empty()) weight();
  CLUSTERSIM_CHECK(f[0] == microbatches && f[1] == microbatches && b[0] == microbatches &&
                       b[1] == microbatches,
                   "DualPipeV runs every micro-batch through both chunks once");
  return order;
}

}  // namespace

bool v_shaped(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kZbv || schedule == PipelineSchedule::kDualPipeV;
}

std::string_view pipeline_schedule_name(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe:
      return "gpipe";
    case PipelineSchedule::k1F1B:
      return "1f1b";
    case PipelineSchedule::kInterleaved1F1B:
      return "interleaved_1f1b";
    case PipelineSchedule::kZbv:
      return "zbv";
    case PipelineSchedule::kDualPipeV:
      return "dualpipev";
  }
  return "?";
}

int64_t rank_of_chunk(PipelineSchedule schedule, int64_t pp, int64_t chunk) {
  if (v_shaped(schedule) && chunk >= pp) return 2 * pp - 1 - chunk;
  return chunk % pp;
}

std::vector<PipelineStage> stage_chunks(int64_t layers, int64_t pp, int64_t virtual_stages,
                                        int64_t stage, PipelineSchedule schedule,
                                        std::span<const int64_t> split) {
  CLUSTERSIM_CHECK(virtual_stages >= 1 && pp * virtual_stages <= layers && stage >= 0 &&
                       stage < pp,
                   "stage " + std::to_string(stage) + " of " + std::to_string(pp) + " x " +
                       std::to_string(virtual_stages) + " chunks over " + std::to_string(layers) +
                       " layers");
  std::vector<PipelineStage> chunks;
  for (int64_t k = 0; k < virtual_stages; ++k) {
    const bool v_arm = v_shaped(schedule) && k == 1;
    const int64_t index = v_arm ? 2 * pp - 1 - stage : k * pp + stage;
    PipelineStage c = chunk_of(layers, pp * virtual_stages, index);
    if (!split.empty()) {
      CLUSTERSIM_CHECK(static_cast<int64_t>(split.size()) == pp * virtual_stages,
                       "a layer count for every chunk");
      c.first_block = 0;
      for (int64_t i = 0; i < index; ++i) c.first_block += split[static_cast<size_t>(i)];
      c.end_block = c.first_block + split[static_cast<size_t>(index)];
      CLUSTERSIM_CHECK(c.blocks() >= 1 && c.end_block <= layers, "a split of the layers");
    }
    chunks.push_back(c);
  }
  return chunks;
}

int64_t microbatches_alive(PipelineSchedule schedule, int64_t pp, int64_t virtual_stages,
                           int64_t stage, int64_t microbatches) {
  // A forward's activations live until its backward (or weight gradient) ran.
  int64_t alive = 0;
  int64_t peak = 0;
  for (const PipelineWork& w : pipeline_order(schedule, pp, virtual_stages, stage, microbatches)) {
    if (w.kind == Kind::kForward) {
      peak = std::max(peak, ++alive);
    } else if (w.kind != Kind::kBackwardInput) {
      --alive;
    }
  }
  return peak;
}

std::vector<PipelineWork> pipeline_order(PipelineSchedule schedule, int64_t pp,
                                         int64_t virtual_stages, int64_t stage,
                                         int64_t microbatches) {
  CLUSTERSIM_CHECK(stage >= 0 && stage < pp && microbatches >= 1 && virtual_stages >= 1,
                   "a pipeline stage's order");
  const auto m = static_cast<int32_t>(microbatches);
  std::vector<PipelineWork> order;
  order.reserve(static_cast<size_t>(2 * m * virtual_stages));
  if (schedule == PipelineSchedule::kGpipe) {
    for (int32_t i = 0; i < m; ++i) order.push_back({Kind::kForward, i, 0});
    for (int32_t i = 0; i < m; ++i) order.push_back({Kind::kBackward, i, 0});
    return order;
  }
  if (schedule == PipelineSchedule::k1F1B) {
    const auto warmup = static_cast<int32_t>(std::min<int64_t>(pp - 1 - stage, m));
    int32_t next_forward = 0;
    int32_t next_backward = 0;
    for (; next_forward < warmup; ++next_forward) order.push_back({Kind::kForward, next_forward, 0});
    while (next_backward < m) {
      if (next_forward < m) order.push_back({Kind::kForward, next_forward++, 0});
      order.push_back({Kind::kBackward, next_backward++, 0});
    }
    return order;
  }
  if (schedule == PipelineSchedule::kZbv) return zbv_order(pp, stage, microbatches);
  if (schedule == PipelineSchedule::kDualPipeV) return dualpipev_order(pp, stage, microbatches);
  CLUSTERSIM_CHECK(microbatches % pp == 0, "interleaved 1F1B needs micro-batches in rounds of pp");
  const int64_t v = virtual_stages;
  const int64_t total = microbatches * v;
  const auto work = [&](bool forward, int64_t i) {
    const int64_t k = (i / pp) % v;
    const auto chunk = static_cast<int32_t>(forward ? k : v - 1 - k);
    const auto mb = static_cast<int32_t>((i / (pp * v)) * pp + i % pp);
    return PipelineWork{forward ? Kind::kForward : Kind::kBackward, mb, chunk};
  };
  const int64_t warmup = interleaved_warmup(pp, v, stage, microbatches);
  for (int64_t i = 0; i < warmup; ++i) order.push_back(work(true, i));
  for (int64_t j = 0; j < total - warmup; ++j) {
    order.push_back(work(true, warmup + j));
    order.push_back(work(false, j));
  }
  for (int64_t j = total - warmup; j < total; ++j) order.push_back(work(false, j));
  return order;
}

}  // namespace clustersim::workloads
