#include "workloads/model/pipeline_stages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace clustersim::workloads {
namespace {

std::string order_text(PipelineSchedule schedule, int64_t pp, int64_t stage, int64_t m,
                       int64_t v = 1) {
  std::string text;
  for (const PipelineWork& w : pipeline_order(schedule, pp, v, stage, m)) {
    const char* kind = w.kind == PipelineWorkKind::kForward          ? "F"
                       : w.kind == PipelineWorkKind::kBackward       ? "B"
                       : w.kind == PipelineWorkKind::kBackwardInput ? "I"
                                                                     : "W";
    text += kind + std::to_string(w.micro_batch);
    if (v > 1) text += "c" + std::to_string(w.chunk);
    text += " ";
  }
  return text;
}

TEST(PipelineStages, LayersSplitEvenlyWithTheFirstStagesOneLonger) {
  // 10 layers over 4 stages: 3, 3, 2, 2.
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};
  for (int64_t s = 0; s < 4; ++s) {
    const PipelineStage st = stage_chunks(10, 4, 1, s).front();
    EXPECT_EQ(st.first_block, want[static_cast<size_t>(s)].first);
    EXPECT_EQ(st.end_block, want[static_cast<size_t>(s)].second);
    EXPECT_EQ(st.has_embedding, s == 0);
    EXPECT_EQ(st.has_head, s == 3);
  }
  const PipelineStage whole = stage_chunks(32, 1, 1, 0).front();
  EXPECT_EQ(whole.blocks(), 32);
  EXPECT_TRUE(whole.has_embedding && whole.has_head);
}

TEST(PipelineStages, AnExplicitSplitGivesEachChunkItsBlocks) {
  // 10 layers as 4, 2, 3, 1 over 2 stages x 2 chunks (loop placement):
  // stage 1 holds chunks 1 ([4, 6)) and 3 ([9, 10), the head).
  const std::vector<int64_t> split = {4, 2, 3, 1};
  const std::vector<PipelineStage> c =
      stage_chunks(10, 2, 2, 1, PipelineSchedule::kInterleaved1F1B, split);
  EXPECT_EQ(c[0].first_block, 4);
  EXPECT_EQ(c[0].end_block, 6);
  EXPECT_EQ(c[1].first_block, 9);
  EXPECT_EQ(c[1].end_block, 10);
  EXPECT_TRUE(c[1].has_head);
}

