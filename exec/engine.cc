#include "exec/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/collective_flows.h"
#include "exec/flow_transfers.h"
#include "exec/sm_sharing.h"
#include "exec/trace_sink.h"
#include "sim/check.h"
#include "sim/simulator.h"

namespace clustersim::workloads {

namespace {

using collectives::CollectiveOp;
using sim::SimTime;

using namespace step_accounts;  // NOLINT: the account names are this file's vocabulary

constexpr int32_t kNoGate = std::numeric_limits<int32_t>::max();

using namespace step_accounts;  // NOLINT: the account names are this file's vocabulary

// ---- Per-rank and per-group state ----

// Streams run in order: the op at position `done` is the running one (busy)
// or the next to start.
struct StreamState {
  int32_t done : 31 = 0;  // ops completed
  uint32_t busy : 1 = 0;
};
static_assert(sizeof(StreamState) == 4);

// Hot per-event state first (about two cache lines); the time accounts live
// apart (Engine::accounts_).
struct RankState {
  int64_t anchor_ns = 0;  // host: issuing anchor_op started at anchor_ns
  int32_t anchor_op = 0;
  int32_t gate_index = 0;   // next entry of Program::gate_ops not passed
  TransferOverlap overlap;  // time with a transfer in flight (comm_active of them now)
  // The running compute segment.
  double seg_work_ns = 0;            // at full speed, straggling included
  int64_t seg_overlap_start_ns = 0;  // overlap_until() at the segment's start
  int64_t seg_start_ns = 0;
  int64_t seg_tail_end_ns = 0;
  sim::EventId seg_event;       // its next look (compute_check)
  int64_t compute_free_ns = 0;  // when the compute stream last went idle
  int64_t finish_ns = 0;
  int64_t finish_group_start_ns = 0;
  std::array<StreamState, kProgramStreams> streams{};
  uint8_t comm_active = 0;         // transfers in flight
  bool seg_slowed_check = false;   // the next look assumed a transfer in flight
  Account finish_account = kIdle;  // what ended at finish_ns
};

struct GroupState {
  int32_t arrived = 0;
  int32_t op = -1;
  int64_t latest_arrival_ns = 0;
  int64_t start_ns = 0;
};

enum EventKinds : sim::EventKind {
  kComputeEnd,     // data: rank
  kGroupStart,     // data: channel << 40 | group
  kTransferBegin,  // data: channel << 40 | group
  kTransferEnd,    // data: flow id
  kCollectiveEnd,  // data: channel << 40 | group (no transfer phase)
  kSolveFlows,     // the transfers that started or ended at this instant changed rates
  kLocalEnd,       // data: rank << 8 | stream
};

constexpr int kGroupBits = 40;

uint64_t pack(int32_t channel, int64_t group) {
  return (static_cast<uint64_t>(channel) << kGroupBits) | static_cast<uint64_t>(group);
}

// The cause a compute stream's idle gap is charged to.
struct Cause {
  Account account = kIdle;
  int64_t group_start_ns = 0;  // collectives: the part before it is sync wait
};

class Engine : public sim::EventHandler {
 public:
  Engine(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
         const EngineOptions& options, const Program& program, const Layout& layout)
      : p_(program),
        layout_(layout),
        flows_(cluster, profile, options.routing),
        transfers_(sim_, flows_),
        ranks_(static_cast<size_t>(layout.world)),
        accounts_(static_cast<size_t>(layout.world)),
        slowdown_(static_cast<size_t>(layout.world), 1.0),
        traced_(static_cast<size_t>(layout.world), 0),
        sm_(options.comm_overlap_slowdown) {
    if (!options.rank_time_factors.empty()) {
      CLUSTERSIM_CHECK(options.rank_time_factors.size() == slowdown_.size(),
                       "rank_time_factors has " + std::to_string(options.rank_time_factors.size()) +
                           " entries for " + std::to_string(layout.world) + " ranks");
      for (size_t r = 0; r < slowdown_.size(); ++r) {
        CLUSTERSIM_CHECK(options.rank_time_factors[r] > 0,
                         "rank time factor of rank " + std::to_string(r) + " is not > 0");
        slowdown_[r] = options.rank_time_factors[r];
      }
    }
    for (const Straggler& s : options.stragglers) {
      CLUSTERSIM_CHECK(
          s.rank >= 0 && s.rank < layout.world && s.slowdown >= 1,
          "straggler rank " + std::to_string(s.rank) + " slowdown " + std::to_string(s.slowdown));
      slowdown_[static_cast<size_t>(s.rank)] *= s.slowdown;
    }
    for (const int64_t r : options.trace_ranks) {
      CLUSTERSIM_CHECK(r >= 0 && r < layout.world, "trace rank " + std::to_string(r));
      traced_[static_cast<size_t>(r)] = 1;
    }
    if (!options.trace_ranks.empty()) {
      arrivals_.assign(static_cast<size_t>(layout.world * kProgramStreams), 0);
      seg_host_start_.assign(static_cast<size_t>(layout.world), 0);
    }
    for (const Program::Channel& c : p_.channels) {
      groups_.emplace_back(static_cast<size_t>(layout.group_count(c.role)));
    }
    footprints_.resize(kGroupRoles);
  }

