#include "exec/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "exec/engine_state.h"
#include "exec/timelines.h"
#include "sim/check.h"
#include "sim/distributions.h"

namespace clustersim::workloads {

namespace engine_detail {

using sim::SimTime;

using namespace step_accounts;  // NOLINT: the account names are this file's vocabulary

Engine::Engine(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
               const EngineOptions& options, const EngineJob& job, const Layout& layout,
               const MeshDimSet& merged, bool closed_form_tp, FlowTransfers::Mode bundles)
    : cluster_(cluster),
      job_(job),
      layout_(layout),
      map_(layout, merged),
      k_(map_.k),
      tl_(map_.tl),
      healthy_fabric_(options.healthy_fabric),
      routing_(options.routing),
      profile_(profile),
      rg_(job.groups),
      flows_(cluster, profile, options.routing, options.healthy_fabric),
      transfers_(sim_, flows_),
      ranks_(static_cast<size_t>(tl_.world)),
      sm_(options.comm_overlap_slowdown),
      tuned_(profile, options.forced),
      tail_account_(options.tail_account),
      progress_(options.progress) {
  CLUSTERSIM_CHECK(!job.programs.empty(), "a job has a program");
  CLUSTERSIM_CHECK(layout.world <= int64_t{1} << 32, "at most 2^32 ranks (look events)");
  CLUSTERSIM_CHECK(
      job.program_of.empty() || static_cast<int64_t>(job.program_of.size()) == layout.world,
      "a program for every rank");
  CLUSTERSIM_CHECK(k_ == 1 || (!merged[static_cast<size_t>(MeshDim::kPp)] && rg_ == nullptr &&
                               options.segment_jitter_sd == 0 && options.host_lead_jitter_ns == 0),
                   "timelines of several ranks only as exec/timelines.h plans them");
  int64_t streams = 0;
  int64_t overflow = 0;
  for (int64_t r = 0; r < tl_.world; ++r) {
    RankState& st = ranks_[static_cast<size_t>(r)];
    const size_t p =
        job.program_of.empty() ? 0 : static_cast<size_t>(job.program_of[real_rank(r, 0)]);
    CLUSTERSIM_CHECK(p < job.programs.size(), "rank " + std::to_string(r) + "'s program");
    st.p = &job.programs[p];
    stream_base_.push_back(streams);
    overflow_base_.push_back(overflow);
    ops_total_ += static_cast<int64_t>(st.p->ops.size());
    const auto count = static_cast<int64_t>(st.p->stream_ops.size());
    streams += count;
    overflow += std::max<int64_t>(0, count - kInlineStreams);
  }
  streams_.resize(static_cast<size_t>(overflow));
  stream_base_.push_back(streams);
  const std::vector<double> factors = rank_work_factors(layout, options);
  CLUSTERSIM_CHECK(options.segment_jitter_sd >= 0 && std::isfinite(options.segment_jitter_sd),
                   "segment jitter sd " + std::to_string(options.segment_jitter_sd));
  jitter_sd_ = options.segment_jitter_sd;
  if (jitter_sd_ > 0) {
    jitter_.reserve(ranks_.size());
    for (int64_t r = 0; r < layout.world; ++r) {
      jitter_.emplace_back(options.jitter_seed, "gpu.segment_jitter", static_cast<uint64_t>(r));
    }
  }
  CLUSTERSIM_CHECK(options.host_lead_ns >= 0 && options.host_lead_jitter_ns >= 0,
                   "host lead " + std::to_string(options.host_lead_ns) + " jitter " +
                       std::to_string(options.host_lead_jitter_ns));
  for (int64_t r = 0; r < tl_.world; ++r) {
    int64_t lead = options.host_lead_ns;
    if (options.host_lead_jitter_ns > 0) {
      sim::RandomStream draws(options.jitter_seed, "host.step_jitter", static_cast<uint64_t>(r));
      lead += std::llround(static_cast<double>(options.host_lead_jitter_ns) *
                           std::abs(sim::Normal::standard(draws)));
    }
    RankState& st = rank(r);
    st.anchor_ns = lead;
    st.compute_free_ns = lead;
    st.accounts[step_accounts::kLaunchBound] = lead;
  }
  set_member_speeds(factors);  // after the accounts' start: uneven members copy it
  for (const int64_t r : options.trace_ranks) {
    CLUSTERSIM_CHECK(r >= 0 && r < layout.world, "trace rank " + std::to_string(r));
    // A traced member's timeline records for it (members of equal speed:
    // exec/timelines.h), in the order of the sorted trace ranks.
    const int64_t t = map_.timeline_of(r);
    ranks_[static_cast<size_t>(t)].traced = true;
    traced_members_[t].push_back(r);
  }
  if (!options.trace_ranks.empty()) {
    arrivals_.assign(static_cast<size_t>(streams), 0);
    seg_host_start_.assign(static_cast<size_t>(tl_.world), 0);
  }
  size_t channels = 0;
  for (const Program& p : job.programs) channels = std::max(channels, p.channels.size());
  groups_.resize(channels);
  for (size_t c = 0; c < channels; ++c) {
    for (const Program& p : job.programs) {
      if (c < p.channels.size() && p.channels[c].slot < 0) {
        groups_[c].resize(static_cast<size_t>(tl_.group_count(p.channels[c].role)));
        break;
      }
    }
  }
  if (rg_ != nullptr) {
    xgroups_.resize(rg_->members.size());
    xshapes_.resize(rg_->members.size());
  }
  footprints_.resize(kGroupRoles);
  bundles_.resize(kGroupRoles);
  for (int role = 0; role < kGroupRoles; ++role) {
    member_steps_[static_cast<size_t>(role)] = tl_.member_step(static_cast<GroupRole>(role));
  }
  wakes_.reserve(job.programs.size());
  for (const Program& p : job.programs) {
    // by[s][t]: an op on stream t depends on stream s.
    const size_t n = p.stream_ops.size();
    std::vector<std::vector<bool>> by(n, std::vector<bool>(n, false));
    for (const Op& op : p.ops) {
      for (int32_t d = op.dep_begin; d < op.dep_end; ++d) {
        by[p.deps[static_cast<size_t>(d)].stream][op.stream] = true;
      }
    }
    std::vector<std::vector<uint8_t>> lists(n);
    for (size_t s = 0; s < n; ++s) {
      for (const int t : p.used_streams) {
        if (static_cast<size_t>(t) == s || by[s][static_cast<size_t>(t)]) {
          lists[s].push_back(static_cast<uint8_t>(t));
        }
      }
    }
    wakes_.push_back(std::move(lists));
    std::vector<std::vector<StartInfo>>& by_stream = starts_.emplace_back(n);
    for (size_t st = 0; st < n; ++st) {
      for (const int32_t id : p.stream_ops[st]) {
        const Op& op = p.ops[static_cast<size_t>(id)];
        const bool segment = op.kind == OpKind::kSegment;
        const auto own = n <= kWakeMaskStreams ? static_cast<uint16_t>(1U << st) : uint16_t{0};
        by_stream[st].push_back(StartInfo{id, op.kind, false, own, op.dep_begin, op.dep_end,
                                          op.host_start_ns,
                                          segment ? op.first_launch_ns : op.host_cost_ns,
                                          segment ? op.work_ns : op.duration_ns, op.tail_ns});
      }
    }
    if (n <= kWakeMaskStreams) {
      for (const Op& op : p.ops) {
        for (int32_t d = op.dep_begin; d < op.dep_end; ++d) {
          const Dep& dep = p.deps[static_cast<size_t>(d)];
          if (dep.stream == op.stream || dep.pos < 0 ||
              static_cast<size_t>(dep.pos) >= by_stream[dep.stream].size()) {
            continue;  // implied by stream order, or never holds
          }
          by_stream[dep.stream][static_cast<size_t>(dep.pos)].wakes |=
              static_cast<uint16_t>(1U << op.stream);
        }
      }
    }
  }
  mark_chainable_segments();
  closed_tp_ = closed_form_tp && mark_private_tp_links();
  if (closed_tp_ && k_ > 1) mark_tp_chains();
  // Bundles solved as one wherever the transfers in flight keep the
  // symmetry (FlowTransfers checks: a run that breaks it is run again the
  // next way, by run_programs).
  if (k_ > 1 && rg_ == nullptr) transfers_.set_mode(bundles);
}

void Engine::run() {
  handler_ = sim_.add_handler(*this);
  // Prefetch the ranks of the events of the next ~65 us (queue levels 0-2),
  // a few hundred at 100k ranks: 405B HSDP on 98,304 ranks takes 18 s of
  // CPU instead of 36 (level 1 only: 19 s).
  sim_.enable_prefetch(2);
  transfers_.bind(handler_, kTransferEnd, kSolveFlows);
  for (int64_t r = 0; r < tl_.world; ++r) {
    if (traced(r)) trace_issued(r, 0, gate_op(rank(r)));
    pass_open_gates(r);
    try_all(r, Cause{});
  }
  sim_.run();
}

void Engine::on_event(sim::Simulator& sim, const sim::Event& event) {
  (void)sim;
  if ((sim_.events_processed() & ((uint64_t{1} << 20) - 1)) == 0 && progress_) [[unlikely]] {
    progress_(EngineProgress{events(), ops_done_, ops_total_});
  }
  const auto channel = static_cast<int32_t>(event.data >> kGroupBits);
  const auto group = static_cast<int64_t>(event.data & ((uint64_t{1} << kGroupBits) - 1));
  if (event.kind < kEventKindCount) ++by_kind_[event.kind];
  switch (event.kind) {
    case kComputeEnd: {
      const auto r = static_cast<int64_t>(event.data & 0xffffffffU);
      if (static_cast<uint32_t>(event.data >> 32) != rank(r).look_gen) {
        ++stale_looks_;  // moved by comm_changes()
        break;
      }
      compute_check(r);
      break;
    }
    case kGroupStart:
      if (channel == kP2pChannel) {
        begin_p2p(static_cast<size_t>(group));
      } else {
        begin_collective(channel, group);
      }
      break;
    case kTransferBegin:
      begin_transfer(channel, group);
      break;
    case kTransferEnd:
      end_transfer(static_cast<uint32_t>(event.data));
      break;
    case kSolveFlows:
      transfers_.on_solve_event();
      break;
    case kLocalEnd:
      local_end(static_cast<int64_t>(event.data >> 8), static_cast<int>(event.data & 0xff));
      break;
    case kCollectiveEnd:
      if (channel == kP2pChannel) {
        end_p2p(static_cast<size_t>(group), /*transferred=*/false);
      } else {
        end_collective(channel, group, /*transferred=*/false);
      }
      break;
    default:
      CLUSTERSIM_CHECK(false, "unknown step event kind " + std::to_string(event.kind));
  }
}

void Engine::prefetch(const sim::Event& event) const {
  if (event.kind != kComputeEnd) return;
  prefetch_rank(static_cast<int64_t>(event.data & 0xffffffffU));
}

bool Engine::holds(const RankState& st, int32_t dep_begin, int32_t dep_end) const {
  for (int32_t d = dep_begin; d < dep_end; ++d) {
    const Dep& dep = st.p->deps[static_cast<size_t>(d)];
    if (stream(st, dep.stream).done <= dep.pos) return false;
  }
  return true;
}

// ---- Host and streams ----

int32_t Engine::gate_op(const RankState& st) const {
  return st.gate_index < static_cast<int32_t>(st.p->gates.size())
             ? st.p->gates[static_cast<size_t>(st.gate_index)].op
             : kNoGate;
}

// Passes every host wait whose dependencies hold: the host resumes at the
// later of reaching it and now (conditions only become true at completions,
// handled at once, so an older one was true before the host got there).
bool Engine::pass_open_gates(int64_t r) {
  if (in_chain()) return false;  // none waits on a chain's inner ends
  RankState& st = rank(r);
  const std::vector<Gate>& gates = st.p->gates;
  const int32_t before = st.gate_index;
  while (st.gate_index < static_cast<int32_t>(gates.size())) {
    const Gate& g = gates[static_cast<size_t>(st.gate_index)];
    if (!holds(st, g.dep_begin, g.dep_end)) break;
    if (st.chain_end >= 0) {  // the chain's host times assumed the old anchor
      break_chain(r);
      continue;
    }
    const int64_t reach = st.anchor_ns + g.host_ns - st.anchor_host_ns;
    st.anchor_ns = std::max(reach, now());
    if (uneven()) members_pass_gate(r, reach, st.anchor_ns);
    st.anchor_host_ns = g.host_ns;
    ++st.gate_index;
    if (traced(r) && gate_op(st) != g.op) trace_issued(r, g.op, gate_op(st));
  }
  return st.gate_index != before;
}

void Engine::try_start(int64_t r, int s, const Cause& cause) {
  RankState& st = rank(r);
  StreamState& ss = stream(st, s);
  const std::vector<StartInfo>& list = starts(st, s);
  if (ss.busy || ss.done >= static_cast<int32_t>(list.size())) return;
  const StartInfo& op = list[static_cast<size_t>(ss.done)];
  if (!holds(st, op.dep_begin, op.dep_end)) return;
  if (op.id >= gate_op(st)) return;  // the host has not issued it yet
  ss.busy = 1;
  const int64_t host = host_start(st, op.host_start_ns);
  switch (op.kind) {
    case OpKind::kSegment:
      start_segment(r, op, host, cause);
      break;
    case OpKind::kLocal: {
      const int64_t start = std::max(now(), host + op.lead_ns);
      if (traced(r)) arrival(r, s) = start;
      sim_.schedule_at(SimTime::ns(start + op.length_ns), handler_, kLocalEnd,
                       (static_cast<uint64_t>(r) << 8) | static_cast<uint64_t>(s));
      break;
    }
    case OpKind::kCollective: {
      const int64_t at = std::max(now(), host + op.lead_ns);
      if (traced(r)) arrival(r, s) = at;
      arrive(r, op.id, st.p->ops[static_cast<size_t>(op.id)], at);
      break;
    }
    case OpKind::kSend:
    case OpKind::kRecv: {
      const int64_t at = std::max(now(), host + op.lead_ns);
      if (traced(r)) arrival(r, s) = at;
      p2p_arrive(r, op.id, st.p->ops[static_cast<size_t>(op.id)], at);
      break;
    }
  }
}

// The rank's latest completion so far, and what it was.
void Engine::finished(RankState& st, const Cause& cause) {
  if (now() < st.finish_ns) return;
  st.finish_ns = now();
  st.finish_account = cause.account;
  st.finish_group_start_ns = cause.group_start_ns;
}

void Engine::op_done(int64_t r, int s, const Cause& cause) {
  RankState& st = rank(r);
  StreamState& ss = stream(st, s);
  ss.busy = 0;
  ++ss.done;
  ++ops_done_;
  finished(st, cause);
}

// What this event ended is the cause; after now, the host was late.
void Engine::charge_gap(RankState& st, int64_t start, const Cause& cause) {
  step_accounts::charge_gap(account(st), st.compute_free_ns, start, now(), cause.account,
                            cause.group_start_ns);
}

// ---- Compute ----

void Engine::start_segment(int64_t r, const StartInfo& op, int64_t host, const Cause& cause) {
  RankState& st = rank(r);
  const int64_t start = std::max(now(), host + op.lead_ns);
  if (uneven()) members_start(r, st.compute_free_ns, start, now(), host + op.lead_ns, cause);
  charge_gap(st, start, cause);
  st.seg_start_ns = start;
  if (traced(r)) seg_host_start_[static_cast<size_t>(r)] = host;
  st.seg_work_ns = segment_work(st, stream(st, kComputeStream).done, op.length_ns);
  st.seg_overlap_start_ns = overlap_until(st, start);
  st.seg_tail_end_ns = host + op.tail_ns;
  st.seg_slowed_check = st.comm_active > 0;
  if (in_chain()) return;  // a chain's segment: the chain's look is queued
  int64_t look = 0;
  st.chain_end = plan_chain(r, &look);
  if (st.chain_end < 0) {
    schedule_check(r, start, st.seg_work_ns);
  } else {
    queue_look(r, look);
  }
}

// Each position owns 16 draws: the polar method's rejections (2.55 draws on
// average, more than 16 with probability (1 - pi/4)^8, about 5 in 10^6)
// seldom reach the next one's.
double Engine::jitter_factor(const RankState& st, int32_t k) const {
  sim::RandomStream draws = jitter_[index(st)];
  draws.seek(static_cast<uint64_t>(k) * 16);
  return std::exp(jitter_sd_ * sim::Normal::standard(draws));
}

// The next look at the running segment, `left` ns of full-speed work after
// `from` (exec/sm_sharing.h), and not before its launch-bound end.
void Engine::schedule_check(int64_t r, int64_t from, double left) {
  RankState& st = rank(r);
  st.seg_slowed_check = st.comm_active > 0;
  queue_look(r, std::max(sm_.look_at(from, left, st.seg_slowed_check), st.seg_tail_end_ns));
}

// Not a cancellable event: a moved look is told stale by its generation, so
// that delivering a look touches no slot of the queue's (a cache miss per
// event at a million ranks).
void Engine::queue_look(int64_t r, int64_t at) {
  sim_.schedule_at(SimTime::ns(std::max(at, now())), handler_, kComputeEnd,
                   (static_cast<uint64_t>(rank(r).look_gen) << 32) | static_cast<uint64_t>(r));
}

void Engine::comm_changes(int64_t r, int delta) {
  RankState& st = rank(r);
  if (st.chain_end >= 0) break_chain(r);
  st.overlap.change(now(), st.comm_active);
  st.comm_active = static_cast<uint8_t>(st.comm_active + delta);
  // Keep the running segment's next look exact: the first transfer slows
  // it down, the end of the last one speeds it up again.
  const bool slowed = st.comm_active > 0;
  if (!slowed && st.seg_slowed_check && stream(st, kComputeStream).busy &&
      now() >= st.seg_start_ns) {
    ++st.look_gen;  // the pending look is stale
    schedule_check(r, now(), st.seg_work_ns - segment_done_ns(st));
  }
}

// The segment's optimistic end came: finish it, or look again.
void Engine::compute_check(int64_t r) {
  RankState& st = rank(r);
  if (st.chain_end >= 0) run_chain(r, now());
  const double left = st.seg_work_ns - segment_done_ns(st);
  if (left >= 1.0) {
    ++relooks_;
    schedule_check(r, now(), left);
    return;
  }
  compute_end(r);
}

void Engine::compute_end(int64_t r) {
  RankState& st = rank(r);
  const int64_t t = now();
  const double slowed =
      sm_.slowed_ns(st.seg_work_ns, overlap_until(st, t) - st.seg_overlap_start_ns);
  const int64_t busy = std::min(t - st.seg_start_ns, static_cast<int64_t>(std::ceil(slowed)));
  account(st)[kCompute] += busy;
  account(st)[kLaunchBound] += (t - st.seg_start_ns) - busy;  // the host was late
  if (uneven()) members_end(r, busy);
  if (traced(r)) {
    const StreamState& ss = stream(st, kComputeStream);
    const int32_t id = st.p->stream_ops[kComputeStream][static_cast<size_t>(ss.done)];
    trace_segment(r, st.p->ops[static_cast<size_t>(id)], seg_host_start_[static_cast<size_t>(r)],
                  t);
  }
  st.compute_free_ns = t;
  op_done(r, kComputeStream, Cause{kCompute, 0});
  wake(r, kComputeStream, Cause{kCompute, 0});
}

void Engine::local_end(int64_t r, int s) {
  RankState& st = rank(r);
  const int32_t id =
      st.p->stream_ops[static_cast<size_t>(s)][static_cast<size_t>(stream(st, s).done)];
  const Op& op = st.p->ops[static_cast<size_t>(id)];
  if (traced(r) && op.label >= 0) trace_local(r, op, arrival(r, s), now());
  const Cause cause{op.exposed, 0};
  op_done(r, s, cause);
  wake(r, s, cause);
}

// ---- Trace ----

// The host spans of ops [begin, end), issued from the rank's anchor now.
void Engine::trace_issued(int64_t r, int32_t begin, int32_t end) {
  const Program& p = prog(r);
  end = std::min(end, static_cast<int32_t>(p.ops.size()));
  for (int32_t o = begin; o < end; ++o) {
    const Op& op = p.ops[static_cast<size_t>(o)];
    const int64_t host = host_start(rank(r), op.host_start_ns);
    for (int32_t i = op.host_span_begin; i < op.host_span_end; ++i) {
      const HostSpan& h = p.host_spans[static_cast<size_t>(i)];
      trace_.span(r, h.label.track, h.label.name, h.label.category, host + h.offset_ns,
                  host + h.offset_ns + h.duration_ns, h.label.tag);
    }
  }
}

// The segment's launches on the host track (unless it has host spans), then
// its kernels, which share the segment's time in proportion to their own.
void Engine::trace_segment(int64_t r, const Op& op, int64_t host, int64_t end) {
  const Program& p = prog(r);
  const OpLabel& first = p.kernels[static_cast<size_t>(op.label)];
  if (op.host_span_end == op.host_span_begin && !p.launch.name.empty()) {
    trace_.span(r, p.launch.track, p.launch.name, p.launch.category, host, host + op.host_cost_ns,
                first.tag);
  }
  const int64_t start = rank(r).seg_start_ns;
  const double scale =
      op.work_ns > 0 ? static_cast<double>(end - start) / static_cast<double>(op.work_ns) : 0;
  int64_t sum = 0;
  for (int32_t k = 0; k < op.task_count; ++k) {
    const OpLabel& kernel = p.kernels[static_cast<size_t>(op.label + k)];
    const auto b = start + std::llround(static_cast<double>(sum) * scale);
    sum += kernel.kernel_ns;
    const auto e =
        k + 1 == op.task_count ? end : start + std::llround(static_cast<double>(sum) * scale);
    trace_.span(r, kernel.track, kernel.name, kernel.category, b, e, kernel.tag);
  }
}

void Engine::trace_local(int64_t r, const Op& op, int64_t start, int64_t end) {
  const OpLabel& l = prog(r).labels[static_cast<size_t>(op.label)];
  trace_.span(r, l.track, l.name, l.category, start, end, l.tag, l.bytes);
}

void Engine::trace_collective(int64_t r, const Op& op, int64_t arrival, int64_t start, int64_t end,
                              int64_t group_size, std::string_view algorithm,
                              std::string_view protocol) {
  const OpLabel& l = prog(r).labels[static_cast<size_t>(op.label)];
  trace_.comm(r, l.track, l.name, l.category, start, end,
              CommDetail{op.bytes, group_size, arrival, algorithm, protocol}, l.tag);
}

}  // namespace engine_detail

}  // namespace clustersim::workloads
