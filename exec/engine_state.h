// The engine's state and event handling (internal to exec/; engine.h is the
// API). Defined in five files: engine.cc (host issue, gates, streams,
// compute segments, local operations, trace), engine_chain.cc (segments
// that run on into the next without an event), engine_comm.cc
// (collectives and send/recv), engine_members.cc (a timeline's members:
// their real groups, the time accounts of those of unequal speed) and
// engine_results.cc (results, and run_programs).
//
// A "rank" of the engine is a timeline: one real rank, or ranks that move in
// step -- the members of a tensor-parallel group, or every identical rank of
// a pipeline stage (exec/timelines.h, TimelineMap). Its groups are those of
// the timelines' layout, each standing for the members' real groups, one
// flow apiece.
//
// Units: nanoseconds. Ownership: refers to the job, layout, cluster, profile
// and options it was built with; they must outlive it. Thread safety: none;
// one engine per run.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "collectives/collective_flows.h"
#include "collectives/group_collectives.h"
#include "exec/engine.h"
#include "exec/flat_hash_map.h"
#include "exec/flow_transfers.h"
#include "exec/sm_sharing.h"
#include "exec/timelines.h"
#include "exec/trace_sink.h"
#include "exec/tuned_collectives.h"
#include "sim/random_stream.h"
#include "sim/simulator.h"

namespace clustersim::workloads::engine_detail {

using step_accounts::Account;
using step_accounts::Accounts;

constexpr int32_t kNoGate = std::numeric_limits<int32_t>::max();

// Streams run in order: the op at position `done` is the running one (busy)
// or the next to start.
struct StreamState {
  int32_t done : 31 = 0;  // ops completed
  uint32_t busy : 1 = 0;
};
static_assert(sizeof(StreamState) == 4);

// A rank's state, in four cache lines of its own: line 0 is all a look at
// the running segment touches (most events), lines 1-3 what its end and
// the next start touch (host, streams, the time accounts). At a million
// ranks every event misses the cache on its rank; EventHandler::prefetch
// fetches these lines ahead.
struct alignas(64) RankState {
  // The running compute segment.
  double seg_work_ns = 0;            // at full speed, straggling included
  int64_t seg_overlap_start_ns = 0;  // overlap_until() at the segment's start
  int64_t seg_start_ns = 0;
  int64_t seg_tail_end_ns = 0;
  TransferOverlap overlap;  // time with a transfer in flight (comm_active of them now)
  // The generation of its pending look (compute_check): a look moved by
  // comm_changes() bumps it, and the one left behind in the queue is stale.
  uint32_t look_gen = 0;
  uint8_t comm_active = 0;        // transfers in flight
  bool seg_slowed_check = false;  // the next look assumed a transfer in flight
  bool traced = false;            // its operations are recorded
  // >= 0: the running segment is the first of a chain that ends with the
  // segment at this compute position, whose look alone is queued (plan_chain).
  int32_t chain_end = -1;
  Account finish_account = step_accounts::kIdle;  // what ended at finish_ns

  alignas(64) const Program* p = nullptr;
  // Its first kInlineStreams streams; the others in Engine::streams_ (from
  // Engine::overflow_base_).
  std::array<StreamState, 8> near{};
  int64_t anchor_ns = 0;       // host: at anchor_host_ns of the program's host time...
  int64_t anchor_host_ns = 0;  // ... the rank's host was at anchor_ns
  int32_t gate_index = 0;      // next entry of Program::gates not passed