  void run() {
    handler_ = sim_.add_handler(*this);
    transfers_.bind(handler_, kTransferEnd, kSolveFlows);
    for (int64_t r = 0; r < layout_.world; ++r) {
      pass_open_gates(r);
      try_all(r, Cause{});
    }
    sim_.run();
  }

  void on_event(sim::Simulator& sim, const sim::Event& event) override {
    (void)sim;
    switch (event.kind) {
      case kComputeEnd:
        compute_check(static_cast<int64_t>(event.data));
        break;
      case kGroupStart:
        begin_collective(static_cast<int32_t>(event.data >> kGroupBits),
                         static_cast<int64_t>(event.data & ((uint64_t{1} << kGroupBits) - 1)));
        break;
      case kTransferBegin:
        begin_transfer(static_cast<int32_t>(event.data >> kGroupBits),
                       static_cast<int64_t>(event.data & ((uint64_t{1} << kGroupBits) - 1)));
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
        end_collective(static_cast<int32_t>(event.data >> kGroupBits),
                       static_cast<int64_t>(event.data & ((uint64_t{1} << kGroupBits) - 1)),
                       /*transferred=*/false);
        break;
      default:
        CLUSTERSIM_CHECK(false, "unknown step event kind " + std::to_string(event.kind));
    }
  }

 private:
  int64_t now() const { return sim_.now().count_ns(); }
  Accounts& account(const RankState& st) {
    return accounts_[static_cast<size_t>(&st - ranks_.data())];
  }
  // When traced rank r reached (or started) the op running on stream s.
  int64_t& arrival(int64_t r, int s) {
    return arrivals_[static_cast<size_t>(r * kProgramStreams + s)];
  }
  RankState& rank(int64_t r) { return ranks_[static_cast<size_t>(r)]; }

  int32_t gate_op(const RankState& st) const {
    return st.gate_index < static_cast<int32_t>(p_.gate_ops.size())
               ? p_.gate_ops[static_cast<size_t>(st.gate_index)]
               : kNoGate;
  }

  // When the host starts issuing `op` (op is before the rank's gate).
  int64_t host_start(const RankState& st, const Op& op) const {
    return st.anchor_ns + op.host_start_ns -
           p_.ops[static_cast<size_t>(st.anchor_op)].host_start_ns;
  }

  // Passes every host wait whose compute ops are done: the host resumes at
  // the later of reaching it and now (conditions only become true at compute
  // ends, handled at once, so an older one was true before the host got there).
  bool pass_open_gates(int64_t r) {
    RankState& st = rank(r);
    bool passed = false;
    const int32_t compute = kComputeStream;
    while (true) {
      const int32_t g = gate_op(st);
      if (g == kNoGate) break;
      const Op& op = p_.ops[static_cast<size_t>(g)];
      if (st.streams[compute].done < op.gate_compute) break;
      const int64_t reach = host_start(st, op);
      st.anchor_ns = std::max(reach, now());
      st.anchor_op = g;
      ++st.gate_index;
      passed = true;
    }
    return passed;
  }

