// Megatron-Core's vocab-parallel cross entropy (megatron/core/tensor_parallel/
// cross_entropy.py, and megatron/core/fusions/fused_cross_entropy.py when
// --cross-entropy-loss-fusion is on): the loss over a rank's slice of the
// logits, L = T x ceil(vocab / tp) of them, in fp32, as the passes that code
// makes over them. Bytes per logit, with d the logits' dtype bytes:
//  * unfused (CrossEntropyKernels::kVocabParallel, Megatron-LM's default):
//      forward:  cross_entropy.to_fp32 (d+4) (the .float() copy),
//                cross_entropy.max 4, cross_entropy.sub_max 8 (in place),
//                cross_entropy.exp 8 (in place), cross_entropy.sum_exp 4,
//                cross_entropy.softmax 8 (div_ by the sum, kept for backward)
//      backward: cross_entropy.bwd 8 (mul_ by the loss gradient, in place),
//                cross_entropy.to_fp32.bwd (4+d) (autograd's cast of the fp32
//                gradient back to the logits' dtype)
//    52 bytes per logit with bf16 logits.
//  * fused (kVocabParallelFused, NeMo's cross_entropy_loss_fusion): the
//    .float() and the max in one kernel (d+4), the subtraction and exp in one
//    (8), the sum (4), the softmax (8); backward the scaling (8) and the cast
//    to the logits' dtype (4+d). 40 bytes per logit with bf16 logits.
// The per-token gathers of the target logits and the TP all-reduces of the
// maxima and sums move T values, not L, and are left out.
//
// Units: FLOPs and bytes. Thread safety: pure functions.
#pragma once

#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

// Appends the loss's forward (or backward) kernels over `logits` logits of
// `dtype_bytes` each; `kernels` is kVocabParallel or kVocabParallelFused.
void vocab_parallel_cross_entropy(std::vector<Kernel>& out, CrossEntropyKernels kernels,
                                  double logits, double dtype_bytes, bool backward);

}  // namespace clustersim::workloads
