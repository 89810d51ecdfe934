// model/ring_attention: the kernels of context-parallel attention against
// hand-computed FLOPs and bytes, and the block kernels with the sequence
// split over cp ranks.
#include "workloads/model/ring_attention.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {
namespace {

// b 1, L 8 tokens on the rank (sequence 16 over cp 2), 2 heads of 4, bf16:
// 64 elements of Q on the rank, 16 softmax rows.
RingAttentionShape tiny() { return {1, 8, 2, 2, 4, 2, 2.0}; }

std::vector<std::string_view> names(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> out;
  for (const Kernel& k : ks) out.push_back(k.name);
  return out;
}

TEST(RingAttention, ForwardKernelsAndTheirCostsByHand) {
  std::vector<Kernel> k;
  ring_attention_forward(k, tiny());
  ASSERT_EQ(names(k),
            (std::vector<std::string_view>{"attention.cp_kv_cat", "attention", "attention.cp_step",
                                           "attention.cp_merge", "attention.cp_out_cast"}));
  // The cat of k and v: 2 x 64 elements read and written in bf16.
  EXPECT_DOUBLE_EQ(k[0].bytes, 512);
  // Local causal step: 4 b L^2 n h / 2 = 4 * 64 * 8 / 2; Q, K, V, O (4 x 64 x 2)
  // and 16 fp32 log-sum-exps.
  EXPECT_DOUBLE_EQ(k[1].flops, 1024);
  EXPECT_DOUBLE_EQ(k[1].bytes, 576);
  EXPECT_TRUE(k[1].causal);
  EXPECT_EQ(k[1].seq, 8);
  // Half step: the same FLOPs, three L x Qw tensors, 3/4 of the rows' statistics.
  EXPECT_DOUBLE_EQ(k[2].flops, 1024);
  EXPECT_DOUBLE_EQ(k[2].bytes, 384 + 48);
  EXPECT_FALSE(k[2].causal);
  EXPECT_EQ(k[2].seq, 4);
  // Merge over 48 elements on average: 34 bytes and 3 FLOPs each.
  EXPECT_DOUBLE_EQ(k[3].flops, 144);
  EXPECT_DOUBLE_EQ(k[3].bytes, 34 * 48);
  EXPECT_DOUBLE_EQ(k[4].bytes, 2 * 6 * 64);
  // The rank's steps add up to 1 / cp of the sequence's causal attention:
  // 4 b s^2 n h / 2 / cp with s = 16.
  EXPECT_DOUBLE_EQ(k[1].flops + k[2].flops, 4.0 * 256 * 8 / 2 / 2);
}

TEST(RingAttention, BackwardKernelsAndTheirCostsByHand) {
  std::vector<Kernel> k;
  ring_attention_backward(k, tiny());
  ASSERT_EQ(names(k), (std::vector<std::string_view>{
                          "attention.cp_kv_cat", "attention.bwd", "attention.cp_grad_init",
                          "attention.cp_step.bwd", "attention.cp_grad_accumulate",
                          "attention.cp_grad_cast"}));
  EXPECT_DOUBLE_EQ(k[1].flops, 2.5 * 1024);
  EXPECT_DOUBLE_EQ(k[1].bytes, 2 * 8 * 64 + 12 * 16);
  // zeros (4 x 192), the step's gradients added ((8 + 2) x 192), dK, dV cat (8 x 128).
  EXPECT_DOUBLE_EQ(k[2].bytes, 768 + 1920 + 1024);
  EXPECT_DOUBLE_EQ(k[3].flops, 2.5 * 1024);
  EXPECT_DOUBLE_EQ(k[3].bytes, 2 * 6 * 64 + 12 * 12);
  EXPECT_DOUBLE_EQ(k[4].bytes, 10 * 144 + 1024);
  EXPECT_DOUBLE_EQ(k[5].bytes, 6 * 192);
}

TEST(RingAttention, RingBytesAreOneRanksKeysAndValues) {
  EXPECT_EQ(ring_kv_bytes(tiny()), 2 * 64 * 2);
  EXPECT_EQ(ring_kv_grad_bytes(tiny()), 2 * 64 * 4);
  // Each step but the last cats k and v for the ring: cp - 1 cats, cp steps.
  RingAttentionShape a = tiny();
  a.cp = 4;
  std::vector<Kernel> k;
  ring_attention_forward(k, a);
  int cats = 0;
  int steps = 0;
  for (const Kernel& x : k) {
    cats += x.name == "attention.cp_kv_cat" ? 1 : 0;
    steps += x.cls == KernelClass::kAttention ? 1 : 0;
  }
  EXPECT_EQ(cats, 3);
  EXPECT_EQ(steps, 4);
}

TEST(RingAttention, KeysAndValuesAtTheModelsKvHeadsMoveLess) {
  RingAttentionShape a = tiny();
  a.kv_heads = 1;  // 32 elements of K on the rank against 64 of Q
  EXPECT_EQ(ring_kv_bytes(a), 2 * 32 * 2);
  EXPECT_EQ(ring_kv_grad_bytes(a), 2 * 32 * 4);
  std::vector<Kernel> k;
  ring_attention_forward(k, a);
  EXPECT_DOUBLE_EQ(k[0].bytes, 2 * 2 * 64);                  // the cat of k and v
  EXPECT_DOUBLE_EQ(k[1].bytes, 2 * (2 * 64 + 2 * 32) + 64);  // q, o; k, v; lse
  EXPECT_DOUBLE_EQ(k[1].flops, 1024);                        // FLOPs follow the query heads
  EXPECT_DOUBLE_EQ(k[2].bytes, 2 * 1.5 * (64 + 32) + 48);
}

TEST(RingAttention, BlockKernelsRunOnTheRanksShareOfTheSequence) {
  ModelSpec m;
  m.layers = 1;
  m.hidden = 256;
  m.heads = 4;
  m.kv_heads = 2;
  m.ffn_hidden = 512;
  m.vocab = 1000;
  KernelConfig c;
  c.seq_len = 4096;
  c.cp = 4;
  const std::vector<Kernel> f = block_forward(m, c);
  double attention_flops = 0;
  for (const Kernel& k : f) {
    if (k.name == "qkv_proj") {
      EXPECT_EQ(k.m, 1024);  // 4096 / 4 tokens
    }
    if (k.cls == KernelClass::kAttention) attention_flops += k.flops;
  }
  // 1 / 4 of the sequence's causal attention: 4 s^2 n h / 2 / cp.
  EXPECT_DOUBLE_EQ(attention_flops, 4.0 * 4096 * 4096 * 4 * 64 / 2 / 4);
}

}  // namespace
}  // namespace clustersim::workloads