  void try_all(int64_t r, const Cause& cause) {
    for (const int s : p_.used_streams) try_start(r, s, cause);
  }

  void try_start(int64_t r, int s, const Cause& cause) {
    RankState& st = rank(r);
    StreamState& ss = st.streams[static_cast<size_t>(s)];
    const std::vector<int32_t>& list = p_.stream_ops[static_cast<size_t>(s)];
    if (ss.busy || ss.done >= static_cast<int32_t>(list.size())) return;
    const int32_t id = list[static_cast<size_t>(ss.done)];
    const Op& op = p_.ops[static_cast<size_t>(id)];
    for (int32_t d = op.dep_begin; d < op.dep_end; ++d) {
      const Dep& dep = p_.deps[static_cast<size_t>(d)];
      if (st.streams[dep.stream].done <= dep.pos) return;
    }
    if (id >= gate_op(st)) return;  // the host has not issued it yet
    ss.busy = 1;
    const int64_t host = host_start(st, op);
    if (op.kind == OpKind::kSegment) {
      start_segment(r, op, host, cause);
    } else if (op.kind == OpKind::kLocal) {
      const int64_t start = std::max(now(), host + op.host_cost_ns);
      if (traced_[static_cast<size_t>(r)]) arrival(r, s) = start;
      sim_.schedule_at(SimTime::ns(start + op.duration_ns), handler_, kLocalEnd,
                       (static_cast<uint64_t>(r) << 8) | static_cast<uint64_t>(s));
    } else {
      const int64_t at = std::max(now(), host + op.host_cost_ns);
      if (traced_[static_cast<size_t>(r)]) arrival(r, s) = at;
      arrive(r, id, op, at);
    }
  }

  // The rank's latest completion so far, and what it was.
  void finished(RankState& st, const Cause& cause) {
    if (now() < st.finish_ns) return;
    st.finish_ns = now();
    st.finish_account = cause.account;
    st.finish_group_start_ns = cause.group_start_ns;
  }

  // What this event ended is the cause; after now, the host was late.
  void charge_gap(RankState& st, int64_t start, const Cause& cause) {
    step_accounts::charge_gap(account(st), st.compute_free_ns, start, now(), cause.account,
                              cause.group_start_ns);
  }

  void start_segment(int64_t r, const Op& op, int64_t host, const Cause& cause) {
    RankState& st = rank(r);
    const int64_t start = std::max(now(), host + op.first_launch_ns);
    charge_gap(st, start, cause);
    st.seg_start_ns = start;
    if (traced_[static_cast<size_t>(r)]) seg_host_start_[static_cast<size_t>(r)] = host;
    st.seg_work_ns = static_cast<double>(op.work_ns) * slowdown_[static_cast<size_t>(r)];
    st.seg_overlap_start_ns = overlap_until(st, start);
    st.seg_tail_end_ns = host + op.tail_ns;
    schedule_check(r, start, st.seg_work_ns);
  }

  // The next look at the running segment, `left` ns of full-speed work after
  // `from` (exec/sm_sharing.h), and not before its launch-bound end.
  void schedule_check(int64_t r, int64_t from, double left) {
    RankState& st = rank(r);
    st.seg_slowed_check = st.comm_active > 0;
    const int64_t at = std::max(sm_.look_at(from, left, st.seg_slowed_check), st.seg_tail_end_ns);
    st.seg_event = sim_.schedule_cancellable_at(SimTime::ns(std::max(at, now())), handler_,
                                                kComputeEnd, static_cast<uint64_t>(r));
  }

  // Time the rank had a transfer in flight, from the step's start until t
  // (t not before the last change).
  static int64_t overlap_until(const RankState& st, int64_t t) {
    return st.overlap.until(t, st.comm_active);
  }

