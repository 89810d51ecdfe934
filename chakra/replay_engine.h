// The replay's event loop (internal to chakra/; chakra_replay.h states the
// semantics): every rank's compiled graph (replay_template.h) on the
// cluster, node by node. Defined in three files: replay_engine.cc
// (dependencies, compute, host and copy resources), replay_collectives.cc
// (collectives and send/recv) and replay_report.cc (deadlock report and
// result).
//
// Units: nanoseconds inside. Ownership: the engine refers to the cluster,
// profile, job, options and templates it was built with; they must outlive
// it. Thread safety: none; one engine per replay.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chakra/chakra_replay.h"
#include "chakra/replay_template.h"
#include "collectives/collective_flows.h"
#include "exec/counter_array.h"
#include "exec/flow_transfers.h"
#include "exec/pending_table.h"
#include "exec/sm_sharing.h"
#include "exec/step_accounts.h"
#include "exec/trace_sink.h"
#include "exec/tuned_collectives.h"
#include "sim/simulator.h"

namespace clustersim::workloads::chakra::replay {

using collectives::CollectiveOp;
using sim::SimTime;
using namespace step_accounts;  // NOLINT: the step simulator's accounts

struct ReadyEntry {
  int64_t ready_ns = 0;  // collectives: 0
  uint64_t order = 0;    // node id; collectives: position in the slot
  int32_t node = 0;
  Cause cause;
};

struct LaterFirst {
  bool operator()(const ReadyEntry& a, const ReadyEntry& b) const {
    return a.ready_ns != b.ready_ns ? a.ready_ns > b.ready_ns : a.order > b.order;
  }
};

struct alignas(64) ResourceState {
  std::vector<ReadyEntry> ready;  // min-heap by (ready_ns, node id)
  int32_t running = -1;
  bool slowed_check = false;  // compute: the next look assumed a transfer in flight
  int64_t start_ns = 0;
  // Compute: work at full speed, and overlap_until() at its start.
  double work_ns = 0;
  int64_t overlap_start_ns = 0;
  sim::EventId event;
};

struct ChannelState {
  std::vector<ReadyEntry> ready;  // min-heap by position
  int32_t next = 0;               // position of the collective to run next
  bool arrived = false;           // the one at `next` reached its group
  int64_t arrival_ns = 0;
};

struct alignas(64) RankState {
  int32_t done = 0;
  int32_t compute_running = 0;
  int32_t comm_active = 0;
  Account finish_account = kIdle;
  int64_t compute_busy_since = 0;
  int64_t compute_free_ns = 0;
  TransferOverlap overlap;  // time with a transfer in flight (comm_active of them now)
  int64_t finish_ns = 0;
  int64_t finish_group_start_ns = 0;
  // Second cache line: the time accounts (ns) and where the counters start.
  Accounts accounts{};
  int64_t counter_begin = 0;
};

struct GroupState {
  int32_t arrived = 0;
  int32_t seq = -1;
  int64_t first_rank = 0;
  int32_t first_node = 0;
  int64_t start_ns = 0;
  int32_t tuned = -1;
  std::optional<collectives::GroupGeometry> geometry;
  std::optional<collectives::Footprint> footprint;
};

struct P2p {
  int64_t src = 0;
  int64_t dst = 0;
  int32_t send_node = 0;
  int32_t recv_node = 0;
  int64_t send_ready_ns = 0;
  int64_t recv_ready_ns = 0;
  int64_t start_ns = 0;
  int32_t tuned = -1;
  const collectives::Footprint* footprint = nullptr;
};

struct P2pKey {
  int64_t src;
  int64_t dst;
  int64_t tag;
  int32_t seq;
  bool operator==(const P2pKey&) const = default;
};

struct P2pKeyHash {
  size_t operator()(const P2pKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.src) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.dst) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.tag) + 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.seq) + 0x27D4EB2F165667C5ULL + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

struct PendingP2p {
  int64_t rank = 0;
  int32_t node = 0;
  int64_t ready_ns = 0;
};

enum EventKinds : sim::EventKind {
  kNodeEnd,        // data: rank << 16 | resource (host work and copies)
  kComputeCheck,   // data: rank << 16 | resource
  kTransferBegin,  // data: comm (kP2pBit | p2p id, or group id)
  kCommEnd,        // data: comm, no transfer phase
  kTransferEnd,    // data: flow id
  kSolveFlows,
};

constexpr uint64_t kP2pBit = uint64_t{1} << 63;

inline uint64_t pack(int64_t rank, int32_t resource) {
  return (static_cast<uint64_t>(rank) << 16) | static_cast<uint64_t>(resource);
}

struct WorkItem {
  int64_t rank;
  int32_t node;
  Cause cause;
};

class ReplayEngine : public sim::EventHandler {
 public:
  ReplayEngine(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
               const ReplayJob& job, const ReplayOptions& options,
               const std::vector<Template>& templates, const GpuComputeSpec& spec);

  void run();

  void on_event(sim::Simulator& sim, const sim::Event& event) override;

  // Throws ConfigError naming stuck nodes when some never ran.
  void check_finished() const;
  StepResult result(const GpuComputeSpec& spec);

