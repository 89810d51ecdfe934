// The kernels of context-parallel attention (workload.parallelism.cp > 1) as
// torch.distributed.tensor.experimental's ring attention runs them for
// torchtitan (_templated_ring_attention and its backward, load balancing
// on, flash backend, convert_to_f32 on), per rank. With L = seq_len / cp
// tokens of each sequence on the rank (two chunks of L / 2: c and 2 cp - 1 - c),
// b sequences, n query heads, head dim h, c bytes per element, and
// Q = b L n h elements of the local q (= o, do, dq), K = b L m h of the local
// k (= v, dk, dv) with m the heads of the K and V attention is handed:
// torchtitan's repeat_kv widens them to the query's heads before SDPA
// (m = n, workload.context_parallel.kv_heads: query), attention with native
// GQA keeps the model's KV heads (m = kv_heads / tp: model). The ring moves
// 2 K elements a rank (ring_kv_bytes: c each; their gradients in fp32,
// ring_kv_grad_bytes: 4 each).
//
// Forward, cp steps (step i uses the K and V of rank c - i):
//   attention            step 0: causal flash attention of the local q, k, v
//                        (FLOPs 4 b L^2 n h / 2; bytes c (2 Q + 2 K) + 4 b L n)
//   attention.cp_step    steps 1 .. cp-1: either all of q against the first
//                        half of k, v (i <= c) or the second half of q
//                        against all of k, v (i > c); either way 4 b L (L/2)
//                        n h FLOPs, the causal step's; bytes the mean of the
//                        two shapes, c 1.5 (Q + K) + 4 (3/4 b L n); non-causal,
//                        timed at L / 2 keys per query (the first shape; the
//                        second's L differs by under 1% on the fitted curves)
//   attention.cp_merge   after each of those: _SDPAMerger's eager fp32 update
//                        out - sigmoid(lse_i - lse) * (out - out_i), on the
//                        rows the step wrote (3/4 Q on average over ranks:
//                        L rows for i <= c, L / 2 otherwise): 32 + c bytes and
//                        3 FLOPs per element
//   attention.cp_kv_cat  before steps 0 .. cp-2: torch.cat of k and v into the
//                        buffer the rotater sends (2 c per element of 2 K)
//   attention.cp_out_cast the first step's output to fp32 and the merged
//                        result back to c: 2 (4 + c) Q
// Backward (the flash backward, 2.5 x its forward's FLOPs):
//   attention.cp_kv_cat before steps 0 .. cp-2, as above
//   attention.bwd        step 0, causal over the local L: bytes c 4 (Q + K) +
//                        12 b L n
//   attention.cp_step.bwd steps 1 .. cp-1: bytes c 3 (Q + K) + 12 (3/4 b L n)
//   attention.cp_grad_init after step 0: the fp32 accumulators (zeros_like
//                        of q, k, v: 4 per element of Q + 2 K written), the
//                        step's gradients added (4 + c read, 4 written per
//                        element) and the dK, dV cat for the ring (8 per
//                        element of 2 K)
//   attention.cp_grad_accumulate after steps 1 .. cp-1: the gradient from the
//                        previous rank plus this step's ((8 + c) per element
//                        of 0.75 Q + 1.5 K on average: q of L or L / 2, k and v
//                        of L / 2 or L) and the cat for the ring
//   attention.cp_grad_cast the accumulated dq and the last dk, dv received
//                        back to c: (4 + c) (Q + 2 K)
// Summed over the steps a rank computes 1 / cp of the causal attention of
// its sequences (4 b s^2 n h / 2 / cp forward, s = seq_len).
//
// Units: FLOPs and bytes (doubles, as transformer_kernels.h), ring bytes
// int64. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

struct RingAttentionShape {
  int64_t batch = 0;      // sequences of the micro-batch
  int64_t local_seq = 0;  // L: tokens of each sequence on this rank, even
  int64_t heads = 0;      // query heads on this rank
  int64_t kv_heads = 0;   // heads of the K and V handed to attention (and the ring)
  int64_t head_dim = 0;
  int64_t cp = 2;  // > 1
  double dtype_bytes = 2;
};

void ring_attention_forward(std::vector<Kernel>& out, const RingAttentionShape& a);
void ring_attention_backward(std::vector<Kernel>& out, const RingAttentionShape& a);

// One rank's K and V as the ring moves them (compute dtype), and their
// gradients (fp32).
int64_t ring_kv_bytes(const RingAttentionShape& a);
int64_t ring_kv_grad_bytes(const RingAttentionShape& a);

}  // namespace clustersim::workloads
