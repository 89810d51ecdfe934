// The kernels eager PyTorch runs for rotary position embeddings, in one of
// the two forms training code writes them (workload.rotary_embedding).
// torch.compile fuses either into the single kernel of transformer_kernels.h.
//
// With T tokens of the micro-batch, E_X = T x (heads of X x head_dim) for X
// in {q, k}, d = dtype bytes and fp32 intermediates of 4 bytes; FLOPs 1 per
// output element of an arithmetic kernel, 3 per real element of a complex
// multiply, 0 for casts and copies:
//
//  * Complex (torchtitan's apply_rotary_emb, Meta's Llama reference):
//    view_as_complex(x.float()) * freqs_cis, view_as_real, type_as. The
//    complex64 table F = 4 x seq_len x head_dim bytes is read once and
//    broadcast. Forward rotary.X_to_fp32 (d+4)E_X; rotary.X_mul_freqs
//    8E_X+F, 3E_X; rotary.X_type_as (4+d)E_X (each for q, then k). Backward,
//    k first (repeat_kv's sums deliver its gradient first): rotary.X_type_as.bwd
//    (d+4)E_X; rotary.X_conj_freqs 2F (the conjugate fallback materialises
//    conj(freqs) before the multiply); rotary.X_mul_freqs.bwd 8E_X+F, 3E_X;
//    rotary.X_to_fp32.bwd (4+d)E_X. 40 bytes per element of q and k with bf16.
//  * Rotation matrices (foundation-model-stack, fms/modules/positions.py
//    RotaryEmbedding.adjusted_qk, which avoids complex numbers so that
//    torch.compile can trace it): q and k to fp32 pairs, the 2 x 2 rotation
//    matrices of the positions gathered from the cached table
//    (rotary.freqs_gather: G = 8 x T x head_dim bytes written, as much read),
//    then per X the product of every pair with its matrix, a doubled fp32
//    tensor, summed back to pairs and cast. Forward rotary.X_to_fp32 (d+4)E_X
//    (q, then k); rotary.freqs_gather 2G; then per X rotary.X_mul_rotation
//    12E_X+G, 2E_X; rotary.X_sum_pairs 12E_X, 2E_X; rotary.X_type_as (4+d)E_X.
//    Backward, k first: rotary.X_type_as.bwd (d+4)E_X; rotary.X_mul_rotation.bwd
//    12E_X+G, 2E_X (the sum's gradient is a broadcast view, read once; the
//    product's gradient is written doubled); rotary.X_sum_to_pairs 12E_X,
//    2E_X (the broadcast reduced back to pairs); then rotary.k_to_fp32.bwd and
//    rotary.q_to_fp32.bwd (4+d)E_X. 72 bytes per element of q and k with bf16.
//
// Units: FLOPs and bytes. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

struct EagerRotaryShape {
  int64_t tokens = 0;    // T: micro_batch x seq_len
  int64_t seq = 0;       // seq_len (rows of the complex table)
  int64_t head_dim = 0;  // elements per head
  int64_t q_width = 0;   // query heads on this rank x head_dim
  int64_t kv_width = 0;  // key heads on this rank x head_dim
  double dtype_bytes = 2;
  bool by_matrix = false;  // rotation matrices (fms) instead of complex (torchtitan)
};

void eager_rotary_forward(std::vector<Kernel>& out, const EagerRotaryShape& r);
void eager_rotary_backward(std::vector<Kernel>& out, const EagerRotaryShape& r);

}  // namespace clustersim::workloads
