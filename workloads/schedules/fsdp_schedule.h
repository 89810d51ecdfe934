// The per-rank task DAG of one FSDP/HSDP/DDP training step: a schedule
// TEMPLATE shared by every rank of the same role (flyweight). It holds no
// per-rank data (no rank ids, groups or times); the step simulator pairs it
// with the rank's groups and clocks.
//
// Tasks are listed in HOST ISSUE ORDER: the host thread launches task i
// before task i + 1, so index order is a topological order and every
// dependency points to a lower index. Dependencies (CSR: deps_of(i)) are
// complete: they include the previous task on the same stream (CUDA stream
// order) and the data/event dependencies. A task with host_wait >= 0 also
// blocks the HOST until that task has finished (limit_all_gathers'
// cudaEventSynchronize); host_wait is always one of the task's deps.
//
// Streams: one compute stream, and communication as FSDP2 issues it by
// default: all-gather, reduce-scatter and the HSDP all-reduce on ONE NCCL
// stream/communicator (kComm), so they serialise in issue order. With
// FsdpScheduleOptions::separate_reduce_stream, reduce-scatters and
// all-reduces go to kReduce instead (FSDP1's separate post-backward stream).
// A kFree is a zero-cost marker on the compute stream: the unsharded
// parameters of its unit may be reused once the kernels before it finished.
//
// FSDP units: one per transformer block (unit = block index) and the root
// (unit = kRootUnit): embedding, final norm and output head. The root is
// all-gathered before the embedding and, as in FSDP1 and torchtitan's FSDP2
// wrapping, not resharded after forward (backward needs it at once); it is
// freed after the embedding's backward.
//
// Step semantics (choices documented where PyTorch offers several):
//  * Forward, per micro-batch: for the root then each block, all-gather the
//    unit if not gathered (never with NO_SHARD), its forward kernels (the
//    first depends on the all-gather), then a free when resharding after
//    forward (FULL_SHARD / HYBRID_SHARD with reshard_after_forward;
//    SHARD_GRAD_OP never reshards after forward). forward_prefetch issues the
//    next unit's all-gather right after the current one's (before its
//    kernels).
//  * limit_all_gathers, FSDP1 (fsdp_version 1): its rate limiter as the code
//    runs it (torch/distributed/fsdp/_limiter_utils.py, _FreeEventQueue;
//    _unshard and _reshard in _runtime_utils.py): every free of a unit's
//    unsharded parameters records an event in a queue, and every all-gather
//    is preceded by a host wait on the oldest queued event once two or more
//    are queued. It counts frees, not buffers: with a prefetch (BACKWARD_PRE,
//    forward_prefetch) three block all-gathers can be in flight, and in
//    backward the next block's all-gather waits for the free of the block
//    two back, not one. With nothing freed (SHARD_GRAD_OP forward) the limit
//    does not bind.
//  * limit_all_gathers, FSDP2: FSDP2 has no host limiter; its next
//    all-gather waits on the GPU for the previous one's copy-out, which keeps
//    two block buffers. Modelled as a host wait: before issuing an all-gather
//    of a block, while two or more block buffers are live (gathered and not
//    yet awaited), the host waits for the free of the oldest one, provided
//    that free was already issued. The root is not counted.
//  * Backward in reverse (head, blocks L-1..0, embedding): all-gather again
//    what was freed; BACKWARD_PRE issues the next unit's all-gather in the
//    current unit's pre-backward (before its kernels), BACKWARD_POST in its
//    post-backward (after the kernels and the free, before the
//    reduce-scatter), NONE only when the unit is reached.
//  * Activation checkpointing: full recomputes the block's whole forward
//    (after its all-gather) before its backward kernels; selective recomputes
//    the block's norm and elementwise forward kernels (GEMMs and attention
//    saved, as torchtitan's op-level SAC does for attention and most
//    matmuls). The embedding and head are never recomputed.
//  * Gradient reduction: by default every micro-batch reduce-scatters each
//    unit's gradients after its backward (FSDP's default with gradient
//    accumulation; no no_sync()). With FsdpScheduleOptions::no_sync, only the
//    last micro-batch reduces; earlier ones accumulate unsharded gradients,
//    and SHARD_GRAD_OP then keeps its parameters gathered across
//    micro-batches (FSDP1's _should_free_in_backward).
//    HYBRID_SHARD: each reduce-scatter is followed by an all-reduce of the
//    shard across the replica group. NO_SHARD (DDP): one all-reduce of the
//    unit's full gradients instead (one bucket per unit).
//  * After backward the unsharded parameters are freed (reshard after
//    backward) except SHARD_GRAD_OP under no_sync before the last micro-batch.
//  * Gradient clipping (grad_clip, torch.nn.utils.clip_grad_norm_ as torchtitan
//    and fms-fsdp call it every step with max_norm 1): after every final
//    gradient reduction, grad_norm reads the local fp32 gradient shards
//    (_foreach_norm: 4 bytes per local parameter), an all-reduce of the fp32
//    sum of squares (4 bytes) over the shard group (FSDP / HSDP: the replicas
//    hold equal gradients; on the comm stream) and over the TP group (on the
//    TP stream) runs, and
//    grad_clip scales the gradients (_foreach_mul_: 8 bytes per parameter).
//    None with CPU offload (the host clips its own gradients).
//  * Optimizer: one AdamW kernel over the local shard (compute stream) after
//    every final gradient reduction (and the clipping). FSDP keeps fp32 sharded parameters and
//    casts in the all-gather, so the optimizer reads fp32 gradients and writes
//    no low-precision copy (OptimizerPrecision{4, 0}). With
//    WorkloadSpec::optimizer_implementation foreach it is adamw.foreach, the
//    summed bytes of foreach's eight passes (workloads/model/optimizer_step.h).
//
// FSDP2 copies (WorkloadSpec::fsdp_version 2; torch.distributed.fsdp
// _fsdp_collectives.py): the first kernel to use an all-gather's output is
// preceded by fsdp.all_gather_copy_out on the compute stream
// (split_with_sizes_copy of the gathered buffer into the unit's parameters:
// the unsharded bytes read and written), and each reduce-scatter by
// fsdp.reduce_scatter_copy_in on the compute stream after the unit's
// backward (chunk_cat of the unsharded gradients, read in the compute dtype,
// written in the reduce dtype). The all-gather's copy-in of the local shard
// (1 / shard_group of the bytes, on its own stream) is left out. FSDP1
// gathers into and reduces from its flat parameter in place: no copies.
// Between reductions (no_sync, or a pipeline stage's micro-batches before
// the last) with a reduce dtype wider than the compute dtype (torchtitan's
// fp32), FSDP2 keeps each unit's unsharded gradient in the reduce dtype
// (FSDPParam.to_accumulated_grad_if_needed / unsharded_accumulated_grad):
// after the unit's backward, micro-batch 0 casts the new gradient
// (fsdp.grad_to_reduce_dtype: compute dtype read, reduce dtype written) and
// every later one adds it (fsdp.accumulate_grad: the new gradient and the
// accumulator read, the accumulator written), the last one before its
// reduction. (The last reduction's copy-in is counted as without
// accumulation, reading the compute dtype.)
//
// Bytes (nccl-tests convention, per rank's collective call): all-gather =
// total output = the unit's unsharded parameters in the compute dtype;
// reduce-scatter = total input = the same number of gradients in the reduce
// dtype (WorkloadSpec::reduce_dtype); HSDP all-reduce = one shard,
// ceil(params / shard_group) elements of the reduce dtype; DDP all-reduce =
// the unit's full gradients in the reduce dtype. With tp > 1 a unit's
// parameters are its TP slice, ceil(params / tp) (norm weights are in fact
// replicated; ignored). FSDP's padding of the flat parameter is ignored.
//
// Kernels: torch.compile (workload.torch_compile) runs the transformer
// blocks as Inductor's fused kernels; the embedding, final norm and loss stay
// eager, as torchtitan compiles each block only (transformer_kernels.h,
// KernelFusion). Selective checkpointing recomputes what torchtitan's op-level
// policy does not save, full checkpointing the block's forward up to its last
// saved tensor (block_recompute()).
//
// Tensor parallelism (tp > 1, Megatron-style with sequence parallelism, on
// Stream::kTp, group kTp): forward (and recomputed forward) all-gathers the
// normed activations before the attention's and the MLP's first GEMM and
// reduce-scatters after the out and down projections; backward the reverse
// (all-gather before down_proj.dgrad and out_proj.dgrad, reduce-scatter after
// the MLP's and the qkv projection's dgrad). Each moves the full activation,
// local_batch * seq_len * hidden * dtype bytes (nccl-tests convention). The
// kernel after a TP collective waits for it, so TP communication is exposed,
// unless WorkloadSpec::async_tp: then each collective is copies to and from
// each TP peer beside row chunks of the GEMM it feeds or drains
// (workloads/schedules/async_tp_tasks.h), and no sequence cat runs (the fused ops
// write the chunks in place). With the sequence dim second (WorkloadSpec::tp_sequence_dim
// 1: torchtitan's [batch, seq, hidden] activations, DTensor's Shard(1)),
// each collective moves dim 0, so PyTorch's functional collectives
// (torch/distributed/_functional_collectives.py, all_gather_tensor and
// reduce_scatter_tensor for a gather/scatter dim != 0) concatenate the
// chunks: tp.sequence_cat on the compute stream after each TP all-gather and
// before each TP reduce-scatter, the full activation read and written
// (2 * local_batch * seq_len * hidden * dtype bytes). Megatron's [seq, batch,
// hidden] (tp_sequence_dim 0) needs none.
//
// CPU offload (FSDP's CPUOffload(offload_params=True)): parameters, gradients
// and optimizer states live on the host. Each unit's shard is copied to the
// GPU (kCopyToDevice, Stream::kCopy) before each of its all-gathers; each
// final gradient reduction is followed by a copy of the gradient shard to the
// host (kCopyToHost); the optimizer runs on the host CPU (kCpuOptimizer,
// Stream::kCpu) after the last copy, instead of the GPU AdamW kernel.
//
// Activation offload (WorkloadSpec::activation_offload_layers n, Megatron-Core's
// --cpu-offloading-num-layers; pp 1, no recomputation), as Transformer
// Engine's OffloadSynchronizer times it (transformer_engine/pytorch/
// cpu_offload.py @00382b96b46cac38fdfc7f2cbca438145708a398,
// _default_offload_sync_init): after the forward of block i < n, its saved
// activations (offload_bytes) are copied to the host (kCopyToHost,
// Stream::kCopy, the one offload stream); the forward of block L - n + i
// waits for that copy (the GPU memory is released then). In the backward,
// on reaching block L - 1 - n + i, the copy stream waits for the compute
// stream's work so far and copies block i's activations back
// (kCopyToDevice); block i's backward waits for it. Copies run at the host
// link's rate and share the one copy stream in issue order.
//
// Float8 all-gather (WorkloadSpec::float8_all_gather, torchao's
// WeightWithDynamicFloat8CastTensor under FSDP2): a block's all-gather moves
// its linear weights in FP8 (1 byte) and its norms in the compute dtype;
// before it, one all-reduce (MAX, 4 bytes) per linear weight over the shard
// group finds the weight's global amax (7 per SwiGLU block: wq, wk, wv, wo,
// w1, w2, w3). With precomputed scales there are none; instead, after the
// optimizer, float8.precompute_amax reads the local shards of every linear
// weight (fp32) and one all-reduce of the layers x weights amaxes runs.
//
// Context parallelism (WorkloadSpec::cp > 1): every token-wise kernel runs on
// the rank's seq_len / cp tokens, attention is ring attention's steps
// (workloads/model/ring_attention.h), and the K/V exchanges around them
// (workloads/schedules/ring_attention_tasks.h) run on Stream::kCp (the all-gather,
// group kCp) and Stream::kCpSend / kCpRecv (the ring, peers the next and
// previous member of the rank's cp group). FSDP's shard group holds the cp
// ranks (torchtitan's dp_shard_cp), so nothing else changes.
//
// Pipeline parallelism (WorkloadSpec::pp > 1, the schedule of stage
// FsdpScheduleOptions::stage; workloads/model/pipeline_stages.h): the stage's blocks
// only, the embedding on the first stage and the head on the last (the root
// unit holds what the stage has of them), micro-batches in the order of the
// pipeline schedule. A stage after the first receives each micro-batch's
// activation (kRecv from peer_stage -1) before its first block's
// forward; a stage before the last sends its output (kSend to +1, on
// after its last block, and receives the output's gradient (kRecv
// from +1) before its backward; a stage after the first sends the gradient
// of its input (kSend to -1) after its first block's backward. With
// virtual stages (interleaved 1F1B) each of the stage's chunks does so, chunk
// by chunk in the schedule's order, and the last stage's chunks send to the
// first stage's next chunk (peer_stage -(pp - 1)), whose gradients come back
// the same way. ZBV places a rank's second chunk on stage 2 pp - 1 - s (its
// peers are then the stage before and after it, the rank itself at the V's
// turn) and runs each backward as its input-gradient half (the receive,
// recomputation, every kernel but the weight gradients', the send) and, later,
// its weight-gradient half, after which the unit's gradients are reduced. Each moves
// one micro-batch's activation on one TP rank, local_batch * seq_len *
// hidden * dtype / tp bytes (sequence-sharded under TP). FSDP as
// torch.distributed.pipelining runs FSDP2 (torchtitan: no reshard after
// forward with PP; the stage calls set_requires_gradient_sync and
// set_reshard_after_backward only for the last micro-batch): every unit stays
// gathered from its first forward to the last backward, and gradients are
// reduced once: after the stage's last backward, every unit in module order
// (torchtitan), or with grad_reduction during_last_backward each unit as
// the last micro-batch's backward produces its gradients, overlapped with
// the rest of it (Megatron-Core's --overlap-grad-reduce). Gradient clipping
// adds the all-reduce of the norm over the pipeline group (torchtitan's
// clip_grad_norm_ with a pp mesh).
//
// Megatron-Core's DDP (WorkloadSpec::megatron: DISTRIBUTED_OPTIMIZER, or
// NO_SHARD with workload.megatron.ddp; workloads/schedules/megatron_buckets.h):
// every parameter stays whole (no FSDP all-gather, free or copy kernel),
// micro-batches before the last accumulate into the main-grad buffer with no
// task, and the last micro-batch's gradients are reduced per bucket (a
// reduce-scatter under the distributed optimizer, an all-reduce under plain
// DDP), overlapped with its backward or after it; the distributed optimizer
// all-gathers its parameters per bucket at the step's start (the first
// bucket exposed, each next one issued at the previous one's first use) or
// after its optimizer step. Gradient clipping and the optimizer are as
// above; the optimizer reads the main-grad shard in the reduce dtype and
// writes the low-precision parameters (OptimizerPrecision{reduce dtype,
// dtype}). The schedule's clipping and optimizer tasks are
// workloads/schedules/optimizer_tasks.h's.
//
// Thread safety: build_fsdp_schedule is a pure function; FsdpSchedule is an
// immutable value once built and may be shared across threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "collectives/collective_cost.h"
#include "exec/mesh_layout.h"
#include "exec/step_result.h"
#include "workloads/model/pipeline_stages.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

