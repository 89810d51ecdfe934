// Chains of segments (exec/engine_state.h): where nothing but the compute
// stream waits on a segment's end and the next segment's dependencies
// already hold, the next one starts at that end as its look would have
// started it; only the chain's last look is queued, and its inner ends are
// handled when it comes, or when a transfer or a host gate of the rank
// would change what the chain assumed. With one timeline per TP group, a
// chain also runs through a TP collective timed in closed form that only
// the next segment waits on (engine_private_tp.cc): its one member's
// arrival begins it, and it ends a fixed time later, inside the chain.
#include <algorithm>
#include <vector>

#include "exec/engine_state.h"
#include "sim/check.h"

namespace clustersim::workloads::engine_detail {

using sim::SimTime;

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

// chain_tp_: segment k chains into k + 1 through TP collective T where T
// waits on k and k + 1 on T, T is timed in closed form, and nothing else
// (another stream's op, a host gate) waits on k or on T.
void Engine::mark_tp_chains() {
  chain_tp_.assign(job_.programs.size(), {});
  for (size_t program = 0; program < job_.programs.size(); ++program) {
    const Program& p = job_.programs[program];
    const std::vector<int32_t>& compute = p.stream_ops[kComputeStream];
    std::vector<int32_t>& via = chain_tp_[program];
    via.assign(compute.size(), -1);
    // waiters[(stream, pos)]: how many ops and gates wait on it, by stream.
    std::vector<std::vector<int32_t>> waiters(p.stream_ops.size());
    for (size_t st = 0; st < p.stream_ops.size(); ++st)
      waiters[st].assign(p.stream_ops[st].size(), 0);
    const auto count = [&](int32_t begin, int32_t end) {
      for (int32_t d = begin; d < end; ++d) {
        const Dep& dep = p.deps[static_cast<size_t>(d)];
        if (dep.pos >= 0 && static_cast<size_t>(dep.pos) < waiters[dep.stream].size()) {
          ++waiters[dep.stream][static_cast<size_t>(dep.pos)];
        }
      }
    };
    for (const Op& op : p.ops) count(op.dep_begin, op.dep_end);
    for (const Gate& g : p.gates) count(g.dep_begin, g.dep_end);
    const std::vector<uint8_t>& closed = closed_tp_ops_[program];
    for (size_t o = 0; o < p.ops.size(); ++o) {
      const Op& t = p.ops[o];
      if (closed[o] == 0 || t.stream == kComputeStream) continue;
      int32_t k = -1;  // the one compute position T waits on
      for (int32_t d = t.dep_begin; d < t.dep_end; ++d) {
        const Dep& dep = p.deps[static_cast<size_t>(d)];
        if (dep.stream == kComputeStream) k = std::max(k, dep.pos);
      }
      if (k < 0 || static_cast<size_t>(k) + 1 >= compute.size()) continue;
      const Op& seg = p.ops[static_cast<size_t>(compute[static_cast<size_t>(k)])];
      const Op& next = p.ops[static_cast<size_t>(compute[static_cast<size_t>(k) + 1])];
      if (seg.kind != OpKind::kSegment || next.kind != OpKind::kSegment) continue;
      bool next_waits = false;
      for (int32_t d = next.dep_begin; d < next.dep_end; ++d) {
        const Dep& dep = p.deps[static_cast<size_t>(d)];
        next_waits = next_waits || (dep.stream == t.stream && dep.pos == t.pos);
      }
      if (!next_waits || waiters[kComputeStream][static_cast<size_t>(k)] != 1 ||
          waiters[t.stream][static_cast<size_t>(t.pos)] != 1) {
        continue;
      }
      // The op after T on its stream must not start at T's end (it would
      // start inside the chain): it waits for a later segment.
      const std::vector<int32_t>& own = p.stream_ops[t.stream];
      if (static_cast<size_t>(t.pos) + 1 < own.size()) {
        const Op& after = p.ops[static_cast<size_t>(own[static_cast<size_t>(t.pos) + 1])];
        int32_t waits_for = -1;
        for (int32_t d = after.dep_begin; d < after.dep_end; ++d) {
          const Dep& dep = p.deps[static_cast<size_t>(d)];
          if (dep.stream == kComputeStream) waits_for = std::max(waits_for, dep.pos);
        }
        if (waits_for <= k) continue;
      }
      via[static_cast<size_t>(k)] = static_cast<int32_t>(o);
    }
  }
  chained_tp_.assign(ranks_.size(), ChainedTp{});
  tp_chains_ = true;
}

void Engine::begin_chained_tp(int32_t channel, int64_t g, int64_t start) {
  GroupState& gs = group_state(channel, g);
  const Op& op = group_op(gs);
  gs.start_ns = start;
  collectives_ += copies(op.role);
  chained_tp_[static_cast<size_t>(gs.rank)] = ChainedTp{start + closed_tp_ns(op, g), channel};
}

// The last compute position of a chain from the running segment, and the
// look time of that last segment; -1 if the running segment ends alone.
int32_t Engine::plan_chain(int64_t r, int64_t* look_ns) {
  RankState& st = rank(r);
  if (st.traced) return -1;
  const std::vector<StartInfo>& list = starts(st, kComputeStream);
  const int32_t k = stream(st, kComputeStream).done;
  if (!list[static_cast<size_t>(k)].chains && chain_tp(st, k) < 0) return -1;
  const bool slowed = st.comm_active > 0;
  int64_t look = std::max(sm_.look_at(st.seg_start_ns, st.seg_work_ns, slowed), st.seg_tail_end_ns);
  // The TP collectives' stream and how many of its ops will be done.
  int tp_stream = -1;
  int32_t tp_done = 0;
  // Whether deps hold once the chain's compute up to j and its TP
  // collectives so far are done.
  const auto will_hold = [&](int32_t begin, int32_t end, int32_t j) {
    for (int32_t d = begin; d < end; ++d) {
      const Dep& dep = st.p->deps[static_cast<size_t>(d)];
      if (dep.stream == kComputeStream && dep.pos <= j) continue;
      if (dep.stream == tp_stream && dep.pos < tp_done) continue;
      if (stream(st, dep.stream).done <= dep.pos) return false;
    }
    return true;
  };
  int32_t j = k;
  while (j - k < kMaxChain) {
    const int32_t via = list[static_cast<size_t>(j)].chains ? -1 : chain_tp(st, j);
    if (!list[static_cast<size_t>(j)].chains && via < 0) break;
    const StartInfo& next = list[static_cast<size_t>(j + 1)];
    if (via >= 0) {
      // The TP collective: next on its stream, issued, its deps held.
      const Op& t = st.p->ops[static_cast<size_t>(via)];
      if (tp_stream < 0) {
        tp_stream = t.stream;
        const StreamState& ts = stream(st, t.stream);
        if (ts.busy) break;
        tp_done = ts.done;
      }
      if (t.stream != tp_stream || tp_done != t.pos || via >= gate_op(st) ||
          !will_hold(t.dep_begin, t.dep_end, j)) {
        break;
      }
      const StartInfo& ti = starts(st, t.stream)[static_cast<size_t>(t.pos)];
      look = std::max(look, host_start(st, ti.host_start_ns) + ti.lead_ns) + closed_tp_ns(t, r);
      ++tp_done;
    }
    if (!will_hold(next.dep_begin, next.dep_end, j) || next.id >= gate_op(st)) break;
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
  while (stream(st, kComputeStream).done < st.chain_end || tp_in_chain(r)) {
    if (tp_in_chain(r)) {  // a TP collective between two of its segments
      ChainedTp& tp = chained_tp_[static_cast<size_t>(r)];
      if (tp.end_ns > until) break;
      virtual_now_ = tp.end_ns;
      const int32_t channel = tp.channel;
      tp.end_ns = -1;
      ++chained_tp_ends_;
      end_collective(channel, tl_.group_of(GroupRole::kTp, r), /*transferred=*/false);
      CLUSTERSIM_CHECK(stream(st, kComputeStream).busy, "a chain's next segment starts at once");
      continue;
    }
    const int64_t look = std::max(sm_.look_at(st.seg_start_ns, st.seg_work_ns, st.seg_slowed_check),
                                  st.seg_tail_end_ns);
    if (look > until) break;
    virtual_now_ = look;
    CLUSTERSIM_CHECK(st.seg_work_ns - segment_done_ns(st) < 1.0,
                     "a chained segment ends at its look");
    ++chained_ends_;
    compute_end(r);
    CLUSTERSIM_CHECK(stream(st, kComputeStream).busy || tp_in_chain(r),
                     "a chain's next segment or TP collective starts at once");
  }
  virtual_now_ = -1;
  if (!tp_in_chain(r) && stream(st, kComputeStream).done == st.chain_end) st.chain_end = -1;
}

// Something of the rank changes now: the chain's segments that ended are
// ended, and the running one looks as it would have without the chain.
void Engine::break_chain(int64_t r) {
  RankState& st = rank(r);
  run_chain(r, now());
  if (st.chain_end < 0) return;  // the queued look is the running segment's own
  st.chain_end = -1;
  ++st.look_gen;  // the chain's look is stale
  if (tp_in_chain(r)) {  // its TP collective ends as any other
    ChainedTp& tp = chained_tp_[static_cast<size_t>(r)];
    sim_.schedule_at(SimTime::ns(tp.end_ns), handler_, kCollectiveEnd,
                     pack(tp.channel, tl_.group_of(GroupRole::kTp, r)));
    tp.end_ns = -1;
    return;
  }
  schedule_check(r, st.seg_start_ns, st.seg_work_ns);
}

}  // namespace clustersim::workloads::engine_detail
