#include "workloads/schedules/fsdp_schedule.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "sim/check.h"
#include "workloads/model/model_spec.h"
#include "workloads/schedules/async_tp_tasks.h"
#include "workloads/schedules/megatron_buckets.h"
#include "workloads/schedules/optimizer_tasks.h"
#include "workloads/schedules/ring_attention_tasks.h"
#include "workloads/schedules/schedule_tables.h"

namespace clustersim::workloads {

namespace {

constexpr int32_t kNone = -1;
constexpr int64_t kAmaxBytes = 4;  // one fp32 amax

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

class Builder {
 public:
  Builder(const WorkloadSpec& spec, const FsdpScheduleOptions& options, FsdpSchedule& s)
      : spec_(spec), opt_(options), s_(s) {
    const auto units = static_cast<size_t>(s_.blocks) + 1;
    // Megatron's DDP keeps every parameter whole: nothing for FSDP to gather.
    gathered_.assign(units, spec_.strategy == ShardingStrategy::kNoShard || spec_.megatron);
    last_ag_.assign(units, kNone);
    copied_ag_.assign(units, kNone);
    final_reduction_.assign(units, kNone);
    s_.dep_begin.push_back(0);
    if (spec_.cp > 1) {
      ring_.emplace(spec_, s_, add_fn_);
    }
    if (spec_.megatron) megatron_.emplace(spec_, s_, add_fn_);
  }

  void build() {
    const int32_t mbs = static_cast<int32_t>(spec_.grad_accum);
    if (pipelined()) {
      for (const PipelineWork& w : pipeline_order(spec_.pipeline_schedule, spec_.pp,
                                                  spec_.virtual_stages, s_.stage, mbs)) {
        mb_ = w.micro_batch;
        chunk_ = w.chunk;
        const bool last = w.micro_batch == mbs - 1;
        switch (w.kind) {
          case PipelineWorkKind::kForward:
            forward();
            break;
          case PipelineWorkKind::kBackward:
            backward(last);
            break;
          case PipelineWorkKind::kBackwardInput:
            backward_input();
            break;
          case PipelineWorkKind::kBackwardWeight:
            backward_weight(last);
            break;
        }
      }
    } else {
      for (int32_t mb = 0; mb < mbs; ++mb) {
        mb_ = mb;
        forward();
        backward(mb == mbs - 1);
      }
    }
    if (megatron_) megatron_->flush();
    std::vector<int32_t> d;
    for (const int32_t r : final_reduction_) {
      if (r != kNone) d.push_back(r);
    }
    if (megatron_) {
      const std::vector<int32_t>& buckets = megatron_->reductions();
      d.insert(d.end(), buckets.begin(), buckets.end());
    }
    const int32_t step = add_optimizer_tasks(spec_, s_, add_fn_, std::move(d));
    if (megatron_) megatron_->after_optimizer(step);
  }

 private:
  static size_t slot(int32_t unit) { return static_cast<size_t>(unit + 1); }
  bool sharded() const { return spec_.strategy != ShardingStrategy::kNoShard; }
  bool pipelined() const { return spec_.pp > 1; }
  // Gradients reduced on the last micro-batch only: no_sync, or a pipeline stage.
  bool no_sync() const { return opt_.no_sync || pipelined(); }
  bool reshard_after_forward() const {
    return (spec_.strategy == ShardingStrategy::kFullShard ||
            spec_.strategy == ShardingStrategy::kHybridShard) &&
           spec_.reshard_after_forward && !pipelined();
  }
  const PipelineStage& chunk() const { return s_.chunks[static_cast<size_t>(chunk_)]; }
  bool has_embedding() const { return s_.chunks.front().has_embedding; }
  bool has_head() const { return s_.chunks.back().has_head; }
  bool on_stage(int32_t unit) const {
    if (unit == kRootUnit) return has_embedding() || has_head();
    for (const PipelineStage& c : s_.chunks) {
      if (unit >= c.first_block && unit < c.end_block) return true;
    }
    return false;
  }
  // The stage of the chunk before and after the current one, relative.
  int32_t stage_of_chunk(int64_t chunk) const {
    return static_cast<int32_t>(rank_of_chunk(spec_.pipeline_schedule, spec_.pp, chunk) -
                                s_.stage);
  }
  int32_t previous_stage() const { return stage_of_chunk(chunk().index - 1); }
  int32_t next_stage() const { return stage_of_chunk(chunk().index + 1); }

