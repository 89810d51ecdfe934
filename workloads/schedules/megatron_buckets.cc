#include "workloads/schedules/megatron_buckets.h"

#include <string>
#include <utility>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

size_t slot(int32_t unit) { return static_cast<size_t>(unit + 1); }

}  // namespace

MegatronBuckets::MegatronBuckets(const WorkloadSpec& spec, const FsdpSchedule& schedule,
                                 AddTaskFn add)
    : spec_(spec), s_(schedule), add_(std::move(add)) {
  CLUSTERSIM_CHECK(spec.megatron && spec.bucket_params > 0 && !schedule.chunks.empty(),
                   "MegatronBuckets needs a Megatron spec and the schedule's tables");
  const int64_t elem = dtype_bytes(spec.dtype);
  const bool stage_has_embedding = s_.chunks.front().has_embedding;
  for (size_t c = 0; c < s_.chunks.size(); ++c) {
    const PipelineStage& st = s_.chunks[c];
    // The order fsdp_schedule.cc finishes the chunk's gradients in.
    std::vector<int32_t> order;
    if (st.has_head && !stage_has_embedding) order.push_back(kRootUnit);
    for (auto b = static_cast<int32_t>(st.end_block - 1); b >= st.first_block; --b) {
      order.push_back(b);
    }
    if (st.has_embedding) order.push_back(kRootUnit);
    // Megatron buckets the first chunk of the first stage only, and only
    // when it overlaps the reduction (distributed_data_parallel.py).
    const bool bucketed = spec.overlap_grad_reduce && s_.stage == 0 && c == 0;
    Bucket open;
    open.chunk = static_cast<int32_t>(c);
    for (const int32_t unit : order) {
      open.units.push_back(unit);
      open.params += s_.unit_bytes(unit) / elem;
      open.gather_bytes += unit == kRootUnit ? s_.root_bytes : s_.block_gather_bytes;
      if (bucketed && open.params >= spec.bucket_params) {
        buckets_.push_back(std::move(open));
        open = Bucket{};
        open.chunk = static_cast<int32_t>(c);
      }
    }
    if (!open.units.empty()) buckets_.push_back(std::move(open));
  }
  bucket_of_.assign(static_cast<size_t>(s_.blocks) + 1, kNone);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for (const int32_t unit : buckets_[b].units) bucket_of_[slot(unit)] = static_cast<int32_t>(b);
  }
  // Forward order: chunks in model order, each chunk's buckets reversed.
  for (size_t c = 0; c < s_.chunks.size(); ++c) {
    for (size_t b = buckets_.size(); b-- > 0;) {
      if (buckets_[b].chunk == static_cast<int32_t>(c)) forward_.push_back(b);
    }
  }
  ready_.resize(buckets_.size());
  reduced_.assign(buckets_.size(), false);
  gathered_.assign(forward_.size(), kNone);
}

int32_t MegatronBuckets::gather(size_t forward_index, std::vector<int32_t> deps) {
  const Bucket& b = buckets_[forward_[forward_index]];
  Task t;
  t.kind = TaskKind::kAllGather;
  t.stream = Stream::kComm;
  t.phase = deps.empty() ? Phase::kForward : Phase::kOptimizer;
  t.unit = b.units.back();  // the bucket's first unit in forward order
  t.micro_batch = deps.empty() ? 0 : static_cast<int32_t>(spec_.grad_accum - 1);
  t.bytes = b.gather_bytes;
  t.group = GroupRole::kShard;
  gathered_[forward_index] = add_(t, std::move(deps));
  return gathered_[forward_index];
}

int32_t MegatronBuckets::before_forward(int32_t unit, int32_t micro_batch) {
  const bool overlapped =
      spec_.strategy == ShardingStrategy::kDistributedOptimizer && spec_.overlap_param_gather;
  if (!overlapped || micro_batch != 0) return kNone;
  const int32_t bucket = bucket_of_[slot(unit)];
  CLUSTERSIM_CHECK(bucket != kNone,
                   "unit " + std::to_string(unit) + " is in no bucket of its stage");
  size_t at = 0;
  while (forward_[at] != static_cast<size_t>(bucket)) ++at;
  // The buckets before it are gathered first (a unit used out of order
  // waits behind them on the communicator).
  for (size_t i = 0; i <= at; ++i) {
    if (gathered_[i] == kNone) gather(i, {});
  }
  if (at + 1 < forward_.size() && gathered_[at + 1] == kNone) gather(at + 1, {});
  return gathered_[at];
}

int32_t MegatronBuckets::reduce(size_t bucket) {
  const Bucket& b = buckets_[bucket];
  const bool distributed = spec_.strategy == ShardingStrategy::kDistributedOptimizer;
  Task t;
  t.kind = distributed ? TaskKind::kReduceScatter : TaskKind::kAllReduce;
  t.stream = Stream::kComm;
  t.phase = Phase::kBackward;
  t.unit = b.units.back();
  t.micro_batch = static_cast<int32_t>(spec_.grad_accum - 1);
  t.bytes = b.params * dtype_bytes(spec_.reduce_dtype);
  t.group = distributed ? GroupRole::kShard : GroupRole::kReplica;
  reduced_[bucket] = true;
  const int32_t r = add_(t, ready_[bucket]);
  reductions_.push_back(r);
  return r;
}

void MegatronBuckets::gradients_ready(int32_t unit, int32_t grad_ready) {
  const auto bucket = static_cast<size_t>(bucket_of_[slot(unit)]);
  ready_[bucket].push_back(grad_ready);
  if (spec_.overlap_grad_reduce && unit == buckets_[bucket].units.back()) reduce(bucket);
}

void MegatronBuckets::flush() {
  for (size_t b = 0; b < buckets_.size(); ++b) {
    if (!reduced_[b]) reduce(b);
  }
}

void MegatronBuckets::after_optimizer(int32_t optimizer) {
  if (spec_.strategy != ShardingStrategy::kDistributedOptimizer || spec_.overlap_param_gather) {
    return;
  }
  for (size_t i = 0; i < forward_.size(); ++i) gather(i, {optimizer});
}

}  // namespace clustersim::workloads
