// The llama3_h100 preset: per-category failure rates fitted to the root
// causes of the 419 unexpected interruptions in a 54-day snapshot of Llama 3
// 405B pre-training on 16,384 H100 GPUs = 2,048 HGX H100 nodes
// ("The Llama 3 Herd of Models", arXiv:2407.21783, sec. 3.3.4, Table 5; a
// copy with its sources is scenarios/measurements/failures/
// llama3_54day_interruptions.csv, which the tests compare with the table here).
//
// The fit: the job held the whole fitting cluster (llama3_fitting_cluster())
// for T = 54 days = 1,296 h, so a category struck its components for an
// exposure of N * T component-hours (N from JobComponents: 16,384 GPUs or HBM
// stacks, 2,048 hosts or per-node software instances, 16,384 NICs or NIC
// cables, 1 job). The maximum-likelihood rate of a Poisson process with
// `count` events in that exposure is count / (N * T), per component-hour;
// rate * N * T gives the count back. On another job the same rates apply per
// component, so the job's failure rate scales with its GPUs, nodes and NICs
// (and not at all for `dependency`, per job). Component and blast-radius
// choices per category are explained in failure_model.cc.
//
// In all: 419 / (2,048 nodes * 54 days) = 3.79 failures per 1,000 node-days,
// one interruption every 3.09 h. Kokolis et al. ("Revisiting Reliability in
// Large-Scale Machine Learning Research Clusters", arXiv:2410.21680) report
// 6.50 and 2.34 failures per 1,000 node-days on Meta's two research clusters
// (RSC-1, RSC-2): the Llama 3 figure lies between them.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "failures/failure_model.h"
#include "failures/job_components.h"
#include "topology/cluster_config.h"

namespace clustersim::failures {

inline constexpr int64_t kLlama3Nodes = 2'048;
inline constexpr int64_t kLlama3Gpus = 16'384;
inline constexpr int64_t kLlama3Days = 54;
inline constexpr int64_t kLlama3Interruptions = 419;

// One row of Table 5: the root cause and its count of interruptions.
struct Llama3Count {
  std::string_view category;
  int64_t count;
};

// Table 5's 18 rows, in the table's order (= the first 18 categories of
// failure_categories()).
std::span<const Llama3Count> llama3_54day_counts();

// 2,048 HGX H100 nodes (8 GPUs, 8 NICs of 400 Gb/s) on the default
// rail-optimized fabric of radix-64 switches. Only the component counts enter
// the fit; the fabric shape does not (no category is fitted per switch).
topology::ClusterSpec llama3_fitting_cluster();

struct FitRow {
  std::string_view category;
  std::string_view group;
  ComponentKind component;
  int64_t count = 0;                    // interruptions in the table
  int64_t components = 0;               // N on the fitting job
  double exposure_component_hours = 0;  // N * 1,296 h
  double rate_per_hour = 0;             // count / exposure, per component-hour
  double expected_count = 0;            // rate * exposure: the count back
  double per_1000_node_days = 0;        // this category's share of the total
};

struct FailureFit {
  std::vector<FitRow> rows;  // table order
  int64_t total_count = 0;   // 419
  double node_hours = 0;     // 2,048 * 1,296
  double expected_total = 0;
  double per_1000_node_days = 0;  // 419 / (2,048 * 54) * 1,000 = 3.789
  double job_mtbf_hours = 0;      // 1,296 / 419 = 3.093
};

// The fit, computed from llama3_54day_counts() and the fitting cluster.
FailureFit llama3_h100_fit();

// The fit as a plain-text table: one line per category (count, components,
// exposure, fitted rate per component-hour, MTBF of one component in hours,
// expected count, share of the failures per 1,000 node-days) and a total line.
std::string format_fit(const FailureFit& fit);

// The preset on `job`: every category of failure_categories() with the
// fitted rate (0 for the categories not in the table), all exponential.
FailureModel llama3_h100_model(const JobComponents& job);

}  // namespace clustersim::failures