  alignas(64) double slowdown = 1;  // on its segments' work: speed spread and straggling
  int64_t compute_free_ns = 0;      // when the compute stream last went idle
  int64_t finish_ns = 0;
  int64_t finish_group_start_ns = 0;
  Accounts accounts{};
};
static_assert(sizeof(RankState) == 256 && offsetof(RankState, p) == 64 &&
              offsetof(RankState, slowdown) == 128);

// What starting the op at a stream position needs, by program, stream and
// position: try_start reads these 48 bytes where the stream's op id and
// then the 200-byte Op would be two cache misses at scale.
struct StartInfo {
  int32_t id = 0;  // the op
  OpKind kind = OpKind::kSegment;
  // Compute segments: the next segment may run on from this one without an
  // event (nothing but the compute stream waits on it; engine_chain.cc).
  bool chains = false;
  // Bit t: stream t may start its next op when this op ends (its own stream,
  // and those with an op waiting on this one). 0 in programs of more than
  // kWakeMaskStreams streams, whose wake() goes by stream (Engine::wakes_).
  uint16_t wakes = 0;
  int32_t dep_begin = 0;
  int32_t dep_end = 0;
  int64_t host_start_ns = 0;
  int64_t lead_ns = 0;    // segments: first_launch_ns; other ops: host_cost_ns
  int64_t length_ns = 0;  // segments: work_ns; kLocal: duration_ns
  int64_t tail_ns = 0;    // segments
};
static_assert(sizeof(StartInfo) == 48);
inline constexpr size_t kWakeMaskStreams = 16;

// The collective a group runs now (one per group and channel).
struct GroupState {
  int32_t arrived = 0;
  int32_t op = -1;  // in the program of rank `rank`, the first to arrive
  int64_t rank = 0;
  int64_t latest_arrival_ns = 0;
  int64_t start_ns = 0;
  int32_t tuned = -1;  // explicit groups: the tuner's answer
};

// What explicit group g's collectives need, computed once.
struct GroupShape {
  std::optional<collectives::GroupGeometry> geometry;
  std::optional<collectives::Footprint> footprint;
};

// A matched send/recv pair; its sides by kSender, kReceiver.
inline constexpr int kSender = 0;
inline constexpr int kReceiver = 1;
struct P2p {
  std::array<int64_t, 2> rank{};  // timelines
  std::array<int32_t, 2> op{};
  std::array<int64_t, 2> ready_ns{};  // when each side was there
  int64_t start_ns = 0;
  int32_t tuned = -1;
  // A ring inside the timeline (a merged dim's: async TP's, or context
  // parallelism's where a timeline spans cp): the sender's member i sends to
  // its neighbour shift places on in that ring; else 0.
  int32_t shift = 0;
};

struct P2pKey {
  int64_t src;
  int64_t dst;
  int64_t tag;
  int32_t seq;
  int32_t shift;  // P2p::shift
  bool operator==(const P2pKey&) const = default;
};

// The engine's cache keys' hash: the first word times a golden-ratio
// constant, then each further word folded in as boost::hash_combine does,
// with a constant of its own per position.
inline size_t hash_words(std::initializer_list<uint64_t> words) {
  static constexpr std::array<uint64_t, 4> kSalts = {0x7F4A7C159E3779B9ULL, 0x165667B19E3779F9ULL,
                                                     0x27D4EB2F165667C5ULL, 0x9E3779B97F4A7C15ULL};
  const uint64_t* w = words.begin();
  uint64_t h = *w * 0x9E3779B97F4A7C15ULL;
  for (size_t i = 1; i < words.size(); ++i) {
    h ^= w[i] + kSalts[(i - 1) % kSalts.size()] + (h << 6) + (h >> 2);
  }
  return static_cast<size_t>(h);
}

struct P2pKeyHash {
  size_t operator()(const P2pKey& k) const {
    return hash_words({static_cast<uint64_t>(k.src), static_cast<uint64_t>(k.dst),
                       static_cast<uint64_t>(k.tag), static_cast<uint64_t>(k.seq),
                       static_cast<uint64_t>(k.shift)});
  }
};

// A send/recv pair of timelines and how their members pair (P2p::shift, the
// ring's role), for the cache of its members' pairs.
struct TimelinePairKey {
  int64_t src;
  int64_t dst;
  int32_t shift;
  GroupRole ring;
  bool operator==(const TimelinePairKey&) const = default;
};
struct TimelinePairKeyHash {
  size_t operator()(const TimelinePairKey& k) const {
    return hash_words({static_cast<uint64_t>(k.src), static_cast<uint64_t>(k.dst),
                       static_cast<uint64_t>(k.shift) << 8 | static_cast<uint64_t>(k.ring)});
  }
};

// A send/recv pair of ranks (src, dst), for the geometry cache.
struct RankPairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& k) const {
    return hash_words({static_cast<uint64_t>(k.first), static_cast<uint64_t>(k.second)});
  }
};

struct PendingP2p {
  int64_t rank = 0;
  int32_t op = 0;
  int64_t ready_ns = 0;
};

enum EventKinds : sim::EventKind {
  kComputeEnd,     // data: look generation << 32 | rank
  kGroupStart,     // data: channel << 40 | group
  kTransferBegin,  // data: channel << 40 | group
  kTransferEnd,    // data: the transfer (FlowTransfers)
  kCollectiveEnd,  // data: channel << 40 | group (no transfer phase)
  kSolveFlows,     // the transfers that started or ended at this instant changed rates
  kLocalEnd,       // data: rank << 8 | stream
  kEventKindCount
};

