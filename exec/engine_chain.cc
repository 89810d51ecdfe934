// Chains of segments (exec/engine_state.h): where nothing but the compute
// stream waits on a segment's end and the next segment's dependencies
// already hold, the next one starts at that end as its look would have
// started it; only the chain's last look is queued, and its inner ends are
// handled when it comes, or when a transfer or a host gate of the rank
// would change what the chain assumed.
#include <algorithm>

#include "exec/engine_state.h"
#include "sim/check.h"

namespace clustersim::workloads::engine_detail {

namespace {
constexpr int32_t kMaxChain = 64;
}

// StartInfo::chains: segment k may run on into segment k + 1 where no op of
// another stream and no host gate waits on k.
void Engine::mark_chainable_segments() {
  for (size_t program = 0; program < job_.programs.size(); ++program) {
    const Program& p = job_.programs[program];
    const std::vector<int32_t>& compute = p.stream_ops[kComputeStream];
    std::vector<uint8_t> ok(compute.size(), 0);
    for (size_t k = 0; k + 1 < compute.size(); ++k) {
      ok[k] = p.ops[static_cast<size_t>(compute[k])].kind == OpKind::kSegment &&
              p.ops[static_cast<size_t>(compute[k + 1])].kind == OpKind::kSegment;
    }
    const auto waited = [&](const Dep& dep) {
      if (dep.stream == kComputeStream && dep.pos >= 0 &&
          static_cast<size_t>(dep.pos) < ok.size()) {
        ok[static_cast<size_t>(dep.pos)] = 0;
      }
    };
    for (const Op& op : p.ops) {
      if (op.stream == kComputeStream) continue;
      for (int32_t d = op.dep_begin; d < op.dep_end; ++d) waited(p.deps[static_cast<size_t>(d)]);
    }
    for (const Gate& g : p.gates) {
      for (int32_t d = g.dep_begin; d < g.dep_end; ++d) waited(p.deps[static_cast<size_t>(d)]);
    }
    std::vector<StartInfo>& infos = starts_[program][kComputeStream];
    for (size_t k = 0; k < ok.size(); ++k) infos[k].chains = ok[k] != 0;
  }
}

// The last compute position of a chain from the running segment, and the
// look time of that last segment; -1 if the running segment ends alone.
int32_t Engine::plan_chain(int64_t r, int64_t* look_ns) {
  RankState& st = rank(r);
  if (st.traced) return -1;
  const std::vector<StartInfo>& list = starts(st, kComputeStream);
  const int32_t k = stream(st, kComputeStream).done;
  if (!list[static_cast<size_t>(k)].chains) return -1;
  const bool slowed = st.comm_active > 0;
  int64_t look = std::max(sm_.look_at(st.seg_start_ns, st.seg_work_ns, slowed), st.seg_tail_end_ns);
  int32_t j = k;
  while (j - k < kMaxChain && list[static_cast<size_t>(j)].chains) {
    const StartInfo& next = list[static_cast<size_t>(j + 1)];
    if (!holds(st, next.dep_begin, next.dep_end) || next.id >= gate_op(st)) break;
    const int64_t host = host_start(st, next.host_start_ns);
    const int64_t start = std::max(look, host + next.lead_ns);
    const double work = segment_work(st, j + 1, next.length_ns);
    look = std::max(sm_.look_at(start, work, slowed), host + next.tail_ns);
    ++j;
  }
  *look_ns = look;
  return j > k ? j : -1;
}

// Ends the chain's segments whose look time is not after `until`, each as
// its look would have, at that time.
void Engine::run_chain(int64_t r, int64_t until) {
  RankState& st = rank(r);
  CLUSTERSIM_CHECK(!in_chain(), "chains are not run from inside a chain");
  while (stream(st, kComputeStream).done < st.chain_end) {
    const int64_t look = std::max(sm_.look_at(st.seg_start_ns, st.seg_work_ns, st.seg_slowed_check),
                                  st.seg_tail_end_ns);
    if (look > until) break;
    virtual_now_ = look;
    CLUSTERSIM_CHECK(st.seg_work_ns - segment_done_ns(st) < 1.0,
                     "a chained segment ends at its look");
    ++chained_ends_;
    compute_end(r);
    CLUSTERSIM_CHECK(stream(st, kComputeStream).busy, "a chain's next segment starts at once");
  }
  virtual_now_ = -1;
  if (stream(st, kComputeStream).done == st.chain_end) st.chain_end = -1;
}

// Something of the rank changes now: the chain's segments that ended are
// ended, and the running one looks as it would have without the chain.
void Engine::break_chain(int64_t r) {
  RankState& st = rank(r);
  run_chain(r, now());
  if (st.chain_end < 0) return;  // the queued look is the running segment's own
  st.chain_end = -1;
  ++st.look_gen;  // the chain's look is stale
  schedule_check(r, st.seg_start_ns, st.seg_work_ns);
}

}  // namespace clustersim::workloads::engine_detail
