// The data-parallel communication of Megatron-Core's DDP (WorkloadSpec::megatron:
// the distributed optimizer, or plain Megatron DDP; workloads/model/megatron_config.h)
// in a rank's schedule: its gradient buckets, their reductions in the last
// micro-batch's backward, and the distributed optimizer's parameter
// all-gathers.
//
// Buckets (one plan per rank-stage, built once): each chunk of the stage
// (a Megatron model chunk, with its own buffer) lists its FSDP units in the
// order their gradients are final, the order fsdp_schedule.cc reduces them:
// the root first on a last stage without the embedding (the output head),
// the chunk's blocks last to first, the root last in the chunk with the
// embedding. A bucket closes at the first unit that brings it to
// WorkloadSpec::bucket_params parameters of this TP rank, and at the chunk's
// end. Chunks after the first, every chunk of a stage after the first, and
// every chunk without overlap_grad_reduce are one bucket (Megatron turns
// bucketing off there).
//
// Reduction, in the last micro-batch only (earlier ones accumulate into the
// main-grad buffer through the GEMMs, no task): a bucket's reduce-scatter
// over the shard group (DISTRIBUTED_OPTIMIZER, shard group = dp) or
// all-reduce over the replica group (plain DDP) of params x
// dtype_bytes(reduce_dtype) bytes (nccl-tests convention), on Stream::kComm:
//  * overlap_grad_reduce: issued when its closing unit's gradients are
//    ready, behind the backward kernels still to run;
//  * otherwise: every bucket after the step's last backward (Megatron's
//    finish_grad_sync from finalize_model_grads).
//
// Parameter all-gathers (DISTRIBUTED_OPTIMIZER; params x dtype_bytes(dtype)
// bytes over the shard group, Stream::kComm), buckets in forward order
// (chunks in model order, each chunk's buckets reversed):
//  * overlap_param_gather: the step starts with the all-gathers of the
//    previous step's update. The first bucket's is issued before the first
//    forward kernel, which waits for it (exposed); when a bucket's first
//    unit first runs forward (micro-batch 0) the next bucket's all-gather
//    is issued (Megatron's forward pre-hook dispatching
//    next_param_gather_bucket_group; across chunks, the interleaved
//    schedule's param_sync_func one chunk ahead), and the unit's first kernel
//    waits for its own bucket's;
//  * otherwise: every bucket after the optimizer step, which the step's end
//    waits for.
//
// Units: bucket sizes in parameters of this TP rank, task bytes as
// fsdp_schedule.h counts them. Thread safety: one instance per schedule
// being built; not shared.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/model/workload_config.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads {

class MegatronBuckets {
 public:
  static constexpr int32_t kNone = -1;

  struct Bucket {
    int32_t chunk = 0;           // index into FsdpSchedule::chunks
    std::vector<int32_t> units;  // in gradient order; the last closes the bucket
    int64_t params = 0;          // parameters of this TP rank
    // Bytes its parameter all-gather moves: params in the compute dtype, the
    // blocks' linear weights in FP8 with WorkloadSpec::fp8_param_gather.
    int64_t gather_bytes = 0;
  };

  // `schedule`'s kernel table, chunks and unit sizes must be built
  // (build_schedule_tables); `add` adds a task with its dependencies.
  MegatronBuckets(const WorkloadSpec& spec, const FsdpSchedule& schedule, AddTaskFn add);

  const std::vector<Bucket>& buckets() const { return buckets_; }

  // Before `unit`'s first forward kernel of micro-batch `micro_batch`: the
  // all-gather that kernel waits for (kNone: none), issuing it and the next
  // bucket's as the top of this file says.
  int32_t before_forward(int32_t unit, int32_t micro_batch);

  // `unit`'s gradients of the last micro-batch are ready after task
  // `grad_ready`: reduces its bucket if the unit closes it (with
  // overlap_grad_reduce), else keeps it for flush().
  void gradients_ready(int32_t unit, int32_t grad_ready);
  // After the last backward: the buckets not reduced yet.
  void flush();
  // Every reduction issued (the optimizer waits for them all).
  const std::vector<int32_t>& reductions() const { return reductions_; }

  // After the optimizer task `optimizer`: the all-gathers without
  // overlap_param_gather.
  void after_optimizer(int32_t optimizer);

 private:
  int32_t reduce(size_t bucket);
  int32_t gather(size_t forward_index, std::vector<int32_t> deps);

  const WorkloadSpec& spec_;
  const FsdpSchedule& s_;
  AddTaskFn add_;
  std::vector<Bucket> buckets_;              // in gradient order
  std::vector<size_t> forward_;              // bucket indices in forward (all-gather) order
  std::vector<int32_t> bucket_of_;           // by unit slot (unit + 1): its bucket
  std::vector<std::vector<int32_t>> ready_;  // by bucket: its units' gradient tasks so far
  std::vector<bool> reduced_;                // by bucket
  std::vector<int32_t> gathered_;            // by forward index: its all-gather, or kNone
  std::vector<int32_t> reductions_;
};

}  // namespace clustersim::workloads
