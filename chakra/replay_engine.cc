#include "chakra/replay_engine.h"

#include <algorithm>
#include <string>

#include "sim/check.h"

namespace clustersim::workloads::chakra::replay {

ReplayEngine::ReplayEngine(const topology::Cluster& cluster,
                           const collectives::HardwareProfile& profile, const ReplayJob& job,
                           const ReplayOptions& options, const std::vector<Template>& templates,
                           const GpuComputeSpec& spec)
    : cluster_(cluster),
      profile_(profile),
      job_(job),
      options_(options),
      t_(templates),
      flows_(cluster, profile, options.routing),
      transfers_(sim_, flows_),
      ranks_(static_cast<size_t>(job.ranks())),
      channels_(job.slot_groups.size()),
      groups_(job.groups.size()),
      traced_(static_cast<size_t>(job.ranks()), 0),
      tuned_(profile, options.forced),
      sm_(spec.comm_overlap_slowdown) {
  CLUSTERSIM_CHECK(
      options.rank_time_factors.empty() || options.rank_time_factors.size() == ranks_.size(),
      "rank_time_factors: " + std::to_string(options.rank_time_factors.size()) + " for " +
          std::to_string(ranks_.size()) + " ranks");
  resource_begin_.reserve(ranks_.size() + 1);
  int64_t total = 0;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    resource_begin_.push_back(total);
    total += static_cast<int64_t>(tpl(static_cast<int64_t>(r)).resources.size());
  }
  resource_begin_.push_back(total);
  resources_.resize(static_cast<size_t>(total));
  total = 0;
  for (size_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r].counter_begin = total;
    total += tpl(static_cast<int64_t>(r)).counters;
  }
  counters_ = std::make_unique<CounterArray>(static_cast<size_t>(total));
  for (const int64_t r : options.trace_ranks) {
    CLUSTERSIM_CHECK(r >= 0 && r < job.ranks(), "trace rank " + std::to_string(r));
    traced_[static_cast<size_t>(r)] = 1;
  }
}

void ReplayEngine::run() {
  handler_ = sim_.add_handler(*this);
  transfers_.bind(handler_, kTransferEnd, kSolveFlows);
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    for (const int32_t n : tpl(r).roots) make_ready(r, n, Cause{});
    drain();
  }
  sim_.run();
}

void ReplayEngine::on_event(sim::Simulator& sim, const sim::Event& event) {
  (void)sim;
  const auto rank = static_cast<int64_t>(event.data >> 16);
  const auto res = static_cast<int32_t>(event.data & 0xffff);
  switch (event.kind) {
    case kNodeEnd:
      node_end(rank, res);
      break;
    case kComputeCheck:
      compute_check(rank, res);
      break;
    case kTransferBegin:
      begin_transfer(event.data);
      break;
    case kCommEnd:
      end_comm(event.data, /*transferred=*/false);
      break;
    case kTransferEnd:
      end_transfer(static_cast<uint32_t>(event.data));
      break;
    case kSolveFlows:
      transfers_.on_solve_event();
      break;
    default:
      CLUSTERSIM_CHECK(false, "unknown replay event kind " + std::to_string(event.kind));
  }
  drain();
}

// The slot of rank r that runs on group g.
int32_t ReplayEngine::slot_of(int64_t r, int32_t g) const {
  const auto begin = static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)]);
  const auto end = static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r) + 1]);
  for (size_t i = begin; i < end; ++i) {
    if (job_.slot_groups[i] == g) return static_cast<int32_t>(i - begin);
  }
  CLUSTERSIM_CHECK(false, "rank " + std::to_string(r) + " is in group " + std::to_string(g));
  return -1;
}

// ---- Dependencies ----