enum class TaskKind : uint8_t {
  kKernel,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kFree,
  kOptimizer,
  kCopyToDevice,  // CPU offload: a parameter shard over PCIe before its all-gather;
                  // activation offload: a block's activations before its backward
  kCopyToHost,    // CPU offload: a gradient shard over PCIe after its reduction;
                  // activation offload: a block's activations after its forward
  kCpuOptimizer,  // CPU offload: AdamW on the host over the local shard
  kSend,          // pipeline: a micro-batch's activations or gradients to the next/previous stage
  kRecv           // pipeline: ... from the previous/next stage
};
// kTp: tensor-parallel collectives (their own NCCL communicator); kCopy:
// host<->device copies; kCpu: work of the host's CPU cores (not the thread
// that launches kernels); kPpSend* / kPpRecv*: pipeline parallelism's sends
// and receives of activations and of gradients. Each channel (direction,
// peer, activation or gradient) is a FIFO of its own, as ProcessGroupNCCL
// gives every peer pair its own communicator and stream: a send or receive
// depends on its channel's earlier ones only (no stream-order dependency on
// the task list's stream), and the compiled program puts each channel on a
// stream of its own, so that one waiting for its peer holds up no other
// (ZBV's order would otherwise wait in a cycle).
enum class Stream : uint8_t {
  kCompute,
  kComm,
  kReduce,
  kTp,
  kCopy,
  kCpu,
  kPpSendActivation,
  kPpSendGradient,
  kPpRecvActivation,
  kPpRecvGradient,
  kCp,      // context parallelism's collectives (the K/V all-gather)
  kCpSend,  // ... and its ring: K/V (alltoall) and K/V gradients to the next rank
  kCpRecv,  // ... from the previous rank
  kTpSend,  // async TP's copies to the TP peers, in issue order
  kTpRecv   // ... and from them
};
inline constexpr int kStreamCount = 15;
// The streams of a schedule without pipeline parallelism.
inline constexpr int kStreamCountWithoutPipeline = 6;

