// Per-rank peak GPU memory of one training step, by part, from a
// WorkloadSpec; and whether it fits a GPU of a given capacity.
//
// The peak is taken early in the backward of a micro-batch (the loss's
// backward or the last block's, whichever holds more; see Activations): every
// stored activation of the micro-batch is alive, the unsharded blocks in
// flight are allocated, and the gradient shards of earlier micro-batches
// (gradient accumulation) are held. Only one micro-batch's activations are alive at a
// time, so grad_accum does not change the peak.
//
// Notation: L layers, H hidden, V vocab, s seq_len,
// b local_batch, t = tp, S = shard_group_size (1 for NO_SHARD), c =
// dtype_bytes(dtype) (2 for bf16/fp16, 4 for fp32). ceil(x / y) is written
// x /^ y.
//
// Parameters held by one tensor-parallel rank (parameter_breakdown()):
//   block_rank = block /^ t                         (Megatron splits q/k/v/o, MLP)
//   root_rank  = (embedding + output_head) /^ t + final_norm
//                                                   (vocab-parallel embedding and head,
//                                                    replicated final norm; the FSDP root
//                                                    unit, as torchtitan wraps it)
//   model_rank = L * block_rank + root_rank
//   shard      = model_rank /^ S                    (parameters of one FSDP shard)
//
// Sharded training state (mixed precision; zero on the GPU with cpu_offload,
// where it is `host_bytes` instead):
//   params    = c * shard          low-precision parameters for compute
//   grads     = c * shard          gradients, reduce-scattered into the shard
//   optimizer = 12 * shard (bf16/fp16: fp32 master copy + Adam m + v)
//             =  8 * shard (fp32: Adam m + v; the parameters are the master)
// i.e. 16 bytes per parameter per shard, as FSDP2's fp32 sharded parameter,
// fp32 gradient and two moments (torchtitan) add up to. FULL_SHARD and
// SHARD_GRAD_OP shard over the data-parallel ranks, HYBRID_SHARD over
// shard_group_size, NO_SHARD not at all (S = 1).
//
// Unsharded parameters (all-gathered blocks; 0 when S = 1, nothing to gather):
//   in_flight = 1 + depth, at most L, with depth = 0 without prefetch
//               (backward_prefetch NONE and no forward_prefetch); with prefetch
//               depth = 1 under limit_all_gathers with FSDP2 (two blocks
//               unsharded) and 2 with FSDP1 (its queue of two free events lets
//               a third all-gather through, workloads/schedules/fsdp_schedule.h) or
//               without the limit (the host may issue one more all-gather
//               before the previous block is freed; an assumption)
//   unsharded = c * (root_rank + in_flight * block_rank)
//   SHARD_GRAD_OP or reshard_after_forward false: every block stays unsharded
//   from its forward to its backward, unsharded = c * model_rank.
//   With the float8 all-gather (float8_all_gather) a block's linear weights
//   are unsharded in FP8: block_rank's linear part (block_linear /^ t) counts
//   1 byte per parameter instead of c.
//
// Activations of one micro-batch: a per-block count of the tensors PyTorch
// autograd saves for backward, op by op, as torchtitan's Llama code runs
// them in eager mode (torchtitan/models/llama3/model/model.py: TransformerBlock,
// Attention with repeat_kv and scaled_dot_product_attention, FeedForward;
// infra/parallelize.py: the TP plan and _op_sac_save_list; the saved tensors
// of each op from PyTorch's tools/autograd/derivatives.yaml). Everything is
// per tensor-parallel rank, with sequence parallelism as torchtitan applies
// it. Further notation: T = s*b tokens of the micro-batch, Tt = T /^ t tokens
// of the sequence-parallel regions (norms, residual stream), d = head_dim,
// n = heads / t, Q = n*d, K = kv_heads / t * d, F = ffn_hidden / t,
// Vt = V /^ t (the widths of transformer_kernels.h), r = 4 bytes per token of
// norm statistics for RMSNorm (fp32 rstd) or 8 for LayerNorm (fp32 mean and
// rstd), A = the attention statistics: T*n*4 (flash attention's fp32
// log-sum-exp per row and head) or b*n*s*s*c without flash attention (the
// math path's softmax probabilities take its place).
//
// One block without checkpointing (block_none, layer_activation_bytes()):
//   attention_norm   Tt*H*c + Tt*r    input (the block input) and statistics:
//                                     fused rms_norm / native_layer_norm save
//                                     exactly these. Eager PyTorch running
//                                     torchtitan's Python RMSNorm (no
//                                     torch.compile, norm_kernel not fused;
//                                     transformer_kernels.h's 8 kernels) keeps
//                                     instead the fp32 copy of the input (pow's
//                                     and the rstd multiply's operand, 4*H per
//                                     token), rstd, and the normalised tensor
//                                     (the weight multiply's operand, H*c):
//                                     e = 4*H bytes per token more, 0 otherwise
//                                     (measured on an H200: 2.113 GiB more
//                                     allocated over 17 such norms where 17 *
//                                     4*T*H gives 2.125 GiB;
//                                     scenarios/measurements/2026-12-04_h200-sxm,
//                                     profile_torchtitan_eager against
//                                     profile_eager)
//   wq, wk, wv       T*H*c            their shared input, the norm output
//                                     all-gathered to all T tokens (DTensor's
//                                     ColwiseParallel saves the gathered input;
//                                     Megatron-LM would keep Tt and re-gather)
//   rotary           0                the complex multiply by the constant
//                                     freqs_cis saves only freqs_cis (a buffer)
//                                     and the dtype casts nothing: the
//                                     pre-rotary q and k are not kept
//   attention        4*T*Q*c + A      SDPA saves q, k, v and its output; k and v
//                                     at query width, as torchtitan's repeat_kv
//                                     materialises the GQA copies it passes in
//                                     (the kernels model's K-wide reads assume
//                                     native GQA; memory follows torchtitan)
//   wo               0                its input is the attention output
//   residual add     0
//   ffn_norm         Tt*H*c + Tt*r    input (the residual stream after
//                                     attention) and statistics
//   w1, w3 / up      T*H*c            their gathered input
//   SwiGLU           4*T*F*c          w1's output (silu's input), silu's output
//                                     and w3's output (the product's inputs),
//                                     the product (w2's input)
//   GELU             2*T*F*c          up's output (gelu's input), gelu's output
//                                     (down's input)
//   w2 / down, residual add  0
//   block_none = 2*Tt*(H*c + r + e) + 2*T*H*c + 4*T*Q*c + A + m*T*F*c,
//   m = 4 (SwiGLU) or 2 (GELU), e the Python RMSNorm's extra (above). Not
//   counted (each under 0.1% of a block): token ids and labels (int64),
//   flash attention's RNG state, and tensors that are parameters or buffers
//   (norm weights, freqs_cis). No dropout.
//
// Stored per block, kept from its forward to its backward (block_stored), and
// recomputed activations of one block, alive during its backward on top of
// the stored ones (block_recompute):
//   none:      block_stored = block_none,  block_recompute = 0
//   selective: torchtitan's op-level SAC (selective_ac_option "op"): the
//              checkpoint keeps its input; the policy saves the outputs of the
//              flash attention op (output and log-sum-exp), of
//              _c10d_functional.reduce_scatter_tensor (TP's row-parallel
//              outputs, Tt x H) and of every odd-numbered aten.mm of the
//              block. The block issues wq (width Q), wk (K), wv (K), wo (H),
//              w1 (F), w3 (F), w2 (H) [GELU: up (F), down (H)], so the 1st,
//              3rd, 5th and 7th are saved: wq, wv, w1 / up and w2 (SwiGLU only);
//              a row-parallel GEMM's output is the T x H partial sum before
//              its reduce-scatter. A linear with a bias runs aten.addmm, which
//              the policy neither counts nor saves, so with linear_bias no GEMM
//              output is saved.
//                block_stored = Tt*H*c                     block input
//                             + T*(Q + K + F + H')*c       mm outputs (H' = H for
//                                                          SwiGLU, 0 for GELU;
//                                                          0 in all with a bias)
//                             + T*Q*c + A                  attention output, stats
//                             + 2*Tt*H*c   (t > 1)         reduce-scatter outputs
//                block_recompute = block_none - shared, where shared are the
//                             saved tensors autograd keeps anyway: the block
//                             input, the attention output and A; without a bias
//                             also w1's / up's output (T*F*c), wv's output when
//                             kv_heads == heads (v is not a repeat_kv copy then,
//                             T*K*c) and wq's output without rotary positions
//                             (learned_positions > 0: q is wq's output, T*Q*c)
//   full:      block_stored = Tt*H*c (the checkpoint's input, the block input),
//              block_recompute = block_none - Tt*H*c
//
// Root and loss (torchtitan: the final norm and the output head outside any
// checkpoint; components/loss.py computes cross_entropy(logits.float(),
// labels), and train.py deletes the logits before loss.backward()):
//   head = Tt*(H*c + r + e') final norm input (the last block's output), stats;
//                            e' = 4*H for the Python RMSNorm, which runs eager
//                            even under torch.compile (torchtitan compiles
//                            the blocks only), 0 for a fused norm or LayerNorm
//        + T*H*c             the head's gathered input
//        + l*T*Vt            the loss at its peak, l bytes per logit. t = 1:
//                            l = 12: log_softmax saves its fp32 output (4);
//                            backward then holds that, nll_loss's fp32
//                            gradient of it (4) and log_softmax's fp32
//                            gradient of the logits (4). In forward at most
//                            10 are alive for c = 2 (the logits, their fp32
//                            copy, the log_softmax output); the copy is not
//                            saved and the logits are deleted. t > 1: l = 16,
//                            torchtitan's loss_parallel on vocab-sharded
//                            logits (torch/distributed/tensor/parallel/
//                            loss.py, _nll_loss_and_log_softmax_backward):
//                            the saved output (4), then zeros_like of it with
//                            the target's -1 scattered in (4), exp(output)
//                            (4) and their sum (4) before the product with
//                            the incoming gradient; in forward at most 14
//                            (the logits, the fp32 copy, x - max, exp of it).
//
// The peak is the larger of two moments in the backward of the micro-batch,
// both with every block's stored activations alive:
//   loss backward (its start):     head
//   last block's backward:         block_recompute + Tt*H*c (the gradient of
//                                  its output); the head's tensors are freed
//   activations = L * block_stored + max(head, block_recompute + Tt*H*c + ring)
// With n layers' activations offloaded to the host (Megatron-Core's
// --cpu-offloading-num-layers), L - n in place of L: Transformer Engine's
// schedule keeps at most that many on the GPU (fsdp_schedule.h).
// Gradient temporaries inside a block's backward (a few T x F tensors at most)
// are left to the fragmentation margin below.
//
// Context parallelism (cp > 1, workloads/model/ring_attention.h): every term above is
// per rank with T = s*b/cp tokens. A block's backward adds the ring's
// buffers (ring, 0 with cp 1), with W the width of the K and V it moves (Q,
// or K with workload.context_parallel.kv_heads: model): the other ranks' K
// and V (allgather: the all-gather's output, cp * 2*T*W*c; alltoall: the
// pair in use and the one arriving, 2 * 2*T*W*c), the fp32 gradient
// accumulators of q, k and v (4*T*Q + 2*4*T*W) and the dK, dV buffers sent
// and received around the ring (2 * 2*T*W*4): ring = kv + 4*T*Q + 24*T*W.
// The forward's (the K and V, an fp32 output being merged) are smaller.
//
// Check against a measurement (torchtitan docs/performance.md, Table 1):
// Llama 3.1 8B, FSDP on 8 H100 (96 GB), seq 8192, local batch 2, selective
// (op) AC, eager: 82.4 GiB reserved; total() gives 83.3e9 bytes (77.6 GiB).
// Korthikanti et al. 2022 (arXiv:2205.05198), whose 34*s*b*h per layer
// counts GPT blocks in Megatron-LM (dropout masks, no SwiGLU or GQA) and
// whose selective recomputation is not torchtitan's policy, gave ~111 GB
// for that run; it is the Megatron layout's reference below.
//
// Megatron's layout (WorkloadSpec::megatron: strategy DISTRIBUTED_OPTIMIZER,
// or NO_SHARD with workload.megatron.ddp; Megatron-Core's GPT layer with
// Transformer Engine, sequence parallelism with tp > 1). Korthikanti et al.
// count per layer, with a = heads, h = hidden and t = tp, s*b*h*(34/t +
// 5*a*s/(h*t)) bytes for a GPT block: LayerNorm inputs 4sbh, the QKV
// input 2sbh, Q and K 4sbh, V 2sbh, the projection input 2sbh, the
// softmax output 2as^2b, its dropout mask as^2b and output 2as^2b, the MLP
// input 2sbh, GELU's input and output 8sbh each, two dropout masks sbh each
// (their Table 2; Megatron-LM's theoretical_memory_usage.py takes its
// selective row, sbh(18 + 4 ffn/h)/t). What Megatron-Core saves, per the
// notation above:
//   norm + linear_qkv  Tt*(2*H*c + r)  TE's LayerNormLinear keeps its input
//   (and fc1)                          (the residual stream), the statistics
//                                      and its sequence-parallel output, which
//                                      it gathers again in backward
//                                      (Korthikanti's LayerNorm input and QKV
//                                      / MLP input)
//   core attention     T*(Q + 2K)*c    q, k, v as the fused attention keeps them
//                                      (GQA's K and V at their own width)
//                      + T*Q*c + A     its output (linear_proj's input), and A:
//                                      flash attention's fp32 log-sum-exp, or
//                                      the softmax output without it (no dropout,
//                                      so neither its mask nor its output)
//   MLP                m*T*F*c         m = 2: GELU's (or squared ReLU's) input
//                                      and fc2's input; m = 3 with SwiGLU, the
//                                      fused bias-SwiGLU's 2F-wide input and its
//                                      output
//   block_none = 2*Tt*(2*H*c + r) + T*(2*Q + 2*K)*c + A + m*T*F*c
// Under a float8 recipe each Transformer Engine linear saves its input
// quantized, in the columnwise layout its weight gradient reads (f bytes per
// element with scales: 1 for FP8, 1 + 1/32 MXFP8, 1 + 4/128 blockwise,
// 9/16 NVFP4; transformer_engine/pytorch/module/layernorm_linear.py and
// linear.py save ln_out / inputmat after update_usage(rowwise_usage=False)):
// the norms' outputs take Tt*H*f in place of Tt*H*c, fc2's input T*F*f in
// place of T*F*c, and linear_proj keeps T*Q*f beside the bf16 attention
// output the fused attention keeps for its own backward.
// For Korthikanti's GPT block (K = Q = H/t, F = 4H/t, no flash) that is their
// 34sbh/t + 5as^2b/t less the dropout masks (2sbh/t) and the dropout's
// as^2b/t + 2as^2b/t, plus the LayerNorm statistics 2*Tt*8. The model has no
// dropout (Nemotron-4 and Llama train without; the GPT benchmarks' 0.1 would
// add Tt*H bytes per mask).
// Checkpointing in this layout:
//   none:            block_stored = block_none, block_recompute = 0
//   attention_core:  Megatron's selective recompute: A is not kept (q, k, v
//                    are the checkpoint's inputs, the output linear_proj's),
//                    block_stored = block_none - A, block_recompute = A +
//                    T*Q*c (the re-run core's output and A); with flash
//                    attention this saves only the statistics, as Megatron's
//                    fused attention already keeps no s x s tensor
//   full:            as above (the block input, Tt*H*c, kept)
// The head: the final LayerNorm's input and statistics, the output layer's
// sequence-parallel input (Tt*H*c, gathered again in backward), and 6 bytes
// per logit (Megatron's vocab-parallel cross entropy: the bf16 logits and
// the fp32 softmax it keeps, whose gradient it computes in place).
// Pipeline stages hold microbatches_alive() chunk-micro-batches as above;
// for interleaved 1F1B that is Megatron's (v - 1) pp + 2 (pp - 1 - s) + 1 on
// stage s, the layers x (1 + (pp - 1) / (pp v)) of stage 0 that
// theoretical_memory_usage.py's interleaving penalty gives.
//
// no_sync (workload.fsdp.no_sync, grad_accum > 1, S > 1): the micro-batches
// before the last accumulate unsharded gradients, grads += c * model_rank;
// FSDP2 accumulates them in the reduce dtype (torchtitan's fp32:
// FSDPParam.unsharded_accumulated_grad), grads += r * model_rank with r its
// bytes.
//
// Communication buffers:
//   comm_buffers = c * block_rank when S > 1: the unsharded gradient of the
//   block whose reduce-scatter is in flight; 0 for NO_SHARD (DDP gradients
//   are bucket views, gradient_as_bucket_view).
//
// Megatron's DDP (WorkloadSpec::megatron) instead holds, per rank:
//   params    = c * model_rank               the whole low-precision parameters
//   grads     = g * model_rank               the main-grad buffer, g =
//                                            dtype_bytes(reduce_dtype)
//   optimizer = 12 * model_rank /^ S         fp32 master weights and Adam's m, v
//                                            (8 for fp32 training), sharded over
//                                            the data-parallel ranks by the
//                                            distributed optimizer (S = dp), whole
//                                            under plain DDP (S = 1)
//             = 10 * model_rank /^ S        with store_param_remainders (the master
//                                            weight as the bf16 parameter and its
//                                            low 16 bits, 2 bytes, with m and v)
// i.e. 2 + 4 + 12/dp bytes per parameter with fp32 main gradients
// (Megatron-LM's theoretical_memory_usage.py: 6 + 12/dp; plain DDP 18);
// unsharded_params = 0, and comm_buffers = 0: every bucket's reduce-scatter,
// all-reduce and all-gather runs in place in those buffers
// (param_and_grad_buffer.py), and gradient accumulation needs no other
// copy. Megatron allocates these buffers and the optimizer's shards once,
// before the first step, so the fragmentation term below applies to the
// activations only.
//
// Allocator reserve:
//   reserve = kRuntimeReserveBytes + kFragmentation * (everything above;
//             Megatron: the activations)
//   kRuntimeReserveBytes (1 GiB): CUDA context, cuBLAS workspaces and NCCL's
//   internal buffers; kFragmentation (5%): the caching allocator's
//   fragmentation. Placeholders until calibrated against measured peaks.
//
// Units: bytes (int64). Thread safety: pure functions; value types.
#pragma once