constexpr int kGroupBits = 40;
// The channel field of an explicit group's events (its group is global).
constexpr int32_t kExplicitChannel = (1 << 23) - 1;
// The channel field of a send/recv pair's events (the group field: its id).
constexpr int32_t kP2pChannel = (1 << 23) - 2;

inline uint64_t pack(int32_t channel, int64_t group) {
  return (static_cast<uint64_t>(channel) << kGroupBits) | static_cast<uint64_t>(group);
}

// Thrown inside a grouped run when the send/recv pairs of a timeline's
// members were tuned apart, or its real TP groups move at different rates
// alone (flows moving apart throw FlowTransfers::RatesApart): the members
// did not move in step, and run_programs runs again with one timeline per
// rank.
struct TimelinesDiverged {};

// Thrown when a flow's footprint touches a link of a TP group's footprint
// while the engine times TP collectives in closed form (see
// Engine::closed_tp_): run_programs runs again without it.
struct TpLinksShared {};

// A TP group's rate alone on its footprint for one op's busbw factor and
// uncontended rate (Engine::lone_rate).
struct LoneKey {
  int64_t group;
  double busbw;
  double alone_Bps;
  bool operator==(const LoneKey&) const = default;
};
struct LoneKeyHash {
  size_t operator()(const LoneKey& k) const {
    return hash_words({static_cast<uint64_t>(k.group), std::bit_cast<uint64_t>(k.busbw),
                       std::bit_cast<uint64_t>(k.alone_Bps)});
  }
};

// The cause a compute stream's idle gap is charged to.
struct Cause {
  Account account = step_accounts::kIdle;
  int64_t group_start_ns = 0;  // collectives: the part before it is sync wait
};

class Engine : public sim::EventHandler {
 public:
  // merged: the mesh dims a timeline spans, as exec/timelines.h's plan
  // allows (none: one timeline per rank). closed_form_tp: time TP collectives
  // in closed form where their links are their own (engine_private_tp.cc).
  // bundles: how a timeline collective's member flows are solved
  // (FlowTransfers::Mode: one flow where the fabric keeps them copies of
  // each other, the quotient by link class, or every flow).
  Engine(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
         const EngineOptions& options, const EngineJob& job, const Layout& layout,
         const MeshDimSet& merged, bool closed_form_tp, FlowTransfers::Mode bundles);

  void run();
  void on_event(sim::Simulator& sim, const sim::Event& event) override;
  void prefetch(const sim::Event& event) const override;

  // Results, read after run().
  bool finished() const;
  Unfinished unfinished() const;
  int64_t step_end_ns(int64_t* slowest) const;  // slowest: a real rank
  std::array<double, step_accounts::kAccountCount> summed_accounts(int64_t step_end) const;
  // Stale looks are not counted: they stand for the cancelled events they replace.
  uint64_t events() const { return sim_.events_processed() - stale_looks_; }
  int64_t collectives() const { return collectives_; }
  EngineStats stats() const;
  // The traced ranks' records (a timeline's, once for each traced member).
  std::vector<TraceRecord> take_trace();

 private:
  int64_t now() const { return virtual_now_ >= 0 ? virtual_now_ : sim_.now().count_ns(); }
  RankState& rank(int64_t r) { return ranks_[static_cast<size_t>(r)]; }
  const Program& prog(int64_t r) const { return *ranks_[static_cast<size_t>(r)].p; }
  static Accounts& account(RankState& st) { return st.accounts; }
  static constexpr int kInlineStreams = 8;
  StreamState& stream(RankState& st, int s) {
    return s < kInlineStreams
               ? st.near[static_cast<size_t>(s)]
               : streams_[static_cast<size_t>(overflow_base_[index(st)] + s - kInlineStreams)];
  }
  const StreamState& stream(const RankState& st, int s) const {
    return s < kInlineStreams
               ? st.near[static_cast<size_t>(s)]
               : streams_[static_cast<size_t>(overflow_base_[index(st)] + s - kInlineStreams)];
  }
  size_t index(const RankState& st) const { return static_cast<size_t>(&st - ranks_.data()); }
  bool traced(int64_t r) const { return ranks_[static_cast<size_t>(r)].traced; }
  // The work (ns at full speed) of the segment of `length_ns` at compute
  // position k of rank st: its speed spread, straggling and jitter. Inline:
  // every segment start and chain look asks, and without jitter it is one
  // multiplication.
  double segment_work(const RankState& st, int32_t k, int64_t length_ns) const {
    const double work = static_cast<double>(length_ns) * st.slowdown;
    return jitter_sd_ == 0 ? work : work * jitter_factor(st, k);
  }
  // exp(sd z) for the segment at compute position k of rank st (engine.cc).
  double jitter_factor(const RankState& st, int32_t k) const;
  // When traced rank r reached (or started) the op running on stream s.
  int64_t& arrival(int64_t r, int s) {
    return arrivals_[static_cast<size_t>(stream_base_[static_cast<size_t>(r)] + s)];
  }
  bool holds(const RankState& st, int32_t dep_begin, int32_t dep_end) const;

