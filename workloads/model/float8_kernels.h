// Low-precision training as torchao's Float8Linear and Transformer Engine
// run it (workload.float8): the transformer blocks' linears multiply in FP8
// (torch._scaled_mm, Transformer Engine's GEMMs; MXFP8 and NVFP4 below) and
// each operand is scaled and cast from bf16 first. torchtitan converts every
// nn.Linear of the blocks and leaves the output head in bf16 (its float8
// converter's default filter, "output"); embeddings, norms and attention stay
// in bf16.
//
// GEMMs: both inputs FP8 (1 byte per element), the output bf16 (2), timed at
// the part's FP8 peak (gpu.peak_fp8_tflops). torchao's own roofline
// (torchao/testing/float8/roofline_utils.py) takes the same achievable
// fraction of peak for FP8 as for bf16; here the part's GEMM curve is kept and
// its x_half scaled by peak_fp8 / peak, so the fixed per-kernel time of a GEMM
// is the same in both precisions and large GEMMs approach twice the speed, as
// torchao's README says they do ("the gemm speedup approaching 2x as M, K, N
// increase").
//
// Casts, per linear with input X (M x K), weight W (K x N) and output
// gradient G (M x N), bytes as torchao's roofline counts them (bf16 read, FP8
// written; `n` elements of the tensor; the second stage of each amax, a
// reduction of a few partial maxima, moves no modelled memory and is left out):
//  * tensorwise (dynamic per-tensor scales):
//      forward:  float8.amax_input 2n(X) and float8.cast_input 4n(X) (both
//                layouts written: row-major for the forward GEMM, column-major
//                for the weight gradient); float8.amax_weight 2n(W) and
//                float8.cast_weight 3n(W)
//      backward: float8.amax_grad 2n(G) and float8.cast_grad 4n(G) (both
//                layouts); float8.amax_weight_t 2n(W) and float8.cast_weight_t
//                3n(W): the weight re-cast in the layout the input gradient's
//                GEMM reads. torchao's roofline counts the weight's amax once;
//                its Float8Linear backward (matmul_with_hp_or_float8_args)
//                reads the whole weight again for it ("we need
//                pytorch/pytorch#136267 ... to reuse max(abs(weight))"), so
//                it is counted twice here.
//  * rowwise (per-row scales; the column-major copy needs a bf16 transpose):
//      forward:  float8.cast_input 5n(X) (FP8 row-major and a bf16 transpose
//                written), float8.cast_input_t 3n(X); float8.cast_weight 3n(W)
//      backward: float8.cast_grad 5n(G), float8.cast_grad_t 3n(G);
//                float8.transpose_weight 4n(W), float8.cast_weight_t 3n(W)
// With torch.compile (fused_with_producer) the first read of X and of G is
// fused into the kernel that produced them (torchao's enable_fusion_modeling):
// tensorwise drops the two input-side amax kernels, rowwise reads 2n less in
// cast_input and cast_grad. Weights are never fused (they come from the FSDP
// all-gather). The casts of a fused GEMM (qkv_proj: wq, wk, wv; gate_up_proj:
// w1, w3) read their shared input once: Inductor removes the repeated casts
// of one tensor as common subexpressions.
//
// With FSDP's float8 all-gather (weights_gathered_in_fp8, WorkloadSpec::
// float8_all_gather) the weights arrive in FP8: no forward weight casts, and
// the backward's become float8.transpose_weight_fp8 2n(W) (the FP8 weight
// copied column-major, as _scaled_mm wants its second operand).
//
//  * delayed (Transformer Engine's DelayedScaling, Megatron-Core's and NeMo's
//    default FP8 recipe): tensorwise's casts without any amax kernel; the
//    scale comes from the amax history of earlier steps, and each cast
//    records its tensor's amax as it writes.
//  * current (Transformer Engine's Float8CurrentScaling, Megatron-Core's
//    --fp8-recipe tensorwise): the scale is the tensor's own amax, so
//    tensorwise's kernels, byte for byte: an amax pass before each cast
//    (the input's and the gradient's fused into their producer under
//    fused_with_producer, as tensorwise's). Its all-reduce of a sequence
//    shard's amax over the TP group (amax_reduction_group) is not modelled.
//  * blockwise (Transformer Engine's Float8BlockScaling, --fp8-recipe
//    blockwise, DeepSeek-V3's recipe, arXiv:2412.19437 sec. 3.3): fp32
//    scales per 1 x 128 tile of X and G, each layout quantized from bf16 on
//    its own, and per 128 x 128 block of W, found by the cast itself: no
//    amax pass, fused or not.
//      forward:  float8.cast_input (4 + 8/128)n(X); float8.cast_weight
//                (3 + 4/16384)n(W)
//      backward: float8.cast_grad (4 + 8/128)n(G); float8.transpose_weight_fp8
//                2(1 + 4/16384)n(W): a square block's scale serves both
//                layouts, so the forward's FP8 weight is transposed, not cast
//                again
//    Its GEMMs read the operands' scales too (4/128 bytes per element of a
//    tiled operand, 4/16384 of a blocked weight) and are timed on the part's
//    FP8 curve like the others: DeepGEMM, DeepSeek's block-scaled FP8 GEMMs
//    for Hopper, "matches or exceeds expert-tuned libraries across various
//    matrix shapes" (its README); no microbenchmark here says otherwise.
//  * mxfp8 (Transformer Engine's MXFP8BlockScaling; OCP Microscaling
//    Formats v1.0): an E8M0 scale byte per 32 elements along the GEMM's
//    reduction dimension, which the forward, input-gradient and
//    weight-gradient GEMMs each take along another axis, so every tensor is
//    quantized both ways from its bf16 values, the weight too (a 1 x 32
//    block does not survive a transpose): float8.cast_input and cast_grad
//    (2 + 2 (1 + 1/32))n, float8.cast_weight and cast_weight_t (2 + 1 +
//    1/32)n each, or float8.cast_transpose_weight (2 + 2 (1 + 1/32))n kept
//    for the step; no amax pass. GEMMs (Kernel::format kMxfp8) at the FP8
//    peak with the part's mxfp8_gemm_efficiency, reading 1/32 byte of scale
//    per operand element.
//  * nvfp4 (Transformer Engine's NVFP4BlockScaling; NVIDIA, "Pretraining
//    Large Language Models with NVFP4", arXiv:2509.25149): E2M1 values (half
//    a byte) with an E4M3 scale per 16 elements, under a per-tensor fp32
//    scale from the tensor's amax (nvfp4.amax_* 2n, the activations' fused
//    into their producer like current scaling's); nvfp4.cast_input and
//    cast_grad (2 + 2 (1/2 + 1/16))n, plus 16 FLOPs per element for the
//    16-point Hadamard transform (32 per element of the column-major,
//    weight-gradient layout, the one that gets it); weights in 16 x 16 blocks, so the backward
//    transposes the forward's FP4 weight (nvfp4.transpose_weight 2 (1/2 + 1/16)n). GEMMs (kNvfp4)
//    at the FP4 peak with nvfp4_gemm_efficiency. The recipe's option of leaving the last layers in
//    bf16 is not modelled: every block runs NVFP4.
//
// Weights kept across the micro-batches of a step (Float8WeightCasts):
// Transformer Engine under Megatron-Core casts the blocks' weights in the first
// micro-batch's forward only (is_first_microbatch, which Megatron's schedules
// set at each step's first micro-batch of a model chunk), one
// float8.cast_transpose_weight 4n(W) (bf16 read, FP8 written in both layouts;
// after float8.amax_weight 2n(W) under current scaling, with the blocks'
// scales under block scaling), and every later forward and every backward
// reads the kept casts: no weight kernel at all. With the weights gathered in FP8 (Megatron's
// --fp8-param-gather, NeMo's fp8_params) the kept cast is the FP8 weight's
// transpose alone, float8.transpose_weight_fp8 2n(W).
//
// TP all-gathers in FP8 (KernelConfig::float8_tp_gather, under delayed and
// current scaling: Transformer Engine's userbuffers, whose all-gather
// buffers are FP8 under an FP8 recipe, with sequence parallelism): the input
// of qkv_proj and of up_proj / gate_up_proj (the norm's output) and the
// output gradient of out_proj and of down_proj are cast on the rank's
// sequence shard, float8.cast_input / float8.cast_grad 3n/tp (bf16 read, FP8
// written; current scaling's amax pass first, 2n/tp, unless fused),
// all-gathered at 1 byte per element, and the gathered tensor transposed for
// the weight gradient's GEMM, float8.transpose_input / float8.transpose_grad
// 2n (FP8 read and written).
//
// Not modelled: torchao's float8 all-gather of TP activations (its TP
// collectives stay bf16); block scaling's FP8 TP all-gathers (its tiles'
// column-major copy cannot be a transpose of the gathered rows: its gathers
// stay bf16 here, an assumption on the slow side).
//
// Units: FLOPs and bytes. Thread safety: pure functions.
#pragma once

