// The execution engine: runs one Program (exec/program.h) on every rank of a
// device mesh (exec/mesh_layout.h) on one cluster, event by event on a
// sim::Simulator.
//
// Per rank: a host thread that issues the program's operations in order
// (waiting at its gates), a compute stream that runs segments (slowed by SM
// sharing while a transfer of the rank is in flight, and by the rank's
// straggler factor), and communication/copy streams. A collective starts
// when every member of its group has reached it (the wait before is the
// members' sync wait), takes the tuner's latency, then moves its bytes as a
// flow whose rate is its max-min share of the links it loads, re-solved when
// any transfer in the cluster starts or ends (exec/flow_transfers.h). Each
// idle gap of a rank's compute stream is charged to what ended it
// (exec/step_accounts.h). Ranks may run different programs (EngineJob), and
// collectives may run on explicit groups and send/recv pairs
// (exec/rank_groups.h); those are tuned when they start, once per shape.
//
// Units: nanoseconds. Determinism: the same inputs give the same result bit
// for bit (no threads, no hash order). Thread safety: run_program is a pure
// function of its arguments; it may run concurrently on different inputs.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/collective_flows.h"
#include "collectives/tuner.h"
#include "exec/mesh_layout.h"
#include "exec/program.h"
#include "exec/rank_groups.h"
#include "exec/step_accounts.h"
#include "exec/step_result.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"

namespace clustersim::workloads {

struct Straggler {
  int64_t rank = 0;
  double slowdown = 1;  // compute takes this many times longer (>= 1)
};

// How far a run is, for EngineOptions::progress. Operations complete in
// simulated-time order on every rank alike, so ops_done / ops_total is the
// fraction of the step simulated (events per operation vary too much with
// the schedule, 0.05 to 0.5 per task, for an event count to say it).
struct EngineProgress {
  uint64_t events = 0;    // handled so far (as Engine::events())
  int64_t ops_done = 0;   // operations completed, over every rank
  int64_t ops_total = 0;  // operations of every rank's program
};
using EngineProgressFn = std::function<void(const EngineProgress&)>;

struct EngineOptions {
  // How collectives' traffic spreads over switch-to-switch links.
  collectives::Routing routing = collectives::Routing::kAdaptive;
  // When the cluster has failed links: the same cluster without them
  // (collectives::CollectiveFlows' `healthy`); must outlive the run.
  const topology::Cluster* healthy_fabric = nullptr;
  double comm_overlap_slowdown = 1;   // compute slowdown while a transfer is in flight
  std::vector<Straggler> stragglers;  // ranks < world, each at most once
  // Per-rank factors (> 0) on the compute stream's segments before
  // stragglers' slowdowns, the GPUs' own speed spread (workloads/schedules/gpu_speed.h);
  // empty: every GPU at the median speed.
  std::vector<double> rank_time_factors;
  // Kernel-time fluctuation (the hardware profile's gpu.segment_jitter): each
  // compute segment of rank r at compute position k takes exp(sd * z) times
  // as long, z a standard normal drawn from (seed, "gpu.segment_jitter", r)
  // at a position set by k alone, so a segment's draw depends neither on
  // the order events run in nor on what ran before it. 0: none.
  double segment_jitter_sd = 0;
  uint64_t jitter_seed = 0;  // the scenario's seed: both jitters' draws
  // The training loop's host work before the step's first launch (ns >= 0):
  // rank r's host starts issuing host_lead_ns + |host_lead_jitter_ns x z_r|
  // late, z_r a standard normal drawn from (jitter_seed, "host.step_jitter",
  // r), and its GPU's wait for it is launch-bound; what
  // it then waits for slower ranks is sync wait.
  int64_t host_lead_ns = 0;
  int64_t host_lead_jitter_ns = 0;
  std::vector<int64_t> trace_ranks;  // ranks whose operations are recorded (sorted, unique)
  // For collectives tuned when they start (explicit groups; send/recv are
  // never forced).
  collectives::ForcedChoice forced;
  // A rank that cannot finish (a deadlock) is reported in
  // EngineResult::unfinished instead of an InvariantError.
  bool report_unfinished = false;
  // What a rank's time after its finish, up to the step's end, is charged to:
  // idle, or for pipeline stages the bubble.
  step_accounts::Account tail_account = step_accounts::kIdle;
  // Called every 2^20 events with how far the run is (for the commands'
  // progress lines); never changes the run. Empty: not called.
  EngineProgressFn progress;
  // One timeline per rank even where the members of a tensor-parallel group
  // could share one (exec/timelines.h): the reference engine (run --explicit).
  bool explicit_ranks = false;
  // The most timelines a run may take (the work limit's tasks x timelines
  // over the tasks per rank; 0: no limit): a plan or a run again with more
  // throws WorkOverLimit before it starts.
  int64_t max_timelines = 0;
};

// A step that would run more timelines than EngineOptions::max_timelines.
class WorkOverLimit : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where every rank stopped when some could not finish.
struct Unfinished {
  std::vector<int64_t> stream_begin;  // by rank, + 1: into done and reached
  std::vector<int32_t> done;          // by rank's stream: operations completed
  std::vector<uint8_t> reached;       // the next one started (a rendezvous: waits there)
  std::vector<int32_t> gates_passed;  // by rank
};

// Which program each rank runs, and the groups given rank by rank.
struct EngineJob {
  std::span<const Program> programs;
  std::span<const int32_t> program_of;  // by rank (empty: every rank runs programs[0])
  const RankGroups* groups = nullptr;   // for channels with a slot and send/recv
};

// A collective or send/recv the tuner refused (a forced choice its group
// cannot run): which rank's op it was.
class TuneError : public std::invalid_argument {
 public:
  TuneError(int64_t rank, int32_t op, const std::string& what)
      : std::invalid_argument(what), rank_(rank), op_(op) {}
  int64_t rank() const { return rank_; }
  int32_t op() const { return op_; }