  // ---- Host, streams, compute (engine.cc) ----
  int32_t gate_op(const RankState& st) const;
  // When rank st's host starts issuing an op the program issues at
  // op_host_start_ns (Op::host_start_ns) of its host time.
  static int64_t host_start(const RankState& st, int64_t op_host_start_ns) {
    return st.anchor_ns + op_host_start_ns - st.anchor_host_ns;
  }
  // Stream s's start infos in rank st's program.
  const std::vector<StartInfo>& starts(const RankState& st, int s) const {
    return starts_[static_cast<size_t>(st.p - job_.programs.data())][static_cast<size_t>(s)];
  }
  // Passes the gates whose dependencies hold; whether it passed any.
  bool pass_open_gates(int64_t r);
  void try_all(int64_t r, const Cause& cause) {
    for (const int s : prog(r).used_streams) try_start(r, s, cause);
  }
  // After an op of stream s ended: passes open gates and tries the streams
  // that op can have made ready (all of them when a gate passed): s itself
  // and those with an op waiting on that very op (StartInfo::wakes), in
  // ascending order, so the streams that start do so in the same order as
  // with try_all. An op waiting on an earlier op of s was tried when that
  // one ended, or when its own stream reached it: trying it again cannot
  // start it (at 8,192 ranks of a 4D step three tries in four failed so).
  void wake(int64_t r, int s, const Cause& cause) {
    if (pass_open_gates(r)) {
      try_all(r, cause);
      return;
    }
    const RankState& st = rank(r);
    const std::vector<StartInfo>& ended = starts(st, s);
    uint32_t mask = ended[static_cast<size_t>(stream(st, s).done - 1)].wakes;
    if (mask == 0) {
      const auto program = static_cast<size_t>(st.p - job_.programs.data());
      for (const uint8_t w : wakes_[program][static_cast<size_t>(s)]) try_start(r, w, cause);
      return;
    }
    for (; mask != 0; mask &= mask - 1) try_start(r, std::countr_zero(mask), cause);
  }
  void try_start(int64_t r, int s, const Cause& cause);
  void finished(RankState& st, const Cause& cause);
  void charge_gap(RankState& st, int64_t start, const Cause& cause);
  void start_segment(int64_t r, const StartInfo& op, int64_t host, const Cause& cause);
  void schedule_check(int64_t r, int64_t from, double left);
  void queue_look(int64_t r, int64_t at);
  static int64_t overlap_until(const RankState& st, int64_t t) {
    return st.overlap.until(t, st.comm_active);
  }
  void comm_changes(int64_t r, int delta);
  double segment_done_ns(const RankState& st) const {
    const int64_t t = now();
    return sm_.work_done(t, st.seg_start_ns, overlap_until(st, t), st.seg_overlap_start_ns);
  }
  void compute_check(int64_t r);
  void compute_end(int64_t r);
  // Chains of segments (engine_chain.cc).
  void mark_chainable_segments();
  // Where a segment may chain into the next through a TP collective timed
  // in closed form (one timeline per TP group): chain_tp_.
  void mark_tp_chains();
  // The TP collective op of rank st's program that segment k chains
  // through, or -1.
  int32_t chain_tp(const RankState& st, int32_t k) const {
    if (!tp_chains_) return -1;
    const std::vector<int32_t>& v = chain_tp_[static_cast<size_t>(st.p - job_.programs.data())];
    return static_cast<size_t>(k) < v.size() ? v[static_cast<size_t>(k)] : -1;
  }
  // A closed-form TP collective of timeline group g: latency and transfer (ns).
  int64_t closed_tp_ns(const Op& op, int64_t g);
  // A chain's TP collective begun at `start` inside run_chain: ends virtually.
  void begin_chained_tp(int32_t channel, int64_t g, int64_t start);
  // Inside run_chain(), ending a chain's segment at virtual_now_.
  bool in_chain() const { return virtual_now_ >= 0; }
  int32_t plan_chain(int64_t r, int64_t* look_ns);
  void run_chain(int64_t r, int64_t until);
  void break_chain(int64_t r);
  void local_end(int64_t r, int s);
  // A chain's TP collective in flight on timeline r (end_ns < 0: none).
  struct ChainedTp {
    int64_t end_ns = -1;
    int32_t channel = 0;
  };
  std::vector<ChainedTp> chained_tp_;  // by timeline, when chain_tp_ is not empty
  bool tp_in_chain(int64_t r) const {
    return tp_chains_ && chained_tp_[static_cast<size_t>(r)].end_ns >= 0;
  }
  // An op of stream s of rank r completed with `cause`.
  void op_done(int64_t r, int s, const Cause& cause);