TEST(PipelineStages, OneFOneBWarmsUpThenAlternates) {
  // torch.distributed.pipelining's Schedule1F1B on 4 stages, 6 micro-batches.
  EXPECT_EQ(order_text(PipelineSchedule::k1F1B, 4, 0, 6),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(order_text(PipelineSchedule::k1F1B, 4, 2, 6),
            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 B5 ");
  EXPECT_EQ(order_text(PipelineSchedule::k1F1B, 4, 3, 6),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
  // Fewer micro-batches than stages: the warm-up is cut short.
  EXPECT_EQ(order_text(PipelineSchedule::k1F1B, 4, 0, 2), "F0 F1 B0 B1 ");
  EXPECT_EQ(order_text(PipelineSchedule::kGpipe, 4, 1, 3), "F0 F1 F2 B0 B1 B2 ");
}

TEST(PipelineStages, InterleavedRunsChunksInRoundsOfPp) {
  // 2 stages x 2 chunks, 4 micro-batches (hand-derived from the formulas of
  // the header): stage 0 warms up with (2 - 1) 2 + 2 (2 - 1 - 0) = 4 forwards,
  // stage 1 with 2; chunk 1 of stage 1 is the model's last.
  EXPECT_EQ(order_text(PipelineSchedule::kInterleaved1F1B, 2, 0, 4, 2),
            "F0c0 F1c0 F0c1 F1c1 F2c0 B0c1 F3c0 B1c1 F2c1 B0c0 F3c1 B1c0 B2c1 B3c1 B2c0 B3c0 ");
  EXPECT_EQ(order_text(PipelineSchedule::kInterleaved1F1B, 2, 1, 4, 2),
            "F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 F2c0 B0c0 F3c0 B1c0 F2c1 B2c1 F3c1 B3c1 B2c0 B3c0 ");
  EXPECT_EQ(microbatches_alive(PipelineSchedule::kInterleaved1F1B, 2, 2, 0, 4), 5);
  // Rank-stage 1 of 2 with 2 chunks over 10 layers: chunks 1 and 3 (3 and 2 blocks).
  const std::vector<PipelineStage> c = stage_chunks(10, 2, 2, 1);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].first_block, 3);
  EXPECT_EQ(c[0].end_block, 6);
  EXPECT_EQ(c[1].first_block, 8);
  EXPECT_EQ(c[1].end_block, 10);
  EXPECT_TRUE(c[1].has_head && !c[0].has_embedding);
}

TEST(PipelineStages, ZbvPlacesChunksInAVAndSplitsTheBackward) {
  // Rank-stage 1 of 2, 3 micro-batches, hand-derived from the header's
  // phases: 1 forward of chunk 0; 1 pair (F chunk 1, F chunk 0); 1 triple
  // (F, I, W of chunk 1); the steady loop once; cool-down (I0, I1), (I0, W0),
  // then the weight gradients left, chunk 1's first.
  EXPECT_EQ(order_text(PipelineSchedule::kZbv, 2, 1, 3, 2),
            "F0c0 F0c1 F1c0 F1c1 I0c1 W0c1 F2c0 I0c0 W0c0 F2c1 I1c1 W1c1 I1c0 I2c1 I2c0 W1c0 "
            "W2c1 W2c0 ");
  // Rank 0 holds the model's first and last chunk; the turn is on rank pp - 1.
  const std::vector<PipelineStage> c = stage_chunks(8, 2, 2, 0, PipelineSchedule::kZbv);
  EXPECT_EQ(c[0].index, 0);
  EXPECT_EQ(c[1].index, 3);
  EXPECT_TRUE(c[0].has_embedding && c[1].has_head);
  EXPECT_EQ(rank_of_chunk(PipelineSchedule::kZbv, 2, 1), 1);
  EXPECT_EQ(rank_of_chunk(PipelineSchedule::kZbv, 2, 2), 1);
  EXPECT_EQ(rank_of_chunk(PipelineSchedule::kZbv, 2, 3), 0);
  EXPECT_EQ(rank_of_chunk(PipelineSchedule::kInterleaved1F1B, 2, 3), 1);
  // A forward's activations live until its weight gradient: 4 chunk-micro-batches
  // at the peak, after F1c1.
  EXPECT_EQ(microbatches_alive(PipelineSchedule::kZbv, 2, 2, 1, 3), 4);
}

TEST(PipelineStages, DualPipeVFollowsDualpipevPyStepByStep) {
  // 2 stages, 4 micro-batches, hand-derived from the header's steps. Rank 0:
  // 2 F0; 1 pair (F0, F1); 1 triple (I1, W, F1); 1 round (F0, B1, F1, B0);
  // 1 round (B1, F1, B0); 1 pair (B1, I0), its second half split; 1 pair
  // (W, I0); the W left. A W runs the oldest deferred weight gradient.
  EXPECT_EQ(order_text(PipelineSchedule::kDualPipeV, 2, 0, 4, 2),
            "F0c0 F1c0 F2c0 F0c1 I0c1 W0c1 F1c1 F3c0 B1c1 F2c1 B0c0 B2c1 F3c1 B1c0 B3c1 I2c0 "
            "W2c0 I3c0 W3c0 ");
  // Rank 1 (the V's turn): 2 pairs (F0, F1); 2 rounds; 2 pairs (B1, B0), the
  // second split (odd rank: before chunk 1's); the two W.
  EXPECT_EQ(order_text(PipelineSchedule::kDualPipeV, 2, 1, 4, 2),
            "F0c0 F0c1 F1c0 F1c1 F2c0 B0c1 F2c1 B0c0 F3c0 B1c1 F3c1 B1c0 B2c1 B2c0 I3c1 I3c0 "
            "W3c1 W3c0 ");
  EXPECT_TRUE(v_shaped(PipelineSchedule::kDualPipeV));
  EXPECT_EQ(rank_of_chunk(PipelineSchedule::kDualPipeV, 2, 3), 0);
  // Rank 0's peak: 5 chunk-micro-batches, after F2c1.
  EXPECT_EQ(microbatches_alive(PipelineSchedule::kDualPipeV, 2, 2, 0, 4), 5);
}

TEST(PipelineStages, MicrobatchesAliveFollowTheSchedule) {
  EXPECT_EQ(microbatches_alive(PipelineSchedule::kGpipe, 4, 1, 0, 8), 8);
  EXPECT_EQ(microbatches_alive(PipelineSchedule::k1F1B, 4, 1, 0, 8), 4);
  EXPECT_EQ(microbatches_alive(PipelineSchedule::k1F1B, 4, 1, 3, 8), 1);
  EXPECT_EQ(microbatches_alive(PipelineSchedule::k1F1B, 8, 1, 0, 3), 3);
}

}  // namespace
}  // namespace clustersim::workloads