 private:
  int64_t now() const { return sim_.now().count_ns(); }
  const Template& tpl(int64_t r) const {
    return t_[static_cast<size_t>(job_.template_of[static_cast<size_t>(r)])];
  }
  RankState& rank(int64_t r) { return ranks_[static_cast<size_t>(r)]; }
  ResourceState& resource(int64_t r, int32_t res) {
    return resources_[static_cast<size_t>(resource_begin_[static_cast<size_t>(r)] + res)];
  }
  ChannelState& channel(int64_t r, int32_t slot) {
    return channels_[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)] + slot)];
  }
  int32_t group_of(int64_t r, int32_t slot) const {
    return job_.slot_groups[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)] + slot)];
  }
  // The slot of rank r that runs on group g.
  int32_t slot_of(int64_t r, int32_t g) const;
  bool traced(int64_t r) const { return traced_[static_cast<size_t>(r)] != 0; }
  const Trace& trace_of(int64_t r) const { return *tpl(r).trace; }

  void complete(int64_t r, int32_t node, const Cause& cause) {
    work_.push_back(WorkItem{r, node, cause});
  }

  static uint64_t rank_node_key(int64_t r, int32_t node) {
    return (static_cast<uint64_t>(r) << 32) | static_cast<uint64_t>(node);
  }

  // Completes queued nodes and what completes with them at this instant.
  void drain();

  // One dependency of `node` completed with `cause`. The node's cause is
  // the last one, unless that is host work and a non-host dependency
  // completed before: then the latest of those (kept in causes_).
  void dependency_done(int64_t r, int32_t node, const Cause& cause);

  // Nodes with more dependencies than a dense counter holds.
  void wide_dependency_done(int64_t r, int32_t node, const TNode& tn, const Cause& cause);

  void make_ready(int64_t r, int32_t node, const Cause& cause);

  void dispatch(int64_t r, int32_t res);

  void start(int64_t r, int32_t res, int32_t node, const Cause& cause);

  // After a node ends: the first of the nodes ready by then.
  void next_on(int64_t r, int32_t res) {
    if (!resource(r, res).ready.empty()) dispatch(r, res);
  }

  void node_end(int64_t r, int32_t res);

  // A compute gap [compute_free_ns, now] ends: charged to what the kernel
  // waited for last (see Cause).
  void charge_gap(int64_t r, const Cause& cause) {
    RankState& st = rank(r);
    step_accounts::charge_gap(st.accounts, st.compute_free_ns, now(), cause.end_ns, cause.account,
                              cause.group_start_ns);
  }

  static int64_t overlap_until(const RankState& st, int64_t t) {
    return st.overlap.until(t, st.comm_active);
  }

  // The next look at a running kernel, `left` ns of full-speed work after
  // `from` (exec/sm_sharing.h).
  void schedule_check(int64_t r, int32_t res, int64_t from, double left) {
    ResourceState& rs = resource(r, res);
    rs.slowed_check = rank(r).comm_active > 0;
    const int64_t at = sm_.look_at(from, left, rs.slowed_check);
    rs.event = sim_.schedule_cancellable_at(SimTime::ns(std::max(at, now())), handler_,
                                            kComputeCheck, pack(r, res));
  }

  double kernel_done_ns(const RankState& st, const ResourceState& rs) const {
    const int64_t t = now();
    return sm_.work_done(t, rs.start_ns, overlap_until(st, t), rs.overlap_start_ns);
  }

  void compute_check(int64_t r, int32_t res);

  void comm_changes(int64_t r, int delta);

  void try_channel(int64_t r, int32_t slot);

  const TNode& group_node(const GroupState& gs) const {
    return tpl(gs.first_rank).nodes[static_cast<size_t>(gs.first_node)];
  }

  // The tuner's answer, or a ConfigError naming the node it was asked for.
  int32_t tune(const collectives::GroupGeometry& geometry, CollectiveOp op, int64_t bytes,
               bool forced, int64_t rank, int32_t node, const std::string& group);

  void begin_collective(int32_t g);

  void begin_transfer(uint64_t comm);

  template <typename F>
  void for_members(uint64_t comm, F&& f) {
    if (comm & kP2pBit) {
      const P2p& p = p2ps_[static_cast<size_t>(comm & ~kP2pBit)];
      f(p.src);
      if (p.dst != p.src) f(p.dst);
      return;
    }
    for (const int64_t m : job_.groups[static_cast<size_t>(comm)].ranks) f(m);
  }

  void end_transfer(uint32_t flow) { end_comm(transfers_.finish(flow), /*transferred=*/true); }

  void end_comm(uint64_t comm, bool transferred);

  void p2p_ready(int64_t r, int32_t node);

  void end_p2p(size_t id, bool transferred);

  const topology::Cluster& cluster_;
  const collectives::HardwareProfile& profile_;
  const ReplayJob& job_;
  const ReplayOptions& options_;
  const std::vector<Template>& t_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  collectives::CollectiveFlows flows_;
  FlowTransfers transfers_;
  std::vector<RankState> ranks_;
  std::vector<int64_t> resource_begin_;  // by rank, + 1
  std::vector<ResourceState> resources_;
  std::vector<ChannelState> channels_;  // by job slot
  std::vector<GroupState> groups_;
  std::vector<uint8_t> traced_;
  std::unique_ptr<CounterArray> counters_;  // dependencies done, by rank then TNode::counter
  PendingTable causes_;                     // kept causes (kCauseKept)
  PendingTable wide_;                       // nodes beyond kMaxDense dependencies
  std::vector<WorkItem> work_;              // completions to process at this instant, in order
  bool draining_ = false;
  std::vector<int32_t> member_slots_;
  TunedCollectives tuned_;
  std::vector<P2p> p2ps_;
  std::vector<size_t> free_p2ps_;
  std::unordered_map<P2pKey, PendingP2p, P2pKeyHash> pending_p2p_;
  std::map<std::pair<int64_t, int64_t>, collectives::Footprint> pair_footprints_;
  SmSharing sm_;
  int64_t collectives_ = 0;
  TraceSink trace_;
};

}  // namespace clustersim::workloads::chakra::replay