  void comm_changes(int64_t r, int delta) {
    RankState& st = rank(r);
    st.overlap.change(now(), st.comm_active);
    st.comm_active = static_cast<uint8_t>(st.comm_active + delta);
    // Keep the running segment's next look exact: the first transfer slows
    // it down, the end of the last one speeds it up again.
    const int compute = kComputeStream;
    const bool slowed = st.comm_active > 0;
    if (!slowed && st.seg_slowed_check && st.streams[compute].busy && now() >= st.seg_start_ns) {
      sim_.cancel(st.seg_event);
      schedule_check(r, now(), st.seg_work_ns - segment_done_ns(st));
    }
  }

  // Full-speed work the segment did until now.
  double segment_done_ns(const RankState& st) const {
    const int64_t t = now();
    return sm_.work_done(t, st.seg_start_ns, overlap_until(st, t), st.seg_overlap_start_ns);
  }

  // The segment's optimistic end came: finish it, or look again.
  void compute_check(int64_t r) {
    RankState& st = rank(r);
    const double left = st.seg_work_ns - segment_done_ns(st);
    if (left >= 1.0) {
      schedule_check(r, now(), left);
      return;
    }
    compute_end(r);
  }

  void compute_end(int64_t r) {
    RankState& st = rank(r);
    const int compute = kComputeStream;
    StreamState& ss = st.streams[compute];
    const int32_t id = p_.stream_ops[compute][static_cast<size_t>(ss.done)];
    const Op& op = p_.ops[static_cast<size_t>(id)];
    const int64_t t = now();
    const double slowed =
        sm_.slowed_ns(st.seg_work_ns, overlap_until(st, t) - st.seg_overlap_start_ns);
    const int64_t busy = std::min(t - st.seg_start_ns, static_cast<int64_t>(std::ceil(slowed)));
    account(st)[kCompute] += busy;
    account(st)[kLaunchBound] += (t - st.seg_start_ns) - busy;  // the host was late
    if (traced_[static_cast<size_t>(r)])
      trace_segment(r, op, seg_host_start_[static_cast<size_t>(r)], t);
    ss.busy = 0;
    ++ss.done;
    st.compute_free_ns = t;
    finished(st, Cause{kCompute, 0});
    pass_open_gates(r);
    try_all(r, Cause{kCompute, 0});
  }

  void local_end(int64_t r, int s) {
    RankState& st = rank(r);
    StreamState& ss = st.streams[static_cast<size_t>(s)];
    const int32_t id = p_.stream_ops[static_cast<size_t>(s)][static_cast<size_t>(ss.done)];
    const Op& op = p_.ops[static_cast<size_t>(id)];
    if (traced_[static_cast<size_t>(r)]) trace_local(r, op, arrival(r, s), now());
    ss.busy = 0;
    ++ss.done;
    finished(st, Cause{kExposedPcie, 0});
    try_all(r, Cause{kExposedPcie, 0});
  }

  // ---- Collectives ----

  void arrive(int64_t r, int32_t id, const Op& op, int64_t arrival) {
    const int64_t g = layout_.group_of(op.role, r);
    GroupState& gs = groups_[static_cast<size_t>(op.channel)][static_cast<size_t>(g)];
    if (gs.arrived == 0) {
      gs.op = id;
      gs.latest_arrival_ns = arrival;
    }
    CLUSTERSIM_CHECK(gs.op == id, "members of a group reach the same collective");
    gs.latest_arrival_ns = std::max(gs.latest_arrival_ns, arrival);
    if (++gs.arrived < layout_.group_size(op.role)) return;
    gs.arrived = 0;
    if (gs.latest_arrival_ns > now()) {
      sim_.schedule_at(SimTime::ns(gs.latest_arrival_ns), handler_, kGroupStart,
                       pack(op.channel, g));
    } else {
      begin_collective(op.channel, g);
    }
  }