std::string_view task_kind_name(TaskKind kind);
// The collective a task runs (kAllGather, kReduceScatter, kAllReduce); none otherwise.
std::optional<collectives::CollectiveOp> collective_of(TaskKind kind);
std::string_view stream_name(Stream stream);

inline constexpr int32_t kNoKernel = -1;    // Task::kernel of a non-kernel
inline constexpr int32_t kNoHostWait = -1;  // Task::host_wait when none

struct Task {
  TaskKind kind = TaskKind::kKernel;
  Stream stream = Stream::kCompute;
  Phase phase = Phase::kForward;
  int32_t unit = kRootUnit;
  int32_t micro_batch = 0;          // 0 .. grad_accum-1; the optimizer: grad_accum-1
  int32_t kernel = kNoKernel;       // index into FsdpSchedule::kernels (kKernel, kOptimizer)
  int32_t host_wait = kNoHostWait;  // task the host waits for before issuing this one
  int64_t bytes = 0;  // collectives: payload per rank (see the top of this file); copies:
                      // bytes moved; kCpuOptimizer: parameters updated
  GroupRole group = GroupRole::kNone;  // collectives only
  // kSend / kRecv: the peer's stage, relative (+1 the next stage, -1 the
  // previous; with virtual stages also -(pp - 1) and pp - 1, across the wrap).
  int32_t peer_stage = 0;
};