  // ---- Timelines' members (engine_members.cc) ----
  // Real rank of member c of timeline t.
  int64_t real_rank(int64_t t, int64_t c) const { return map_.real_rank(t, c); }
  // Real groups of `role` a collective of a timeline group stands for.
  int64_t copies(GroupRole role) const { return map_.copies(role); }
  // The c-th of them, for timeline group g.
  int64_t real_group(GroupRole role, int64_t g, int64_t c) const {
    return map_.real_group(role, g, c);
  }
  // The real pair of member c of send/recv pair p.
  std::pair<int64_t, int64_t> member_pair(const P2p& p, int64_t c) const;
  // Each timeline's slowdown is its slowest member's; with members of
  // unequal speed (factors by real rank), their accounts are kept apart.
  void set_member_speeds(const std::vector<double>& factors);
  bool uneven() const { return uneven_; }
  // A segment of timeline t starts at `start` after its compute stream was
  // free from `free`, what it waited for ending at `cause_end`, its host
  // issue allowing it from `host_ready`: each member's own gap.
  void members_start(int64_t t, int64_t free, int64_t start, int64_t cause_end, int64_t host_ready,
                     const Cause& cause);
  // Timeline t's running segment ended now after `busy` ns of compute.
  void members_end(int64_t t, int64_t busy);
  // A gate of timeline t passed: its host resumes at `anchor`, having reached
  // the gate at `reach`.
  void members_pass_gate(int64_t t, int64_t reach, int64_t anchor);
  // Member c of timeline t's finish and closed accounts.
  int64_t member_finish(const RankState& st, size_t member) const;
  Accounts closed_member(const RankState& st, size_t member, int64_t step_end) const;

  // ---- TP collectives in closed form (engine_private_tp.cc) ----
  // Whether TP collectives can be timed in closed form, and if so marks the
  // links of every TP group's footprint (tp_links_).
  bool mark_private_tp_links();
  // Throws TpLinksShared when `fp` (another group's or pair's) loads a
  // marked link.
  void check_not_tp_links(const collectives::Footprint& fp) const;
  // The rate of a flow alone on TP group g's footprint, as the max-min
  // solver would give it.
  double lone_rate(int64_t g, double busbw, double alone_Bps);

