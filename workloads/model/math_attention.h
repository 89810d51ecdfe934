// The kernels of unfused ("math") attention, as older training code runs it
// (minGPT, which the PyTorch FSDP paper's GPT-175B used; Megatron-LM before
// flash attention): softmax(Q K^T / sqrt(d) + mask) V materialised over the
// whole b x heads x s x s score matrix (workload.attention: math).
//
// With E = b * heads * s * s scores per rank and c = dtype bytes, forward:
//   attention.scores       GEMM Q K^T: b*heads products of s x s x head_dim,
//                          stacked along m (m = b*heads*s, n = s, k = head_dim;
//                          bytes c * b*heads * (s*d + d*s + s*s): every head's K)
//   eager: attention.scale (c E read and written), attention.mask
//          (masked_fill: c E read and written, E bytes of the bool mask read),
//          attention.softmax (autocast runs it in fp32: c E read, 4 E written),
//          attention.softmax_cast (back to c for the next matmul: 4 E read, c E written)
//   compiled: attention.softmax, one fused kernel (c E read, c E written)
//   attention.context      GEMM P V: m = b*heads*s, n = head_dim, k = s
// backward: attention.context.dgrad (dP = dO V^T) and .wgrad (dV = P^T dO),
//   the elementwise kernels' backwards in reverse (softmax backward reads
//   its output and the incoming gradient), attention.scores.dgrad (dQ) and
//   .wgrad (dK). A causal mask saves nothing here: the full s x s is computed.
// No dropout (p = 0; a p > 0 would add a mask and a kernel each way).
//
// Units: FLOPs and bytes. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

struct MathAttentionShape {
  int64_t batch = 0;  // sequences of the micro-batch
  int64_t seq = 0;    // tokens per sequence
  int64_t heads = 0;  // query heads on this rank
  int64_t head_dim = 0;
  double dtype_bytes = 2;
  bool eager = true;  // KernelFusion::kEager
};

void math_attention_forward(std::vector<Kernel>& out, const MathAttentionShape& a);
void math_attention_backward(std::vector<Kernel>& out, const MathAttentionShape& a);

}  // namespace clustersim::workloads