// Adds a task with its dependencies and returns its index: how the
// schedule's builder lends its `add` to the generators of
// workloads/schedules/ring_attention_tasks.h and workloads/schedules/async_tp_tasks.h.
using AddTaskFn = std::function<int32_t(Task, std::vector<int32_t>)>;

// [begin, begin + count) in FsdpSchedule::kernels.
struct KernelRange {
  int32_t begin = 0;
  int32_t count = 0;
};

struct FsdpScheduleOptions {
  bool separate_reduce_stream = false;  // reduce-scatter/all-reduce on Stream::kReduce
  bool no_sync = false;                 // reduce gradients only on the last micro-batch
  int64_t stage = 0;                    // the pipeline stage (WorkloadSpec::pp > 1)
};

struct FsdpSchedule {
  // Kernel table: each distinct kernel once (all blocks share theirs).
  std::vector<Kernel> kernels;
  KernelRange block_forward, block_backward, embedding_forward, embedding_backward, head_forward,
      head_backward;
  // A block's forward in a chunk's first micro-batch: block_forward's kernels
  // unless FP8 weights are cast once a step (WorkloadSpec::float8_weight_casts),
  // which this forward does and the later ones read.
  KernelRange block_forward_first;
  std::vector<int32_t> recompute;  // kernel indices a block recomputes (checkpointing)
  // Zero-bubble schedules: the block's and the head's backward kernels split
  // into the input gradient's and the weight gradient's (the .wgrad GEMMs and
  // eager norms' weight-gradient kernels), each in backward order.
  std::vector<int32_t> block_input_grad, block_weight_grad, head_input_grad, head_weight_grad;
  int32_t optimizer_kernel = kNoKernel;
  // Gradient-norm clipping (WorkloadSpec::grad_clip); kNoKernel without.
  int32_t grad_norm_kernel = kNoKernel, grad_clip_kernel = kNoKernel;
  // FSDP2's copies (WorkloadSpec::fsdp_version 2), by unit kind; kNoKernel under FSDP1.
  int32_t block_copy_out = kNoKernel, root_copy_out = kNoKernel;
  int32_t block_reduce_copy_in = kNoKernel, root_reduce_copy_in = kNoKernel;
  // FSDP2's accumulation of unsharded gradients in the reduce dtype between
  // reductions (no_sync or a pipeline stage, reduce dtype != compute dtype):
  // the first micro-batch's cast, and each later one's add; else kNoKernel.
  int32_t block_grad_cast = kNoKernel, root_grad_cast = kNoKernel;
  int32_t block_grad_accumulate = kNoKernel, root_grad_accumulate = kNoKernel;
  // DTensor's copy around each TP collective (WorkloadSpec::tp_sequence_dim 1); kNoKernel
  // without TP or with the sequence dim leading.
  int32_t tp_cat_copy = kNoKernel;
  // Async TP (WorkloadSpec::async_tp): by kernel index, its row chunk
  // (kNoKernel for kernels beside no TP collective; empty without async TP),
  // the sum of a reduce-scatter's partials, and one peer's chunk of an
  // activation (the bytes of each copy).
  std::vector<int32_t> tp_chunk;
  int32_t tp_reduce_partials = kNoKernel;
  int64_t tp_chunk_bytes = 0;
  // What a gathered matmul receives per chunk: tp_chunk_bytes, or its FP8
  // half when the inputs are gathered in FP8 (KernelConfig::float8_tp_gather).
  int64_t tp_gather_chunk_bytes = 0;