// Completes queued nodes and what completes with them at this instant.
void ReplayEngine::drain() {
  if (draining_) return;  // the outer drain completes what is queued
  draining_ = true;
  for (size_t next = 0; next < work_.size(); ++next) {
    const WorkItem item = work_[next];
    RankState& st = rank(item.rank);
    ++st.done;
    if (now() >= st.finish_ns) {
      st.finish_ns = now();
      st.finish_account = item.cause.account;
      st.finish_group_start_ns = item.cause.group_start_ns;
    }
    const Template& t = tpl(item.rank);
    const TNode& tn = t.nodes[static_cast<size_t>(item.node)];
    for (int32_t s = tn.succ_begin; s < tn.succ_end; ++s) {
      dependency_done(item.rank, t.succs[static_cast<size_t>(s)], item.cause);
    }
  }
  work_.clear();
  draining_ = false;
}

// One dependency of `node` completed with `cause`. The node's cause is
// the last one, unless that is host work and a non-host dependency
// completed before: then the latest of those (kept in causes_).
void ReplayEngine::dependency_done(int64_t r, int32_t node, const Cause& cause) {
  const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
  if (tn.indegree == 1) {
    make_ready(r, node, cause);
    return;
  }
  if (tn.counter < 0) {
    wide_dependency_done(r, node, tn, cause);
    return;
  }
  uint16_t& c =
      (*counters_)[static_cast<size_t>(ranks_[static_cast<size_t>(r)].counter_begin + tn.counter)];
  const int32_t done = (c & kMaxDense) + 1;
  if (done < tn.indegree) {
    if (!cause.host) {
      Pending& p = causes_.find_or_insert(rank_node_key(r, node), 0);
      if (!(c & kCauseKept) || cause.end_ns >= p.end_ns) {
        p.account = cause.account;
        p.group_start_ns = cause.group_start_ns;
        p.end_ns = cause.end_ns;
      }
      c = static_cast<uint16_t>(kCauseKept | done);
    } else {
      c = static_cast<uint16_t>((c & kCauseKept) | done);
    }
    return;
  }
  Cause effective = cause;
  if (c & kCauseKept) {
    Pending* p = causes_.find(rank_node_key(r, node));
    CLUSTERSIM_CHECK(p != nullptr, "a kept cause is in the table");
    if (cause.host) effective = Cause{p->account, false, p->group_start_ns, p->end_ns};
    causes_.erase(*p);
  }
  c = static_cast<uint16_t>(done);
  make_ready(r, node, effective);
}

// Nodes with more dependencies than a dense counter holds.
void ReplayEngine::wide_dependency_done(int64_t r, int32_t node, const TNode& tn,
                                        const Cause& cause) {
  Pending& p = wide_.find_or_insert(rank_node_key(r, node), tn.indegree);
  if (!cause.host && (!p.has_cause || cause.end_ns >= p.end_ns)) {
    p.has_cause = true;
    p.account = cause.account;
    p.group_start_ns = cause.group_start_ns;
    p.end_ns = cause.end_ns;
  }
  if (--p.remaining > 0) return;
  Cause effective = cause;
  if (cause.host && p.has_cause) {
    effective = Cause{p.account, false, p.group_start_ns, p.end_ns};
  }
  wide_.erase(p);
  make_ready(r, node, effective);
}

void ReplayEngine::make_ready(int64_t r, int32_t node, const Cause& cause) {
  const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
  switch (tn.kind) {
    case Kind::kMeta:
      complete(r, node, cause);
      break;
    case Kind::kCompute:
    case Kind::kHost:
    case Kind::kCopy: {
      ResourceState& rs = resource(r, tn.resource);
      if (rs.running < 0 && rs.ready.empty()) {
        // Idle and nothing waits: start at once.
        start(r, tn.resource, node, cause);
        break;
      }
      rs.ready.push_back(ReadyEntry{now(), tn.id, node, cause});
      std::push_heap(rs.ready.begin(), rs.ready.end(), LaterFirst{});
      break;
    }
    case Kind::kColl: {
      ChannelState& ch = channel(r, tn.resource);
      ch.ready.push_back(ReadyEntry{0, static_cast<uint64_t>(tn.seq), node, cause});
      std::push_heap(ch.ready.begin(), ch.ready.end(), LaterFirst{});
      try_channel(r, tn.resource);
      break;
    }
    case Kind::kSend:
    case Kind::kRecv:
      p2p_ready(r, node);
      break;
  }
}