  // A pipeline send or receive of the current micro-batch: to or from the
  // next stage (+1) or the previous one (-1), after `after` (kNone: nothing).
  int32_t p2p(TaskKind kind, int32_t peer_stage, Phase phase, int32_t after) {
    Task t;
    t.kind = kind;
    const bool activation = phase == Phase::kForward;
    t.stream = kind == TaskKind::kSend
                   ? (activation ? Stream::kPpSendActivation : Stream::kPpSendGradient)
                   : (activation ? Stream::kPpRecvActivation : Stream::kPpRecvGradient);
    t.phase = phase;
    // Forward sends and backward receives are at the chunk's output end.
    const bool downstream = (phase == Phase::kForward) == (kind == TaskKind::kSend);
    t.unit = static_cast<int32_t>(downstream ? chunk().end_block - 1 : chunk().first_block);
    t.micro_batch = mb_;
    t.bytes = s_.pipeline_bytes;
    t.peer_stage = peer_stage;
    std::vector<int32_t> d;
    if (after != kNone) d.push_back(after);
    return add(t, d);
  }

  int32_t add(Task t, std::vector<int32_t> d) {
    const int32_t index = s_.size();
    // A send or receive waits only for its own channel's earlier ones (the
    // compiled program gives each channel a stream of its own).
    if (t.kind != TaskKind::kSend && t.kind != TaskKind::kRecv) {
      int32_t& prev = last_on_[static_cast<size_t>(t.stream)];
      if (prev != kNone) d.push_back(prev);
      prev = index;
    }
    if (t.host_wait != kNoHostWait) d.push_back(t.host_wait);
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    for (const int32_t x : d) {
      CLUSTERSIM_CHECK(x >= 0 && x < index, "dependency " + std::to_string(x) + " of task " +
                                                std::to_string(index) + " is not earlier");
    }
    s_.tasks.push_back(t);
    s_.deps.insert(s_.deps.end(), d.begin(), d.end());
    s_.dep_begin.push_back(static_cast<int32_t>(s_.deps.size()));
    return index;
  }

  // All-gathers `unit` unless gathered already (or out of range); under
  // Megatron's distributed optimizer, the step's first use of its bucket.
  void ensure_gathered(int32_t unit, Phase phase) {
    if (unit < kRootUnit || unit >= s_.blocks || !on_stage(unit)) return;
    if (megatron_ && phase == Phase::kForward) {
      const int32_t ag = megatron_->before_forward(unit, mb_);
      if (ag != kNone) last_ag_[slot(unit)] = ag;
    }
    if (gathered_[slot(unit)]) return;
    Task t;
    t.kind = TaskKind::kAllGather;
    t.stream = Stream::kComm;
    t.phase = phase;
    t.unit = unit;
    t.micro_batch = mb_;
    t.bytes = unit == kRootUnit ? s_.root_bytes : s_.block_gather_bytes;
    t.group = GroupRole::kShard;
    if (spec_.limit_all_gathers && spec_.fsdp_version == 1) {
      // FSDP1's rate limiter (torch/distributed/fsdp/_limiter_utils.py,
      // _FreeEventQueue, and _unshard in _runtime_utils.py): every unshard
      // first takes the oldest recorded free event off the queue and
      // synchronises on it once two or more are queued; every reshard that
      // frees records one. It counts frees, not buffers.
      if (free_events_.size() >= 2) {
        t.host_wait = free_events_.front();
        free_events_.pop_front();
      }
    } else if (spec_.limit_all_gathers && unit != kRootUnit) {
      // Wait for the oldest live buffer's free while two are live; stop at
      // one not freed yet (there is no event to wait on).
      while (live_.size() >= 2) {
        const auto it = free_of_.find(live_.front());
        if (it == free_of_.end()) break;
        t.host_wait = it->second;
        free_of_.erase(it);
        live_.pop_front();
      }
    }
    std::vector<int32_t> d;
    if (spec_.cpu_offload && sharded()) {
      Task copy;
      copy.kind = TaskKind::kCopyToDevice;
      copy.stream = Stream::kCopy;
      copy.phase = phase;
      copy.unit = unit;
      copy.micro_batch = mb_;
      copy.bytes = ceil_div(s_.unit_bytes(unit), spec_.shard_group_size);
      d.push_back(add(copy, {}));
    }
    if (unit != kRootUnit && spec_.float8_all_gather && !spec_.float8_precompute_scales) {
      // The weights' global amaxes, before the FP8 cast of the shards.
      for (int32_t w = 0; w < s_.float8_weights; ++w) {
        Task amax = t;
        amax.kind = TaskKind::kAllReduce;
        amax.bytes = kAmaxBytes;
        amax.host_wait = w == 0 ? t.host_wait : kNoHostWait;
        add(amax, w == 0 ? d : std::vector<int32_t>{});
      }
      t.host_wait = kNoHostWait;
      d.clear();
    }
    const int32_t index = add(t, d);
    last_ag_[slot(unit)] = index;
    gathered_[slot(unit)] = true;
    if (unit != kRootUnit) live_.push_back(index);
  }

