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
// (exec/step_accounts.h).
//
// Units: nanoseconds. Determinism: the same inputs give the same result bit
// for bit (no threads, no hash order). Thread safety: run_program is a pure
// function of its arguments; it may run concurrently on different inputs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "collectives/collective_flows.h"
#include "exec/mesh_layout.h"
#include "exec/program.h"
#include "exec/step_accounts.h"
#include "exec/step_result.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"

namespace clustersim::workloads {

struct Straggler {
  int64_t rank = 0;
  double slowdown = 1;  // compute takes this many times longer (>= 1)
};

struct EngineOptions {
  // How collectives' traffic spreads over switch-to-switch links.
  collectives::Routing routing = collectives::Routing::kAdaptive;
  double comm_overlap_slowdown = 1;   // compute slowdown while a transfer is in flight
  std::vector<Straggler> stragglers;  // ranks < world, each at most once
  // Per-rank factors (> 0) on compute time before stragglers' slowdowns, the
  // GPUs' own speed spread; empty: every GPU at the median speed.
  std::vector<double> rank_time_factors;
  std::vector<int64_t> trace_ranks;  // ranks whose operations are recorded (sorted, unique)
};

struct EngineResult {
  int64_t step_end_ns = 0;   // the last rank's last completion
  int64_t slowest_rank = 0;  // the rank that finished last (lowest id on ties)
  // Time accounts summed over ranks (ns), each rank closed at step_end_ns.
  std::array<double, step_accounts::kAccountCount> summed_accounts{};
  uint64_t events = 0;
  int64_t collectives = 0;
  std::vector<TraceRecord> trace;  // by rank, then start time
};

// Runs `program` on ranks 0 .. layout.world - 1 (GPU r = rank r). Throws
// sim::InvariantError if a rank cannot finish (a deadlock: the program is
// wrong) or the options name ranks outside the layout.
EngineResult run_program(const Program& program, const Layout& layout,
                         const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const EngineOptions& options);

}  // namespace clustersim::workloads