  // ---- Collectives and send/recv (engine_comm.cc) ----
  GroupState& group_state(int32_t channel, int64_t g) {
    return channel == kExplicitChannel
               ? xgroups_[static_cast<size_t>(g)]
               : groups_[static_cast<size_t>(channel)][static_cast<size_t>(g)];
  }
  const Op& group_op(const GroupState& gs) const {
    return prog(gs.rank).ops[static_cast<size_t>(gs.op)];
  }
  // Timelines in group g; real_size: the ranks in each of its real groups.
  int64_t group_size(int32_t channel, GroupRole role, int64_t g) const;
  int64_t real_size(int32_t channel, GroupRole role, int64_t g) const;
  int64_t member(int32_t channel, GroupRole role, int64_t g, int64_t i) const;
  // Walks the members of group g on `channel` in ring order: a role group
  // with evenly spaced members (Layout::member_step) by adding its step.
  struct Members {
    const Engine& engine;
    int32_t channel;
    GroupRole role;
    int64_t g;
    int64_t base;
    int64_t step;  // 0: ask member()
    int64_t operator[](int64_t i) const {
      return step != 0 ? base + i * step : engine.member(channel, role, g, i);
    }
  };
  Members members(int32_t channel, GroupRole role, int64_t g) const {
    const int64_t step = channel == kExplicitChannel ? 0 : member_steps_[static_cast<size_t>(role)];
    return Members{*this, channel, role, g, step != 0 ? tl_.member(role, g, 0) : 0, step};
  }
  // Fetches rank r's state ahead of a loop over many ranks' states.
  void prefetch_rank(int64_t r) const {
    const char* st = reinterpret_cast<const char*>(&ranks_[static_cast<size_t>(r)]);
    for (size_t line = 0; line < sizeof(RankState); line += 64) __builtin_prefetch(st + line);
  }
  // How many members ahead a member loop prefetches.
  static constexpr int64_t kPrefetchAhead = 8;
  // The stream member m runs the collective of explicit group g on.
  int member_stream(int64_t m, int64_t g) const;
  void arrive(int64_t r, int32_t id, const Op& op, int64_t arrival);
  void begin_collective(int32_t channel, int64_t g);
  const collectives::Footprint& footprint(GroupRole role, int64_t g);
  void begin_transfer(int32_t channel, int64_t g);
  void end_transfer(uint32_t transfer);
  void end_collective(int32_t channel, int64_t g, bool transferred);
  int32_t tune(const collectives::GroupGeometry& geometry, collectives::CollectiveOp op,
               int64_t bytes, bool forced, int64_t rank, int32_t op_id);
  void p2p_arrive(int64_t r, int32_t id, const Op& op, int64_t ready);
  // A pair of timelines' member pairs (indices into pair_shapes_, and
  // their footprints as one transfer's bundle), and the tuning they agree
  // on by bytes: built the first time the pair meets, tuned the first time
  // at a size (the members' pairs each tuned, TimelinesDiverged unless they
  // agree).
  struct TimelinePair {
    std::vector<uint32_t> shapes;
    std::vector<const collectives::Footprint*> footprints;
    std::vector<std::pair<int64_t, int32_t>> tuned;  // (bytes, TunedCollectives id)
  };
  TimelinePair& timeline_pair(const P2p& p);
  // The send/recv pair (src, dst) of real ranks in pair_shapes_, added when new.
  uint32_t pair_index(int64_t src, int64_t dst);
  void begin_p2p(size_t id);
  void end_p2p(size_t id, bool transferred);

  // ---- Trace (engine.cc) ----
  void trace_issued(int64_t r, int32_t begin, int32_t end);
  void trace_segment(int64_t r, const Op& op, int64_t host, int64_t end);
  void trace_local(int64_t r, const Op& op, int64_t start, int64_t end);
  void trace_collective(int64_t r, const Op& op, int64_t arrival, int64_t start, int64_t end,
                        int64_t group_size, std::string_view algorithm, std::string_view protocol);