  void free_unit(int32_t unit, Phase phase) {
    if (!gathered_[slot(unit)] || !sharded() || megatron_) return;
    Task t;
    t.kind = TaskKind::kFree;
    t.phase = phase;
    t.unit = unit;
    t.micro_batch = mb_;
    const int32_t index = add(t, {});
    gathered_[slot(unit)] = false;
    if (spec_.fsdp_version == 1) free_events_.push_back(index);
    const int32_t ag = last_ag_[slot(unit)];
    if (unit != kRootUnit && std::find(live_.begin(), live_.end(), ag) != live_.end()) {
      free_of_[ag] = index;
    }
  }

  // Kernels on the compute stream; the first waits for the unit's all-gather.
  // With tp > 1, block kernels are interleaved with their TP collectives.
  int32_t kernels(int32_t unit, Phase phase, std::span<const int32_t> indices) {
    // A receive the first kernel (or the TP collective before it) waits for.
    const int32_t received = first_kernel_waits_for_;
    first_kernel_waits_for_ = kNone;
    int32_t last = kNone;
    int32_t tp_wait = kNone;  // a TP collective the next kernel waits for
    for (size_t i = 0; i < indices.size(); ++i) {
      const std::string_view name = s_.kernels[static_cast<size_t>(indices[i])].name;
      const bool tp = spec_.tp > 1 && unit != kRootUnit;
      const bool async = tp && spec_.async_tp;  // TP's collectives fused into the GEMMs
      if (tp && !async && tp_before(name) != TaskKind::kKernel) {
        tp_wait = tp_collective(unit, phase, tp_before(name), i == 0 ? received : last);
        // DTensor gathers along the sequence dim: a cat of the chunks.
        if (s_.tp_cat_copy != kNoKernel) {
          last = add(kernel_task(unit, phase, s_.tp_cat_copy), {tp_wait});
          tp_wait = kNone;
        }
      }
      const Task t = kernel_task(unit, phase, indices[i]);
      std::vector<int32_t> d;
      const int32_t ring_wait = ring_ ? ring_->before(name) : kNone;
      if (ring_wait != kNone) d.push_back(ring_wait);
      if (i == 0 && last_ag_[slot(unit)] != kNone) d.push_back(last_ag_[slot(unit)]);
      if (i == 0 && received != kNone) d.push_back(received);
      if (i == 0 && compute_waits_for_ != kNone) d.push_back(std::exchange(compute_waits_for_, kNone));
      if (i == 0) copy_out(unit, phase);
      if (tp_wait != kNone) d.push_back(tp_wait);
      tp_wait = kNone;
      if (async && tp_before(name) != TaskKind::kKernel) {
        last = add_gathered_matmul(s_, spec_.tp, t, d, i == 0 ? received : last, add_fn_);
        continue;
      }
      if (async && tp_after(name) != TaskKind::kKernel) {
        last = add_scattered_matmul(s_, spec_.tp, t, d, add_fn_);
        continue;
      }
      last = add(t, d);
      if (ring_) ring_->after(name, t, last);
      if (tp && !async && tp_after(name) != TaskKind::kKernel) {
        // ... and scatters along it: the chunks concatenated first.
        if (s_.tp_cat_copy != kNoKernel) last = add(kernel_task(unit, phase, s_.tp_cat_copy), {});
        tp_wait = tp_collective(unit, phase, tp_after(name), last);
      }
    }
    if (tp_wait != kNone) last = tp_wait;
    return last;
  }

