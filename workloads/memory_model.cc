#include "workloads/memory_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/check.h"

namespace clustersim::workloads {

namespace {

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

struct RankParams {
  int64_t block = 0;  // one block on one TP rank
  int64_t root = 0;   // embedding, output head, final norm on one TP rank
  int64_t model = 0;  // layers * block + root
};

RankParams rank_params(const WorkloadSpec& w) {
  CLUSTERSIM_CHECK(w.tp >= 1 && w.shard_group_size >= 1,
                   "memory_breakdown needs a WorkloadSpec from read_workload_spec()");
  const ParameterBreakdown p = parameter_breakdown(w.model);
  RankParams r;
  r.block = ceil_div(p.block, w.tp);
  r.root = ceil_div(p.embedding + p.output_head, w.tp) + p.final_norm;
  r.model = w.model.layers * r.block + r.root;
  return r;
}

// 16-bit activation bytes scaled to the compute dtype.
int64_t scaled(const WorkloadSpec& w, int64_t bytes_at_16_bit) {
  return bytes_at_16_bit * dtype_bytes(w.dtype) / 2;
}

}  // namespace

int64_t layer_activation_bytes(const WorkloadSpec& w, const MemoryOptions& options) {
  const int64_t s = w.seq_len;
  const int64_t b = w.local_batch;
  const int64_t h = w.model.hidden;
  const int64_t a = w.model.heads;
  // s*b*h*(34 + 5*a*s/h) = s*b*(34*h + 5*a*s): exact in integers.
  const int64_t per_token = 34 * h + (options.flash_attention ? 0 : 5 * a * s);
  return scaled(w, s * b * per_token / w.tp);
}

int64_t activation_bytes(const WorkloadSpec& w, const MemoryOptions& options) {
  const int64_t s = w.seq_len;
  const int64_t b = w.local_batch;
  const int64_t layers = w.model.layers;
  int64_t stored = 0;
  switch (w.activation_checkpointing) {
    case ActivationCheckpointing::kNone:
      stored = layers * layer_activation_bytes(w, options);
      break;
    case ActivationCheckpointing::kSelective: {
      MemoryOptions flash = options;
      flash.flash_attention = true;
      stored = layers * layer_activation_bytes(w, flash);
      break;
    }
    case ActivationCheckpointing::kFull:
      stored = layers * scaled(w, 2 * s * b * w.model.hidden / w.tp) +
               layer_activation_bytes(w, options);
      break;
  }
  const int64_t logits = s * b * ceil_div(w.model.vocab, w.tp) * (dtype_bytes(w.dtype) + 4);
  return stored + logits;
}

MemoryBreakdown memory_breakdown(const WorkloadSpec& w, const MemoryOptions& options) {
  const RankParams r = rank_params(w);
  const int64_t c = dtype_bytes(w.dtype);
  const int64_t shard = ceil_div(r.model, w.shard_group_size);
  const bool sharded = w.shard_group_size > 1;

  MemoryBreakdown m;
  m.params = c * shard;
  m.grads = c * shard;
  m.optimizer = (w.dtype == Dtype::kFp32 ? 8 : 12) * shard;
  if (w.cpu_offload) {
    m.host_bytes = m.params + m.grads + m.optimizer;
    m.params = m.grads = m.optimizer = 0;
  }

  if (sharded) {
    const bool keep_unsharded =
        w.strategy == ShardingStrategy::kShardGradOp || !w.reshard_after_forward;
    if (keep_unsharded) {
      m.unsharded_params = c * r.model;
    } else {
      const bool prefetch = w.backward_prefetch != BackwardPrefetch::kNone || w.forward_prefetch;
      const int64_t depth = !prefetch ? 0 : (w.limit_all_gathers ? 1 : 2);
      const int64_t in_flight = std::min(w.model.layers, 1 + depth);
      m.unsharded_params = c * (r.root + in_flight * r.block);
    }
    m.comm_buffers = c * r.block;
  }
  m.activations = activation_bytes(w, options);

  const int64_t subtotal = m.total();
  m.reserve = kRuntimeReserveBytes +
              static_cast<int64_t>(std::llround(kFragmentation * static_cast<double>(subtotal)));
  return m;
}

bool fits(const MemoryBreakdown& memory, int64_t capacity_bytes) {
  return memory.total() <= capacity_bytes;
}

}  // namespace clustersim::workloads
