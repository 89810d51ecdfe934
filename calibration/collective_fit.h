// Fitting the collective cost model's constants (collectives/collective_cost.h)
// to measured collective times, and predicting those times from a profile.
//
// With the tuner's best channel count, the cost of (algorithm, protocol) on
// a group is  t = launch + latency + max(bytes, F) x factor / busbw  where F
// is the protocol's full_bandwidth_size (the ramp: fewer channels below it),
// factor the busbw factor (tree all_reduce: 2) and busbw the bus bandwidth
// of the group's bottleneck scope. For a fixed F the relative error
// t_pred / t_measured - 1 is linear in (1 / busbw, latency terms), so each
// group of cases is one robust_fit.h problem, F is searched on a grid
// (powers of 2^(1/4) up to the largest message, and 0), and:
//
//  * cases are grouped by (collective, algorithm, protocol, scope), scope
//    nvlink (one node) or network (several). Which algorithm and protocol
//    a case ran is what the tuner picks for it with the profile being fitted
//    (or the algorithm a CSV row names), iterated until the assignment is
//    stable (at most 8 rounds): NCCL does not print its choice.
//  * latency terms by group: ring base + nvlink steps x nvlink_hop + network
//    steps x network_hop; tree base + 2 ((ranks per node - 1) nvlink_hop +
//    ceil(log2 nodes) network_hop); nvls one latency. A term the cases cannot
//    separate (one group size: base and hops are collinear) keeps the base
//    profile's value; the base latency absorbs the rest.
//  * physics bounds: latencies >= 0; busbw <= the raw link rate of the scope
//    times the protocol's data fraction (ring, tree), or 2(n-1)/n x the
//    NVLink rate for NVLS all_reduce (each GPU sends and receives the buffer
//    once); a bound hit is reported.
//  * the profile is assembled from the groups: nvlink.ring_efficiency from
//    ring Simple cases on NVLink (else LL128, else LL, through their data
//    fraction), each protocol's max_busbw from its cases where they run
//    below that, network.efficiency from network-bound ring cases,
//    tree.efficiency, nvls latency/busbw/full size, per-protocol base and
//    hop latencies and full_bandwidth_size; several groups informing one
//    constant are averaged, weighted by their cases. launch_overhead and the
//    protocols' data fractions (wire formats) stay the base profile's.
//
// Units: seconds in results, as measured rows give them (microseconds) in
// reports.
// Thread safety: pure functions.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "calibration/collective_measurements.h"
#include "calibration/compute_fit.h"
#include "calibration/robust_fit.h"
#include "collectives/collective_cost.h"
#include "collectives/group_collectives.h"
#include "collectives/tuner.h"
#include "config/config_error.h"
#include "config/config_values.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"

namespace clustersim::calibration {

// A measured row placed on a cluster: its first `gpus` GPUs, `gpus_per_node`
// on each node, as a test launched on whole nodes places them.
struct CollectiveCase {
  CollectiveMeasurement row;
  collectives::CollectiveOp op = collectives::CollectiveOp::kAllReduce;
  std::vector<int64_t> gpus;
  collectives::GroupGeometry geometry;
  collectives::ForcedChoice forced;  // the row's algo column, over the scenario's forcing
  double measured_s = 0;             // the time, or the time a busbw-only row implies
};

// Cases for the rows at or above `min_bytes` that say something about time
// (rows whose busbw rounds to 0 are left out and counted in `skipped`).
// Rows that do not fit the cluster (more GPUs, or GPUs per node that do not
// divide the count or exceed the node) are ConfigErrors naming the row, all
// reported at once.
std::vector<CollectiveCase> collective_cases(std::span<const CollectiveMeasurement> rows,
                                             const topology::Cluster& cluster,
                                             const collectives::ForcedChoice& forced,
                                             int64_t min_bytes, int* skipped = nullptr);

// Whether every case's forced choice can run on its group with `profile`,
// checked before fitting or predicting so that the error names the input to
// blame: the row's algo column when the row named an algorithm that cannot
// run, else the scenario's collectives.algorithm (or collectives.protocol
// when the algorithm runs with another protocol), once, naming the first
// row. Errors: sim::ConfigError; nothing when every case can run.
void check_forced_choices(std::span<const CollectiveCase> cases,
                          const collectives::HardwareProfile& profile,
                          const sim::ConfigValues& scenario);

// The cost model's prediction (the group alone on the cluster), with the
// tuner's choice. Throws std::invalid_argument when a forced choice cannot run
// (check_forced_choices first).
collectives::GroupPrediction predict_case(const collectives::HardwareProfile& profile,
                                          const topology::Cluster& cluster,
                                          const CollectiveCase& c);

struct CollectiveFit {
  collectives::HardwareProfile profile;
  std::vector<FitGroupReport> groups;
  // Profile key (e.g. "nvlink.ring_efficiency", "protocols.ll.ring") -> how
  // its value was obtained, for the profile's comments.
  std::map<std::string, std::string> key_notes;
  int rounds = 0;  // assignment rounds until stable
};

// Requires at least one case.
CollectiveFit fit_collectives(std::span<const CollectiveCase> cases,
                              const topology::Cluster& cluster,
                              const collectives::HardwareProfile& base,
                              const RobustFitOptions& options = {});

}  // namespace clustersim::calibration