  // FSDP2's copy of the unit's latest all-gather output into its
  // parameters, once per all-gather, before the first kernel that reads it.
  void copy_out(int32_t unit, Phase phase) {
    const int32_t ag = last_ag_[slot(unit)];
    const int32_t kernel = unit == kRootUnit ? s_.root_copy_out : s_.block_copy_out;
    if (ag == kNone || copied_ag_[slot(unit)] == ag || kernel == kNoKernel) return;
    copied_ag_[slot(unit)] = ag;
    add(kernel_task(unit, phase, kernel), {ag});
  }

  Task kernel_task(int32_t unit, Phase phase, int32_t kernel) const {
    Task t;
    t.kind = TaskKind::kKernel;
    t.phase = phase;
    t.unit = unit;
    t.micro_batch = mb_;
    t.kernel = kernel;
    return t;
  }

  static TaskKind tp_before(std::string_view name) { return tp_collective_before(name); }
  static TaskKind tp_after(std::string_view name) { return tp_collective_after(name); }

  int32_t tp_collective(int32_t unit, Phase phase, TaskKind kind, int32_t after) {
    Task t;
    t.kind = kind;
    t.stream = Stream::kTp;
    t.group = GroupRole::kTp;
    t.phase = phase;
    t.unit = unit;
    t.micro_batch = mb_;
    t.bytes = spec_.rank_tokens() * spec_.model.hidden * dtype_bytes(spec_.dtype);
    std::vector<int32_t> d;
    if (after != kNone) d.push_back(after);
    return add(t, d);
  }

  static std::vector<int32_t> range(KernelRange r) {
    std::vector<int32_t> v(static_cast<size_t>(r.count));
    for (int32_t i = 0; i < r.count; ++i) v[static_cast<size_t>(i)] = r.begin + i;
    return v;
  }

  void forward() {
    // Forward order: root (embedding), the chunk's blocks, then the head (root).
    s_.forward_begins.push_back(s_.size());
    const PipelineStage& st = chunk();
    if (st.has_embedding || st.has_head) {
      ensure_gathered(kRootUnit, Phase::kForward);
      if (spec_.forward_prefetch) ensure_gathered(static_cast<int32_t>(st.first_block), Phase::kForward);
      if (st.has_embedding) kernels(kRootUnit, Phase::kForward, range(s_.embedding_forward));
    }
    if (pipelined() && !st.has_embedding) {
      first_kernel_waits_for_ = p2p(TaskKind::kRecv, previous_stage(), Phase::kForward, kNone);
    }
    int32_t last = kNone;
    for (auto unit = static_cast<int32_t>(st.first_block); unit < st.end_block; ++unit) {
      ensure_gathered(unit, Phase::kForward);
      if (spec_.forward_prefetch) ensure_gathered(unit + 1, Phase::kForward);
      wait_for_offload(unit);
      last = kernels(unit, Phase::kForward,
                     range(mb_ == 0 ? s_.block_forward_first : s_.block_forward));
      offload(unit, last);
      if (reshard_after_forward()) free_unit(unit, Phase::kForward);
    }
    if (st.has_head) {
      kernels(kRootUnit, Phase::kForward, range(s_.head_forward));
    } else {
      p2p(TaskKind::kSend, next_stage(), Phase::kForward, last);
    }
  }

  void prefetch_backward(int32_t next) {
    if (next >= kRootUnit) ensure_gathered(next, Phase::kBackward);
  }

  void reduce(int32_t unit, int32_t grad_ready, bool last_mb) {
    if (megatron_) {
      // Earlier micro-batches accumulate into the main-grad buffer.
      if (last_mb) megatron_->gradients_ready(unit, grad_ready);
      return;
    }
    const int32_t cast = unit == kRootUnit ? s_.root_grad_cast : s_.block_grad_cast;
    if (cast != kNoKernel && spec_.grad_accum > 1 && no_sync() && (mb_ > 0 || !last_mb)) {
      const int32_t add_in = unit == kRootUnit ? s_.root_grad_accumulate : s_.block_grad_accumulate;
      grad_ready = add(kernel_task(unit, Phase::kBackward, mb_ == 0 ? cast : add_in), {grad_ready});
    }
    if (!last_mb && no_sync()) return;
    if (pipelined() && !spec_.reduce_during_last_backward) {
      deferred_.emplace_back(unit, grad_ready);  // reduced by post_backward()
      return;
    }
    reduce_now(unit, grad_ready, kNone, last_mb);
  }