 private:
  int64_t rank_;
  int32_t op_;
};

struct EngineResult {
  int64_t step_end_ns = 0;   // the last rank's last completion
  int64_t slowest_rank = 0;  // the rank that finished last (lowest id on ties)
  // Time accounts summed over ranks (ns), each rank closed at step_end_ns.
  std::array<double, step_accounts::kAccountCount> summed_accounts{};
  uint64_t events = 0;
  int64_t collectives = 0;
  EngineStats stats;
  std::vector<TraceRecord> trace;  // by rank, then start time
  // How the ranks ran (exec/timelines.h): ranks_per_timeline > 1 when the
  // ranks that differ only on timeline_dims ({"tp"}; {"dp_shard", "cp",
  // "tp"} for identical ranks) ran as one timeline; else one per rank, and
  // explicit_why says why where ranks could have shared one (or it was
  // asked).
  int64_t ranks_per_timeline = 1;
  std::vector<std::string> timeline_dims;
  std::string explicit_why;
  bool finished = true;
  Unfinished unfinished;  // when not finished (options.report_unfinished)
};

// Runs `program` on ranks 0 .. layout.world - 1 (GPU r = rank r): one
// timeline per tensor-parallel group where exec/timelines.h finds that
// exact, else one per rank; if a grouped run finds its members' flows
// apart (an asymmetric fabric), it runs again with one per rank. Throws
// sim::InvariantError if a rank cannot finish (a deadlock: the program is
// wrong) or the options name ranks outside the layout, WorkOverLimit as
// above.
EngineResult run_program(const Program& program, const Layout& layout,
                         const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const EngineOptions& options);

// The same for a job whose ranks run job.programs (layout: the world and the
// mesh groups role channels use). Throws TuneError as above.
EngineResult run_programs(const EngineJob& job, const Layout& layout,
                          const topology::Cluster& cluster,
                          const collectives::HardwareProfile& profile,
                          const EngineOptions& options);

}  // namespace clustersim::workloads