#include <cstdint>

#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

inline constexpr int64_t kRuntimeReserveBytes = int64_t{1} << 30;
inline constexpr double kFragmentation = 0.05;

struct MemoryOptions {
  // The kernels model runs flash attention; false (or the workload's
  // flash_attention false, workload.attention: math) counts the math path's
  // softmax probabilities (b*n*s*s*c) in place of the log-sum-exp.
  bool flash_attention = true;
};

// The activation terms above, for one micro-batch on one rank.
struct ActivationBreakdown {
  int64_t block_none = 0;       // everything autograd saves for one block
  int64_t block_stored = 0;     // kept per block under the checkpointing mode
  int64_t block_recompute = 0;  // one block's recomputed tensors in its backward
  int64_t head = 0;             // final norm, head input and the loss at its peak
  int64_t ring = 0;             // context parallelism's buffers in a block's backward
  // (L - n) * block_stored, n the blocks whose activations are offloaded
  int64_t layers = 0;
  int64_t offloaded = 0;  // n * block_stored, on the host
  // layers + max(head, block_recompute + the block's output gradient + ring)
  int64_t total = 0;
};

struct MemoryBreakdown {
  int64_t params = 0;
  int64_t grads = 0;
  int64_t optimizer = 0;
  int64_t unsharded_params = 0;
  int64_t activations = 0;
  int64_t comm_buffers = 0;
  int64_t reserve = 0;
  // On the host with cpu_offload (params + grads + optimizer) and offloaded
  // activations (ActivationBreakdown::offloaded); not in total().
  int64_t host_bytes = 0;
  // The pipeline stage whose ranks these are (memory_breakdown(): the one
  // with the largest total; 0 without pipeline parallelism).
  int64_t stage = 0;