  // torch.distributed.pipelining with FSDP2 (stage.py,
  // backward_maybe_with_nosync) runs FSDP's post-backward only after a
  // stage's last backward: every unit's in module order (the root, then the
  // blocks), each copy-in waiting for the previous unit's reduce-scatter
  // (FSDP2's reduce_scatter_state), and then the compute stream waits for
  // them all (_root_post_backward_final_callback).
  void post_backward() {
    std::sort(deferred_.begin(), deferred_.end());
    int32_t previous = kNone;
    for (const auto& [unit, grad_ready] : deferred_) {
      previous = reduce_now(unit, grad_ready, previous, true);
      compute_waits_for_ = final_reduction_[slot(unit)];
    }
    deferred_.clear();
  }

  // The unit's gradient reduction once grad_ready (and `previous`) are done;
  // returns its reduce-scatter (or all-reduce).
  int32_t reduce_now(int32_t unit, int32_t grad_ready, int32_t previous, bool last_mb) {
    const auto and_previous = [&previous](int32_t d) {
      return previous == kNone ? std::vector<int32_t>{d} : std::vector<int32_t>{d, previous};
    };
    const Stream stream = opt_.separate_reduce_stream ? Stream::kReduce : Stream::kComm;
    const int64_t elem = dtype_bytes(spec_.dtype);
    const int64_t reduce_elem = dtype_bytes(spec_.reduce_dtype);
    const int64_t params_bytes = s_.unit_bytes(unit) / elem * reduce_elem;
    const int32_t copy_in = unit == kRootUnit ? s_.root_reduce_copy_in : s_.block_reduce_copy_in;
    if (sharded() && copy_in != kNoKernel) {
      grad_ready = add(kernel_task(unit, Phase::kBackward, copy_in), and_previous(grad_ready));
      previous = kNone;
    }
    Task t;
    t.stream = stream;
    t.phase = Phase::kBackward;
    t.unit = unit;
    t.micro_batch = mb_;
    int32_t r = kNone;
    int32_t reduced = kNone;
    if (!sharded()) {
      t.kind = TaskKind::kAllReduce;
      t.group = GroupRole::kReplica;
      t.bytes = params_bytes;
      r = add(t, and_previous(grad_ready));
      reduced = r;
    } else {
      t.kind = TaskKind::kReduceScatter;
      t.group = GroupRole::kShard;
      t.bytes = params_bytes;
      r = add(t, and_previous(grad_ready));
      reduced = r;
      if (spec_.strategy == ShardingStrategy::kHybridShard) {
        t.kind = TaskKind::kAllReduce;
        t.group = GroupRole::kReplica;
        t.bytes = ceil_div(params_bytes / reduce_elem, spec_.shard_group_size) * reduce_elem;
        r = add(t, {r});
      }
    }
    if (last_mb && spec_.cpu_offload) {
      Task copy;
      copy.kind = TaskKind::kCopyToHost;
      copy.stream = Stream::kCopy;
      copy.phase = Phase::kBackward;
      copy.unit = unit;
      copy.micro_batch = mb_;
      copy.bytes = sharded() ? ceil_div(params_bytes, spec_.shard_group_size) : params_bytes;
      r = add(copy, {r});
    }
    if (last_mb) final_reduction_[slot(unit)] = r;
    return reduced;
  }