  int32_t blocks = 0;  // transformer blocks (units 0 .. blocks-1)
  // The stage's chunks of blocks and root parts (one chunk, the whole model,
  // without pipeline parallelism), and its index.
  std::vector<PipelineStage> chunks;
  int64_t stage = 0;
  int64_t pipeline_bytes = 0;  // a send/recv: one micro-batch's activation on one TP rank
  // Context parallelism: one rank's K and V as the ring moves them, and their
  // fp32 gradients (workloads/model/ring_attention.h); 0 with cp 1.
  int64_t cp_kv_bytes = 0, cp_kv_grad_bytes = 0;
  // One block's saved activations, what each activation offload copies
  // (WorkloadSpec::activation_offload_layers); 0 without.
  int64_t offload_bytes = 0;
  int64_t block_bytes = 0;  // unsharded parameter bytes of one block (compute dtype)
  int64_t root_bytes = 0;   // unsharded parameter bytes of the root unit
  // A block's all-gather output: block_bytes, or with the float8 all-gather
  // (WorkloadSpec::float8_all_gather) its linear weights at 1 byte each.
  int64_t block_gather_bytes = 0;
  // Float8 all-gather: the block's weights whose amax each all-gather needs
  // (one all-reduce each, without precomputed scales), and the kernel that
  // precomputes them after the optimizer (float8_precompute_scales; else kNoKernel).
  int32_t float8_weights = 0;
  int32_t float8_amax_kernel = kNoKernel;
  int64_t local_params = 0;  // parameters of this rank's shard (the optimizer's)

  std::vector<Task> tasks;         // host issue order
  std::vector<int32_t> dep_begin;  // CSR offsets, tasks.size() + 1 entries
  std::vector<int32_t> deps;       // ascending within a task
  // The first task of each forward of a micro-batch (a chunk's, under
  // pipeline parallelism), ascending: where the loop's per-micro-batch host
  // work falls (WorkloadSpec::host_per_micro_batch_ns).
  std::vector<int32_t> forward_begins;

  int32_t size() const { return static_cast<int32_t>(tasks.size()); }
  std::span<const int32_t> deps_of(int32_t task) const;
  int64_t unit_bytes(int32_t unit) const { return unit == kRootUnit ? root_bytes : block_bytes; }
  int64_t count(TaskKind kind) const;
};

// The schedule of one rank of `spec` (its strategy, prefetch and
// checkpointing options, grad_accum, dtype, tp and group sizes). Requires a
// spec as read_workload_spec() returns it (positive sizes; invariant check).
FsdpSchedule build_fsdp_schedule(const WorkloadSpec& spec, const FsdpScheduleOptions& options = {});

}  // namespace clustersim::workloads
