// Reading a measured training step from a Kineto trace: the Chrome-trace JSON
// that torch.profiler writes (prof.export_chrome_trace, tensorboard_trace_handler).
//
// What is read, from the top-level object's "traceEvents" array:
//  * complete events ("ph": "X") with "name", "ts" and "dur", times in
//    microseconds (doubles, as Kineto writes them); other phases (metadata
//    "M", flows "s"/"f", instants, counters) are skipped;
//  * GPU work: "cat" "kernel" (classified by name, classify_kernel below)
//    and "gpu_memcpy" / "gpu_memset" (class memory);
//  * steps: "ProfilerStep#<n>" events of "cat" "user_annotation" or "cpu_op"
//    (the CPU-side markers; the GPU-side copy, "gpu_user_annotation", is
//    ignored);
//  * FSDP2's ranges: "X" events named FSDP::... of "cat" "user_annotation"
//    or "cpu_op", by "pid" and "tid" (numbers or strings), for the
//    fsdp_copy class (classify_kernel).
// And from the top-level object, where present, "distributedInfo"'s "rank"
// and "world_size" (non-negative and positive integers).
//
// Attribution of GPU work to a step: kernels run asynchronously, so a
// kernel launched in step n may run after step n's CPU marker ended. A GPU
// event whose args.correlation matches a CPU event's args.correlation (the
// cudaLaunchKernel / cudaMemcpyAsync runtime call: any "X" event that is
// not GPU work and not a "gpu_user_annotation")
// belongs to the step whose marker [ts, ts + dur) holds that launch's ts.
// A GPU event without such a launch belongs to the step whose marker holds
// its own start ts. GPU work in no step (warm-up before the first marker,
// launches outside markers) is counted in KinetoTrace::unattributed_events
// and otherwise ignored.
//
// Per step: the CPU marker's start and duration; the GPU window from the
// first start to the last end of its GPU events; per kernel class the count
// and summed duration; and, because NCCL kernels overlap compute on their
// own stream, the compute busy time: the length of the union of the
// intervals of its kernels that are neither NCCL nor memory copies.
//
// Errors (sim::ConfigError, all reported at once where parsing can go on)
// name file:line:col of the offending value and its JSON path, e.g.
//   trace.json:14:40: error: traceEvents[3].dur: expected a non-negative number of microseconds,
//   found -2
// A trace without ProfilerStep markers is an error ("expected at least one
// ProfilerStep#N event"), as are two markers with the same step number.
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"

namespace clustersim::calibration {

enum class KernelClass {
  kGemm,
  kFlashAttention,
  kNcclAllGather,
  kNcclReduceScatter,
  kNcclAllReduce,
  kNcclOther,
  kOptimizer,
  kElementwise,
  kFsdpCopy,
  kMemory,
  kOther,
};
inline constexpr size_t kKernelClassCount = 11;

// "gemm", "flash_attention", "nccl_all_gather", "nccl_reduce_scatter",
// "nccl_all_reduce", "nccl_other", "optimizer", "elementwise", "fsdp_copy",
// "memory", "other".
std::string_view kernel_class_name(KernelClass c);
bool is_nccl(KernelClass c);

// Classification of a GPU event by category and kernel name; the first rule
// that matches wins, name matches ignore case unless said otherwise:
//  1. category gpu_memcpy or gpu_memset -> memory
//  2. name starts with ncclKernel_ or ncclDevKernel_ (case-sensitive):
//     containing AllGather -> nccl_all_gather, ReduceScatter ->
//     nccl_reduce_scatter, AllReduce -> nccl_all_reduce, else nccl_other
//  3. multi_tensor_apply, adam -> optimizer (fused/foreach Adam(W) steps;
//     checked before GEMM and elementwise since their names contain
//     "vectorized" or "elementwise")
//  4. flash, fmha, attention, and the pre- and post-processing kernels of
//     an attention backward (dot_do_o: rowsum(dO * O); convert_dq: the fp32
//     dQ accumulator to 16 bits; FlashAttention names them flash_bwd_*,
//     cuDNN cudnn::fusion::compute_dot_do_o_* and convert_dq_to_16bits, and
//     the attention microbenchmarks time them with the backward) ->
//     flash_attention (checked before GEMM: cutlass-based attention kernels
//     contain "cutlass")
//  5. gemm, cutlass, sm80_xmma, sm90_xmma, xmma_, nvjet, cublas, triton_tem_
//     (Inductor's matmul templates) -> gemm
//  6. elementwise, vectorized, reduce_kernel, softmax, layer_norm,
//     layernorm, rms, copy, fill, Inductor's fused pointwise and reduction
//     kernels (triton_poi_, triton_red_, triton_per_), and the embedding
//     and loss kernels (index, embedding, grad_weight, sum_and_scatter,
//     radixsort, nll_loss, cross_entropy, chunk_cat, cat_, and the segment
//     scans of the embedding's backward: partial_segment,
//     partials_per_segment, unique_by_key, devicescan, devicecompact), a
//     norm's weight gradient (gammabeta) -> elementwise:
//     the simulator's elementwise, norm, embedding and loss kernels
//  7. anything else -> other
// (classify_kernel sees one event alone. In a trace, GPU work of class
// elementwise, memory or other whose launch lies inside a CPU range named
// FSDP::... on the launching thread (FSDP2's record_function ranges:
// FSDP::pre_forward, FSDP::pre_backward, FSDP::post_backward_reduce, ...) is
// fsdp_copy instead: the casts and copies FSDP2 runs around its
// collectives, which the simulator names fsdp.*.)
KernelClass classify_kernel(std::string_view name, std::string_view category = "kernel");

struct KernelClassTotals {
  int count = 0;
  double duration_us = 0;  // summed kernel durations (overlaps counted twice)
};

struct KinetoStep {
  int64_t number = 0;          // n of ProfilerStep#n
  double cpu_start_us = 0;     // the marker's ts
  double cpu_duration_us = 0;  // the marker's dur
  int gpu_events = 0;          // kernels and memory ops attributed to the step
  double gpu_start_us = 0;     // first GPU event start (0 when gpu_events == 0)
  double gpu_end_us = 0;       // last GPU event end
  double compute_busy_us = 0;  // union of non-NCCL, non-memory kernel intervals
  std::array<KernelClassTotals, kKernelClassCount> by_class{};
  sim::SourceLocation where;  // the marker event

  double gpu_wall_us() const { return gpu_end_us - gpu_start_us; }
  const KernelClassTotals& totals(KernelClass c) const { return by_class[static_cast<size_t>(c)]; }
};

struct KinetoTrace {
  std::string file;
  std::vector<KinetoStep> steps;  // by marker start time
  int unattributed_events = 0;    // GPU events in no step
  // The traced process's rank and the job's world size, from the top-level
  // "distributedInfo" object torch.profiler writes under torch.distributed
  // (absent in a trace of a process without a process group).
  std::optional<int64_t> rank;
  std::optional<int64_t> world_size;
  sim::SourceLocation world_size_where;  // where world_size is in the file
};

// Reads the file at `path`, plain or gzip-compressed (trace.json.gz, told by
// its magic bytes, not its name: config/gzip_text.h); a ConfigError when
// unreadable, corrupt or malformed (JSON positions are in the decompressed text).
KinetoTrace read_kineto_trace(const std::string& path);
// The same for text in memory; `file` is what messages show.
KinetoTrace parse_kineto_trace(std::string_view text, const std::string& file);

}  // namespace clustersim::calibration