  const topology::Cluster& cluster_;
  const EngineJob& job_;
  // By program and stream: the streams an op ending on that stream can make
  // ready (see wake()).
  std::vector<std::vector<std::vector<uint8_t>>> wakes_;
  // By program, stream and position (see StartInfo).
  std::vector<std::vector<std::vector<StartInfo>>> starts_;
  const Layout& layout_;  // the real ranks
  const TimelineMap map_;  // timelines and their members
  const int64_t k_;        // ranks per timeline: map_.k
  const Layout& tl_;       // the timelines: map_.tl (layout_'s dims when k_ == 1)
  // Members of unequal speed (else empty), by timeline t * k_ + member:
  // speed over the slowest member's (<= 1), how long before the timeline
  // it was free or started its running segment (ns), how far ahead its host
  // is, and its accounts.
  bool uneven_ = false;     // member_ratio_ is not empty
  bool tp_chains_ = false;  // chain_tp_ is not empty
  std::vector<double> member_ratio_;
  std::vector<int64_t> member_lead_;
  std::vector<int64_t> member_host_ahead_;  // how much earlier its host issues (ns)
  std::vector<Accounts> member_accounts_;
  // TP collectives in closed form: each TP group's links are its own (no
  // other flow loads them: checked as footprints are made) and one TP
  // collective of a group moves at a time, on the compute stream, so each
  // moves at its rate alone and nothing waits on its transfer but what waits
  // on its end: one event instead of a transfer's begin, end and solves.
  bool closed_tp_ = false;
  std::vector<uint8_t> tp_links_;                    // by solver link id: loaded by a TP group
  std::vector<std::vector<uint8_t>> closed_tp_ops_;  // by program and op: timed so
  // By program and compute position: the closed-form TP collective a
  // segment chains through into the next (-1: none); empty unless one
  // timeline per TP group with closed-form TP collectives.
  std::vector<std::vector<int32_t>> chain_tp_;
  uint64_t chained_tp_ends_ = 0;
  std::unique_ptr<collectives::CollectiveFlows> lone_flows_;  // for lone_rate
  FlatHashMap<LoneKey, double, LoneKeyHash> lone_rates_;
  const topology::Cluster* healthy_fabric_ = nullptr;
  collectives::Routing routing_ = collectives::Routing::kAdaptive;
  const collectives::HardwareProfile& profile_;
  const RankGroups* rg_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  collectives::CollectiveFlows flows_;
  FlowTransfers transfers_;
  std::vector<RankState> ranks_;
  // EngineOptions::segment_jitter_sd and, by rank when it is > 0, the
  // streams its draws come from (else empty).
  double jitter_sd_ = 0;
  std::vector<sim::RandomStream> jitter_;
  std::vector<StreamState> streams_;    // streams past the inline ones: by rank, then stream
  std::vector<int64_t> overflow_base_;  // by rank: its stream kInlineStreams in streams_
  std::vector<int64_t> stream_base_;    // by rank, + 1: its first stream among all ranks'
  // When ranks are traced (else empty), by rank: host start of the running segment.
  std::vector<int64_t> seg_host_start_;
  std::vector<int64_t> arrivals_;                // like streams_ when ranks are traced, else empty
  std::vector<std::vector<GroupState>> groups_;  // role channels: by channel, then group
  std::vector<GroupState> xgroups_;              // explicit groups
  std::vector<GroupShape> xshapes_;              // explicit groups
  std::vector<std::vector<std::optional<collectives::Footprint>>> footprints_;  // by role
  std::vector<int64_t> gpus_;
  // A timeline group's member footprints as one transfer's bundle (its
  // real groups' footprints), by role, then timeline group: built the first
  // time the group moves bytes (real_group per copy was a sixth of the 4D
  // step's time).
  std::vector<std::vector<std::vector<const collectives::Footprint*>>> bundles_;
  const std::vector<const collectives::Footprint*>& bundle(GroupRole role, int64_t g);
  std::array<int64_t, kGroupRoles> member_steps_{};  // Layout::member_step by role
  SmSharing sm_;
  TunedCollectives tuned_;
  step_accounts::Account tail_account_ = step_accounts::kIdle;  // EngineOptions::tail_account
  const EngineProgressFn& progress_;                            // EngineOptions::progress
  int64_t ops_done_ = 0;                                        // over every rank, for progress_
  int64_t ops_total_ = 0;                                       // every rank's program's ops
  std::vector<P2p> p2ps_;
  std::vector<size_t> free_p2ps_;
  // Looked up, never iterated: the order of a hash map cannot reach results.
  FlatHashMap<P2pKey, PendingP2p, P2pKeyHash> pending_p2p_;
  // Send/recv pairs' geometry and footprint, computed once: pair_shapes_[pairs_[(src, dst)]].
  FlatHashMap<std::pair<int64_t, int64_t>, uint32_t, RankPairHash> pairs_;
  // (A deque: references to its shapes stay valid while pairs are added.)
  std::deque<std::pair<collectives::GroupGeometry, collectives::Footprint>> pair_shapes_;
  FlatHashMap<TimelinePairKey, uint32_t, TimelinePairKeyHash> timeline_pairs_of_;
  std::vector<TimelinePair> timeline_pairs_;
  int64_t collectives_ = 0;
  uint64_t stale_looks_ = 0;
  uint64_t relooks_ = 0;
  std::array<uint64_t, kEventKindCount> by_kind_{};  // delivered, stale looks included
  int64_t virtual_now_ = -1;  // >= 0 while a chain's segment ends are handled
  uint64_t chained_ends_ = 0;
  TraceSink trace_;
  // By traced timeline: its traced members (real ranks, ascending).
  std::map<int64_t, std::vector<int64_t>> traced_members_;
};

}  // namespace clustersim::workloads::engine_detail
