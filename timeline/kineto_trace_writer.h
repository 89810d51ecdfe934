// One traced rank's step in the layout torch.profiler writes (Kineto's
// Chrome-trace JSON, what Holistic Trace Analysis and TensorBoard's profiler
// read), so that a simulated rank opens beside a measured one and
// clustersim's own Kineto reader (calibration/kineto_trace.h) reads it
// back.
//
// Layout: {"schemaVersion": 1, "distributedInfo": {"backend": "nccl",
// "rank", "world_size"}, "traceEvents": [...], "displayTimeUnit": "ms"}.
// The host is process 1 (thread 1 its Python thread); the GPU is process
// `device` (the rank's GPU on its node) with one thread per stream, ids as
// CUDA streams are numbered in traces: compute 7, comm 20, reduce 24, tp 28,
// pcie 32, others 36, 40, ... in order of first appearance. Events:
//  * "ProfilerStep#1" ("cat": "user_annotation") on the host thread over
//    the whole step [0, step_time), the marker torch.profiler's
//    prof.step() writes;
//  * host records (launches) as "cat": "cuda_runtime", CPU-optimizer work as
//    "cat": "cpu_op";
//  * kernels as "cat": "kernel" with args device, stream and the simulator's
//    own name (clustersim_name, clustersim_category), named as the kernels
//    of their class are in real traces, so that Kineto's classifier puts
//    them where the simulator does: gemm "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt",
//    attention "flash_fwd_kernel" / "flash_bwd_kernel" (by phase),
//    optimizer "multi_tensor_apply_kernel", elementwise, norm, embedding and
//    loss "vectorized_elementwise_kernel", anything else "clustersim_kernel";
//  * collectives as NCCL names its kernels, ncclDevKernel_<Op>_<ALGO>_<PROTO>
//    (AllGather, ReduceScatter, AllReduce, Broadcast, SendRecv; RING and
//    SIMPLE when the record has no algorithm), from this rank's arrival
//    (a real NCCL kernel spins until its peers join) to its end;
//  * FSDP2's copies (kernels named fsdp.*) with what torch.profiler records
//    around them: an "FSDP::<name>" user_annotation on the host thread over
//    the kernel's time and a zero-length cudaLaunchKernel inside it whose
//    args.correlation the kernel carries, so that the reader classes them
//    fsdp_copy as it does FSDP2's copies in a real trace;
//  * PCIe copies as "cat": "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)" or
//    "Memcpy DtoH (Device -> Pinned)".
// Times in microseconds, written exactly to the nanosecond.
//
// Determinism: the output depends only on the inputs. Thread safety: a pure
// function; writes only to `out`.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>

#include "exec/step_result.h"
#include "sim/sim_time.h"

namespace clustersim::workloads {

struct KinetoRank {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t device = 0;  // the rank's GPU on its node
  sim::SimTime step_time;
};

// Writes the records of `rank.rank` (records of other ranks are skipped).
void write_kineto_trace(std::span<const TraceRecord> records, const KinetoRank& rank,
                        std::ostream& out);

}  // namespace clustersim::workloads