// ---- Compute, host and copy resources ----

void ReplayEngine::dispatch(int64_t r, int32_t res) {
  ResourceState& rs = resource(r, res);
  if (rs.running >= 0 || rs.ready.empty()) return;
  std::pop_heap(rs.ready.begin(), rs.ready.end(), LaterFirst{});
  const ReadyEntry e = rs.ready.back();
  rs.ready.pop_back();
  start(r, res, e.node, e.cause);
}

void ReplayEngine::start(int64_t r, int32_t res, int32_t node, const Cause& cause) {
  ResourceState& rs = resource(r, res);
  const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
  rs.running = node;
  rs.start_ns = now();
  if (tn.kind == Kind::kCompute) {
    RankState& st = rank(r);
    if (st.compute_running++ == 0) {
      charge_gap(r, cause);
      st.compute_busy_since = now();
    }
    rs.work_ns = static_cast<double>(tn.duration_ns);
    if (!options_.rank_time_factors.empty()) {
      rs.work_ns *= options_.rank_time_factors[static_cast<size_t>(r)];
    }
    rs.overlap_start_ns = overlap_until(st, now());
    schedule_check(r, res, now(), rs.work_ns);
  } else {
    sim_.schedule_at(SimTime::ns(now() + tn.duration_ns), handler_, kNodeEnd, pack(r, res));
  }
}

void ReplayEngine::node_end(int64_t r, int32_t res) {
  ResourceState& rs = resource(r, res);
  const int32_t node = rs.running;
  const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
  rs.running = -1;
  if (traced(r)) {
    trace_.span(r, tpl(r).resources[static_cast<size_t>(res)].track,
                trace_of(r).nodes[static_cast<size_t>(node)].name,
                tn.kind == Kind::kHost ? "host" : "pcie", rs.start_ns, now(), TaskTag{},
                tn.kind == Kind::kCopy ? tn.bytes : 0);
  }
  Cause cause;
  cause.end_ns = now();
  if (tn.kind == Kind::kHost && tn.host_thread) {
    cause.account = kLaunchBound;
    cause.host = true;
  } else {
    cause.account = kExposedPcie;  // copies, and host work off the host thread (CPU optimizer)
  }
  complete(r, node, cause);
  drain();
  next_on(r, res);
}

void ReplayEngine::compute_check(int64_t r, int32_t res) {
  ResourceState& rs = resource(r, res);
  RankState& st = rank(r);
  const double left = rs.work_ns - kernel_done_ns(st, rs);
  if (left >= 1.0) {
    schedule_check(r, res, now(), left);
    return;
  }
  const int32_t node = rs.running;
  rs.running = -1;
  if (--st.compute_running == 0) {
    st.accounts[kCompute] += now() - st.compute_busy_since;
    st.compute_free_ns = now();
  }
  if (traced(r)) {
    const Node& n = trace_of(r).nodes[static_cast<size_t>(node)];
    trace_.span(r, tpl(r).resources[static_cast<size_t>(res)].track, n.name,
                n.kernel_class ? std::string_view(*n.kernel_class) : "compute", rs.start_ns, now());
  }
  complete(r, node, Cause{kCompute, false, 0, now()});
  drain();
  next_on(r, res);
}

void ReplayEngine::comm_changes(int64_t r, int delta) {
  RankState& st = rank(r);
  st.overlap.change(now(), st.comm_active);
  st.comm_active += delta;
  if (st.comm_active > 0) return;
  // The last transfer ended: running kernels speed up again.
  for (const int32_t res : tpl(r).compute_resources) {
    ResourceState& rs = resource(r, res);
    if (rs.running < 0 || !rs.slowed_check) continue;
    sim_.cancel(rs.event);
    schedule_check(r, res, now(), rs.work_ns - kernel_done_ns(st, rs));
  }
}

}  // namespace clustersim::workloads::chakra::replay
