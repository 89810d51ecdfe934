#include "workloads/schedules/optimizer_tasks.h"

#include <utility>

namespace clustersim::workloads {

namespace {

constexpr int64_t kAmaxBytes = 4;  // one fp32 amax
constexpr int64_t kNormBytes = 4;  // the fp32 sum of squares of the local gradients

// Gradient-norm clipping before the optimizer (fsdp_schedule.h): the local
// norm, its all-reduce over the ranks that hold other shards, the scaling.
int32_t clip_gradients(const WorkloadSpec& spec, const FsdpSchedule& s, const AddTaskFn& add,
                       const Task& optimizer, std::vector<int32_t> ready) {
  Task k = optimizer;
  k.kind = TaskKind::kKernel;
  k.stream = Stream::kCompute;
  k.kernel = s.grad_norm_kernel;
  k.bytes = 0;
  int32_t last = add(k, std::move(ready));
  // On the communicators of those groups: the data-parallel one's and TP's.
  std::vector<std::pair<GroupRole, Stream>> groups;
  if (spec.strategy != ShardingStrategy::kNoShard && spec.shard_group_size > 1) {
    groups.emplace_back(GroupRole::kShard, Stream::kComm);
  }
  if (spec.tp > 1) groups.emplace_back(GroupRole::kTp, Stream::kTp);
  if (spec.pp > 1) groups.emplace_back(GroupRole::kPp, Stream::kComm);
  for (const auto& [g, stream] : groups) {
    Task all = optimizer;
    all.kind = TaskKind::kAllReduce;
    all.stream = stream;
    all.kernel = kNoKernel;
    all.group = g;
    all.bytes = kNormBytes;
    last = add(all, {last});
  }
  k.kernel = s.grad_clip_kernel;
  return add(k, {last});
}

}  // namespace

int32_t add_optimizer_tasks(const WorkloadSpec& spec, const FsdpSchedule& s, const AddTaskFn& add,
                            std::vector<int32_t> ready) {
  Task t;
  t.kind = spec.cpu_offload ? TaskKind::kCpuOptimizer : TaskKind::kOptimizer;
  t.stream = spec.cpu_offload ? Stream::kCpu : Stream::kCompute;
  t.phase = Phase::kOptimizer;
  t.unit = kWholeModel;
  t.micro_batch = static_cast<int32_t>(spec.grad_accum - 1);
  t.kernel = spec.cpu_offload ? kNoKernel : s.optimizer_kernel;
  t.bytes = spec.cpu_offload ? s.local_params : 0;
  if (s.grad_norm_kernel != kNoKernel) ready = {clip_gradients(spec, s, add, t, std::move(ready))};
  const int32_t step = add(t, std::move(ready));
  if (s.float8_amax_kernel != kNoKernel) {
    // Next step's FP8 scales: the local shards' amaxes, then one all-reduce.
    Task k = t;
    k.kind = TaskKind::kKernel;
    k.stream = Stream::kCompute;
    k.kernel = s.float8_amax_kernel;
    k.bytes = 0;
    const int32_t amax = add(k, {step});
    Task all = t;
    all.kind = TaskKind::kAllReduce;
    all.stream = Stream::kComm;
    all.kernel = kNoKernel;
    all.group = GroupRole::kShard;
    all.bytes = kAmaxBytes * s.blocks * s.float8_weights;
    add(all, {amax});
  }
  return step;
}

}  // namespace clustersim::workloads