  void backward(bool last_mb) {
    // Backward order: head (root), the chunk's blocks last to first, embedding (root).
    const PipelineStage& st = chunk();
    // A pipeline stage keeps its units gathered until its last backward.
    const bool free_after =
        sharded() && (last_mb || (!pipelined() && (!opt_.no_sync ||
                                                   spec_.strategy != ShardingStrategy::kShardGradOp)));
    const BackwardPrefetch pf = spec_.backward_prefetch;
    const auto first = static_cast<int32_t>(st.first_block);
    // Head: the root is gathered; its pre-backward prefetches the stage's last block.
    if (pf == BackwardPrefetch::kBackwardPre) prefetch_backward(static_cast<int32_t>(st.end_block - 1));
    if (st.has_head) {
      const int32_t head_ready = kernels(kRootUnit, Phase::kBackward, range(s_.head_backward));
      if (!has_embedding()) {
        // The last stage's root is the head alone: done with it now.
        if (free_after) free_unit(kRootUnit, Phase::kBackward);
        reduce(kRootUnit, head_ready, last_mb);
      }
    } else {
      first_kernel_waits_for_ = p2p(TaskKind::kRecv, next_stage(), Phase::kBackward, kNone);
    }
    for (auto b = static_cast<int32_t>(st.end_block - 1); b >= first; --b) {
      const int32_t next = b - 1;  // kRootUnit after block 0: gathered already
      reload_for(b);
      ensure_gathered(b, Phase::kBackward);
      if (pf == BackwardPrefetch::kBackwardPre) prefetch_backward(next);
      recompute(b);
      const int32_t grad_ready = kernels(b, Phase::kBackward, range(s_.block_backward));
      if (b == first && !st.has_embedding) {
        p2p(TaskKind::kSend, previous_stage(), Phase::kBackward, grad_ready);
      }
      if (free_after) free_unit(b, Phase::kBackward);
      if (pf == BackwardPrefetch::kBackwardPost) prefetch_backward(next);
      reduce(b, grad_ready, last_mb);
    }
    if (st.has_embedding) embedding_backward(free_after, last_mb);
    if (last_mb && pipelined()) post_backward();
  }

  // Activation offload (the header): the copies of the blocks' activations
  // to the host and back, and the waits for them.
  int32_t offloaded_blocks() const { return spec_.activation_offload_layers; }
  int32_t copy_activations(TaskKind kind, int32_t block, Phase phase, int32_t after) {
    Task t;
    t.kind = kind;
    t.stream = Stream::kCopy;
    t.phase = phase;
    t.unit = block;
    t.micro_batch = mb_;
    t.bytes = s_.offload_bytes;
    return add(t, {after});
  }
  void offload(int32_t block, int32_t forward_done) {
    if (block >= offloaded_blocks()) return;
    offloaded_[static_cast<size_t>(block)] =
        copy_activations(TaskKind::kCopyToHost, block, Phase::kForward, forward_done);
  }
  void wait_for_offload(int32_t block) {
    const int32_t i = block - (s_.blocks - offloaded_blocks());
    if (offloaded_blocks() == 0 || i < 0) return;
    CLUSTERSIM_CHECK(compute_waits_for_ == kNone, "activation offload runs without pipelining");
    compute_waits_for_ = offloaded_[static_cast<size_t>(i)];
  }
  // Before block b's backward: start the copy back of block
  // b - (L - 1 - n), and wait for block b's own.
  void reload_for(int32_t block) {
    if (offloaded_blocks() == 0) return;
    const int32_t i = block - (s_.blocks - 1 - offloaded_blocks());
    if (i >= 0 && i < offloaded_blocks()) {
      const int32_t compute = last_on_[static_cast<size_t>(Stream::kCompute)];
      reloaded_[static_cast<size_t>(i)] =
          copy_activations(TaskKind::kCopyToDevice, i, Phase::kBackward, compute);
    }
    if (block < offloaded_blocks()) {
      CLUSTERSIM_CHECK(compute_waits_for_ == kNone, "activation offload runs without pipelining");
      compute_waits_for_ = reloaded_[static_cast<size_t>(block)];
    }
  }

  void recompute(int32_t block) {
    if (s_.recompute.empty()) return;
    // Recomputation needs no gradient: only the backward kernels wait for it.
    const int32_t waits = first_kernel_waits_for_;
    first_kernel_waits_for_ = kNone;
    kernels(block, Phase::kRecompute, s_.recompute);
    first_kernel_waits_for_ = waits;
  }

  void embedding_backward(bool free_after, bool last_mb) {
    ensure_gathered(kRootUnit, Phase::kBackward);
    const int32_t grad_ready = kernels(kRootUnit, Phase::kBackward, range(s_.embedding_backward));
    if (free_after) free_unit(kRootUnit, Phase::kBackward);
    reduce(kRootUnit, grad_ready, last_mb);
  }