  void begin_collective(int32_t channel, int64_t g) {
    GroupState& gs = groups_[static_cast<size_t>(channel)][static_cast<size_t>(g)];
    const Op& op = p_.ops[static_cast<size_t>(gs.op)];
    gs.start_ns = now();
    ++collectives_;
    const bool moves = layout_.group_size(op.role) > 1 && op.alone_Bps > 0;
    const SimTime at = SimTime::ns(now() + op.latency_ns);
    if (moves) {
      sim_.schedule_at(at, handler_, kTransferBegin, pack(channel, g));
    } else {
      sim_.schedule_at(SimTime::ns(now() + op.latency_ns + op.transfer_ns), handler_,
                       kCollectiveEnd, pack(channel, g));
    }
  }

  const collectives::Footprint& footprint(GroupRole role, int64_t g) {
    std::vector<std::optional<collectives::Footprint>>& cache =
        footprints_[static_cast<size_t>(role)];
    if (cache.empty()) cache.resize(static_cast<size_t>(layout_.group_count(role)));
    std::optional<collectives::Footprint>& slot = cache[static_cast<size_t>(g)];
    if (!slot) {
      const int64_t size = layout_.group_size(role);
      gpus_.resize(static_cast<size_t>(size));
      for (int64_t i = 0; i < size; ++i) gpus_[static_cast<size_t>(i)] = layout_.member(role, g, i);
      slot = flows_.footprint(gpus_);
    }
    return *slot;
  }

  void begin_transfer(int32_t channel, int64_t g) {
    GroupState& gs = groups_[static_cast<size_t>(channel)][static_cast<size_t>(g)];
    const Op& op = p_.ops[static_cast<size_t>(gs.op)];
    const int64_t size = layout_.group_size(op.role);
    const collectives::Footprint& fp = footprint(op.role, g);
    transfers_.start(fp, collectives::busbw_factor(op.op, static_cast<int>(size)), op.alone_Bps,
                     static_cast<double>(op.bytes), pack(channel, g));
    for (int64_t i = 0; i < size; ++i) {
      const int64_t m = layout_.member(op.role, g, i);
      comm_changes(m, +1);
    }
  }

  void end_transfer(uint32_t flow) {
    const uint64_t owner = transfers_.finish(flow);
    end_collective(static_cast<int32_t>(owner >> kGroupBits),
                   static_cast<int64_t>(owner & ((uint64_t{1} << kGroupBits) - 1)),
                   /*transferred=*/true);
  }

  void end_collective(int32_t channel, int64_t g, bool transferred) {
    GroupState& gs = groups_[static_cast<size_t>(channel)][static_cast<size_t>(g)];
    const int32_t id = gs.op;
    const Op& op = p_.ops[static_cast<size_t>(id)];
    const int64_t size = layout_.group_size(op.role);
    const Cause cause{op.exposed, gs.start_ns};
    const int64_t t = now();
    for (int64_t i = 0; i < size; ++i) {
      const int64_t m = layout_.member(op.role, g, i);
      RankState& st = rank(m);
      StreamState& ss = st.streams[op.stream];
      if (traced_[static_cast<size_t>(m)]) {
        trace_collective(m, op, arrival(m, op.stream), gs.start_ns, t);
      }
      ss.busy = 0;
      ++ss.done;
      finished(st, cause);
      if (transferred) comm_changes(m, -1);
    }
    for (int64_t i = 0; i < size; ++i) try_all(layout_.member(op.role, g, i), cause);
  }

  // ---- Trace ----

  // The segment's launches on the host track, then its kernels, which share
  // the segment's time in proportion to their own.
  void trace_segment(int64_t r, const Op& op, int64_t host, int64_t end) {
    const OpLabel& first = p_.kernels[static_cast<size_t>(op.label)];
    trace_.span(r, p_.launch.track, p_.launch.name, p_.launch.category, host,
                host + op.host_cost_ns, first.tag);
    const int64_t start = rank(r).seg_start_ns;
    const double scale =
        op.work_ns > 0 ? static_cast<double>(end - start) / static_cast<double>(op.work_ns) : 0;
    int64_t sum = 0;
    for (int32_t k = 0; k < op.task_count; ++k) {
      const OpLabel& kernel = p_.kernels[static_cast<size_t>(op.label + k)];
      const auto b = start + std::llround(static_cast<double>(sum) * scale);
      sum += kernel.kernel_ns;
      const auto e =
          k + 1 == op.task_count ? end : start + std::llround(static_cast<double>(sum) * scale);
      trace_.span(r, kernel.track, kernel.name, kernel.category, b, e, kernel.tag);
    }
  }