  // Sum of the GPU parts.
  int64_t total() const {
    return params + grads + optimizer + unsharded_params + activations + comm_buffers + reserve;
  }
};

// Activations one block stores for one micro-batch without recomputation
// (block_none above).
int64_t layer_activation_bytes(const WorkloadSpec& w, const MemoryOptions& options = {});
// The terms of activation_bytes() under w.activation_checkpointing.
ActivationBreakdown activation_breakdown(const WorkloadSpec& w, const MemoryOptions& options = {});
// Activations of one micro-batch at the peak under w.activation_checkpointing,
// head and loss included (ActivationBreakdown::total).
int64_t activation_bytes(const WorkloadSpec& w, const MemoryOptions& options = {});

// The per-rank peak, by part. `w` comes from read_workload_spec() (groups
// derived, tp splitting the model).
MemoryBreakdown memory_breakdown(const WorkloadSpec& w, const MemoryOptions& options = {});

// Pipeline parallelism (pp > 1; workloads/model/pipeline_stages.h): stage s holds its
// blocks and what it has of the root (embedding on the first stage, output
// head and final norm on the last), keeps them unsharded for the whole step,
// accumulates the stage's unsharded gradients over the micro-batches (one
// reduction per step, as no_sync), and holds the stored activations of its
// blocks for microbatches_alive() micro-batches, plus on the last stage the
// head's. memory_breakdown() is then the stage with the largest total; with
// pp 1, stage 0 is the whole model and the formulas above.
MemoryBreakdown stage_memory_breakdown(const WorkloadSpec& w, int64_t stage,
                                       const MemoryOptions& options = {});

// total() <= capacity_bytes.
bool fits(const MemoryBreakdown& memory, int64_t capacity_bytes);

}  // namespace clustersim::workloads