  // Zero bubble: the current chunk's backward up to the gradient of its
  // input, which goes to the previous stage.
  void backward_input() {
    const PipelineStage& st = chunk();
    const BackwardPrefetch pf = spec_.backward_prefetch;
    if (pf == BackwardPrefetch::kBackwardPre) prefetch_backward(static_cast<int32_t>(st.end_block - 1));
    if (st.has_head) {
      kernels(kRootUnit, Phase::kBackward, s_.head_input_grad);
    } else {
      first_kernel_waits_for_ = p2p(TaskKind::kRecv, next_stage(), Phase::kBackward, kNone);
    }
    const auto first = static_cast<int32_t>(st.first_block);
    for (auto b = static_cast<int32_t>(st.end_block - 1); b >= first; --b) {
      ensure_gathered(b, Phase::kBackward);
      if (pf == BackwardPrefetch::kBackwardPre) prefetch_backward(b - 1);
      recompute(b);
      const int32_t input_grad = kernels(b, Phase::kBackward, s_.block_input_grad);
      if (b == first && !st.has_embedding) {
        p2p(TaskKind::kSend, previous_stage(), Phase::kBackward, input_grad);
      }
    }
  }

  // ... and its weight gradients, after which the units' gradients are final.
  void backward_weight(bool last_mb) {
    const PipelineStage& st = chunk();
    const bool free_after = sharded() && last_mb;
    if (st.has_head) {
      const int32_t head_ready = kernels(kRootUnit, Phase::kBackward, s_.head_weight_grad);
      if (!has_embedding()) {
        if (free_after) free_unit(kRootUnit, Phase::kBackward);
        reduce(kRootUnit, head_ready, last_mb);
      }
    }
    for (auto b = static_cast<int32_t>(st.end_block - 1); b >= st.first_block; --b) {
      const int32_t grad_ready = kernels(b, Phase::kBackward, s_.block_weight_grad);
      if (free_after) free_unit(b, Phase::kBackward);
      reduce(b, grad_ready, last_mb);
    }
    if (st.has_embedding) embedding_backward(free_after, last_mb);
    if (last_mb) post_backward();
  }

  const WorkloadSpec& spec_;
  const FsdpScheduleOptions& opt_;
  FsdpSchedule& s_;
  int32_t mb_ = 0;
  int32_t chunk_ = 0;  // the pipeline chunk of the work being built
  int32_t first_kernel_waits_for_ = kNone;  // a receive the next unit's first kernel waits for
  int32_t compute_waits_for_ = kNone;       // a reduction the next kernel waits for (post_backward)
  std::vector<std::pair<int32_t, int32_t>> deferred_;  // (unit, grad ready) for post_backward()
  // Activation offload: the current micro-batch's copy of each offloaded
  // block to the host and back.
  std::vector<int32_t> offloaded_ =
      std::vector<int32_t>(static_cast<size_t>(spec_.activation_offload_layers), kNone);
  std::vector<int32_t> reloaded_ = offloaded_;
  std::array<int32_t, kStreamCount> last_on_ = [] {
    std::array<int32_t, kStreamCount> a{};
    a.fill(kNone);
    return a;
  }();
  // add(), for the task generators of context parallelism and async TP.
  const AddTaskFn add_fn_ = [this](Task t, std::vector<int32_t> d) { return add(t, d); };
  std::optional<RingAttentionTasks> ring_;  // context parallelism's exchanges
  std::optional<MegatronBuckets> megatron_;  // Megatron's DDP buckets (WorkloadSpec::megatron)
  std::vector<bool> gathered_;
  std::vector<int32_t> last_ag_;          // latest all-gather per unit slot
  std::vector<int32_t> copied_ag_;        // the all-gather whose output was copied out last
  std::vector<int32_t> final_reduction_;  // last reduction of the last micro-batch
  std::deque<int32_t> live_;            // block all-gathers whose buffers the host has not awaited
  std::map<int32_t, int32_t> free_of_;  // all-gather in live_ -> the free of its buffer
  std::deque<int32_t> free_events_;     // FSDP1: frees recorded and not yet waited for
};

}  // namespace

FsdpSchedule build_fsdp_schedule(const WorkloadSpec& spec, const FsdpScheduleOptions& options) {
  FsdpSchedule s;
  build_schedule_tables(spec, options, s);
  Builder(spec, options, s).build();
  return s;
}

}  // namespace clustersim::workloads