#include <string_view>
#include <vector>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

// Rewrites one block pass (block_forward, block_backward or block_recompute)
// in place: every GEMM becomes an FP8 GEMM (Kernel::fp8, FP8 input bytes) and
// the casts above are inserted in front of the GEMM that first needs them. A
// forward GEMM is one whose name has no ".dgrad" / ".wgrad" suffix; a
// ".dgrad" GEMM brings the backward casts; ".wgrad" reads what they wrote.
// Kernel::name of the inserted kernels is a string literal.
// fp8_tp_gather > 1: the inputs of the GEMMs tp_gathers_input() names are
// gathered in FP8 over that many TP ranks (the casts above, on the shard).
std::string_view gemm_format_name(GemmFormat format);  // "bf16", "fp8", "mxfp8", "nvfp4"

// The format a recipe's GEMMs run in (kBf16 for kNone).
GemmFormat gemm_format_of(Float8Recipe recipe);

// Bytes per element of a linear weight's kept casts in both layouts with
// their scales (Float8WeightCasts::kOncePerStep: what Transformer Engine
// keeps for the step), for the memory model.
double kept_weight_cast_bytes(Float8Recipe recipe);

// Bytes per element of an activation a Transformer Engine linear saves for
// its weight gradient: its quantized input in the columnwise layout with
// its scales (0 for kNone: the linear keeps the bf16 input), for the memory model.
double saved_input_cast_bytes(Float8Recipe recipe);

void apply_float8(std::vector<Kernel>& kernels, Float8Recipe recipe, bool fused_with_producer,
                  bool weights_gathered_in_fp8 = false,
                  Float8WeightCasts weight_casts = Float8WeightCasts::kEveryPass,
                  int64_t fp8_tp_gather = 1);

}  // namespace clustersim::workloads