  void trace_local(int64_t r, const Op& op, int64_t start, int64_t end) {
    const OpLabel& l = p_.labels[static_cast<size_t>(op.label)];
    trace_.span(r, l.track, l.name, l.category, start, end, l.tag, l.bytes);
  }

  void trace_collective(int64_t r, const Op& op, int64_t arrival, int64_t start, int64_t end) {
    const OpLabel& l = p_.labels[static_cast<size_t>(op.label)];
    trace_.comm(
        r, l.track, l.name, l.category, start, end,
        CommDetail{op.bytes, layout_.group_size(op.role), arrival, op.algorithm, op.protocol},
        l.tag);
  }

  const Program& p_;
  const Layout& layout_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  collectives::CollectiveFlows flows_;
  FlowTransfers transfers_;
  std::vector<RankState> ranks_;
  std::vector<Accounts> accounts_;  // by rank
  // When ranks are traced (else empty), by rank: host start of the running segment.
  std::vector<int64_t> seg_host_start_;
  std::vector<double> slowdown_;
  std::vector<uint8_t> traced_;
  std::vector<int64_t> arrivals_;  // world x kProgramStreams when ranks are traced, else empty
  std::vector<std::vector<GroupState>> groups_;  // by channel, then group
  std::vector<std::vector<std::optional<collectives::Footprint>>> footprints_;  // by role
  std::vector<int64_t> gpus_;
  SmSharing sm_;

  int64_t collectives_ = 0;
  TraceSink trace_;

 public:
  // Results, read after run().
  int64_t step_end_ns(int64_t* slowest) const {
    int64_t end = 0;
    for (int64_t r = 0; r < layout_.world; ++r) {
      const RankState& st = ranks_[static_cast<size_t>(r)];
      for (int s = 0; s < kProgramStreams; ++s) {
        CLUSTERSIM_CHECK(st.streams[static_cast<size_t>(s)].done ==
                             static_cast<int32_t>(p_.stream_ops[static_cast<size_t>(s)].size()),
                         "rank " + std::to_string(r) + " finished every " +
                             std::string(p_.stream_names[static_cast<size_t>(s)]) +
                             " operation (a deadlock otherwise)");
      }
      if (st.finish_ns > end) {
        end = st.finish_ns;
        *slowest = r;
      }
    }
    return end;
  }
  std::array<double, kAccountCount> summed_accounts(int64_t step_end) const {
    std::array<double, kAccountCount> sum{};
    for (const RankState& st : ranks_) {
      Accounts v = accounts_[static_cast<size_t>(&st - ranks_.data())];
      close_rank(v, st.finish_account, st.finish_ns, st.compute_free_ns, st.finish_group_start_ns,
                 step_end);
      for (int a = 0; a < kAccountCount; ++a) {
        sum[static_cast<size_t>(a)] += static_cast<double>(v[static_cast<size_t>(a)]);
      }
    }
    return sum;
  }
  uint64_t events() const { return sim_.events_processed(); }
  int64_t collectives() const { return collectives_; }
  std::vector<TraceRecord> take_trace() { return trace_.take(); }
};

}  // namespace

EngineResult run_program(const Program& program, const Layout& layout,
                         const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const EngineOptions& options) {
  CLUSTERSIM_CHECK(layout.world > 0 && layout.world <= cluster.gpu_count(),
                   "world size " + std::to_string(layout.world) + " within the cluster's " +
                       std::to_string(cluster.gpu_count()) + " GPUs");
  Engine engine(cluster, profile, options, program, layout);
  engine.run();
  EngineResult out;
  out.step_end_ns = engine.step_end_ns(&out.slowest_rank);
  out.summed_accounts = engine.summed_accounts(out.step_end_ns);
  out.events = engine.events();
  out.collectives = engine.collectives();
  out.trace = engine.take_trace();
  return out;
}

}  // namespace clustersim::workloads
