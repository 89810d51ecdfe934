// FailureModel: the failure processes of one training job — for each cause
// (category) the kind of component it strikes, how many of them the job has,
// a rate per component-hour, a distribution of inter-arrival times and a blast
// radius — plus the straggler process. A campaign engine draws from it with
// FailureSampler (failures/failure_sampler.h); scenarios build it with
// read_failure_model (failures/failure_config.h).
//
// Categories: a fixed list (failure_categories()), so that the scenario keys
// can be declared per category and causes keep their index across models.
// The first 18 are the root causes of the Llama 3 54-day table
// (arXiv:2407.21783, Table 5; the llama3_h100 preset fits their rates, see
// failures/llama3_fit.h); the next five are fabric parts that table does not
// separate (nvswitch, leaf/spine/core switch, switch-to-switch cable), rate 0
// unless a scenario sets one; the last four are causes of the FT-HSDP
// paper's table that Llama 3's does not name (pcie, kernel_fault,
// unexpected_reboot, other; the ft_hsdp_100k preset,
// failures/ft_hsdp_preset.h). A FailureModel holds one FailureCause per
// category in that order (index = category index), or, for failures.job_mtbf,
// the single cause "job_mtbf".
//
// Blast radius, as a campaign engine should read it:
//  * kProcess: the rank (GPU) dies; under HSDP its replica group drops out,
//    otherwise the whole job stops.
//  * kNode: every rank on the node dies (host, NIC, NIC cable, NVSwitch).
//  * kLeaf: every node behind the leaf switch (JobComponents::nodes_of).
//  * kDegradeBandwidth: nothing dies; the struck tree's uplinks at that tier
//    keep JobComponents::capacity_left_after() of their capacity until repair.
//  * kJob: the whole job stops (software bug, NCCL watchdog timeout, an
//    external dependency), under HSDP too.
//
// Rates and units: rate_per_hour is failures per component-hour (so the
// job's rate for the cause is rate * components); an MTBF is per component;
// "failures per 1,000 node-days" is the cause's failures over the job per
// 1,000 of the job's node-days (24,000 node-hours), whatever the component.
// Conversions below are exact formulas in double arithmetic.
//
// Thread safety: value types; share a const FailureModel between threads.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "failures/job_components.h"
#include "sim/distributions.h"
#include "sim/sim_time.h"

namespace clustersim::failures {

enum class BlastRadius : uint8_t { kProcess, kNode, kLeaf, kDegradeBandwidth, kJob };
// "process", "node", "leaf", "degrade_bandwidth", "job".
std::string_view blast_radius_name(BlastRadius blast);

enum class InterArrival : uint8_t { kExponential, kWeibull };
// "exponential", "weibull".
std::string_view inter_arrival_name(InterArrival distribution);

// One category: what it strikes and how far the damage reaches.
struct FailureCategory {
  std::string_view name;   // "faulty_gpu"; also the scenario key section failures.<name>
  std::string_view group;  // the Llama 3 table's column: "gpu", "host", "network", "software"
  ComponentKind component;
  BlastRadius blast;
};

// Every category, in index order (static storage).
std::span<const FailureCategory> failure_categories();
// Index of the category `name`, or -1.
int failure_category_index(std::string_view name);

// Per-component renewal processes with Weibull inter-arrivals are simulated
// exactly (one clock per component) when the job has at most this many
// components of the kind; above it their superposition is drawn as a Poisson
// process of the same long-run rate (see failure_sampler.h).
inline constexpr int64_t kDefaultWeibullClockLimit = 256;

struct FailureCause {
  std::string_view name;   // the category's name, or "job_mtbf"; static storage
  std::string_view group;  // as FailureCategory::group; "job" for job_mtbf
  ComponentKind component = ComponentKind::kJobSoftware;
  BlastRadius blast = BlastRadius::kJob;
  int64_t components = 0;    // N: the job's components of that kind
  double rate_per_hour = 0;  // per component-hour, >= 0
  InterArrival distribution = InterArrival::kExponential;
  double weibull_shape = 1;  // k > 0; used when distribution is kWeibull

  // The job's failures per hour from this cause: rate * N.
  double aggregate_rate_per_hour() const { return rate_per_hour * static_cast<double>(components); }
  // Inter-arrival time of ONE component, in hours: a Weibull of shape k whose
  // scale makes its mean 1 / rate: scale = 1 / (rate * Gamma(1 + 1/k)).
  // Needs rate > 0 (InvariantError otherwise).
  sim::Weibull weibull_hours() const;
};

// Slow nodes (a throttling GPU, a bad NIC port): they appear at a rate per
// node-hour, slow the synchronous step by `slowdown` while present, and are
// removed `detection` after they appear (handled as a node failure then).
struct StragglerProcess {
  double rate_per_node_hour = 0;  // >= 0; 0 means none
  double slowdown = 1.2;          // >= 1: step time multiplier while present
  sim::SimTime detection = sim::SimTime::minutes(15);
};

struct FailureModel {
  JobComponents job;
  std::vector<FailureCause> causes;
  StragglerProcess stragglers;
  int64_t weibull_clock_limit = kDefaultWeibullClockLimit;

  // Sum of the causes' aggregate rates: the job's failures per hour.
  double total_rate_per_hour() const;
  // The job's failures per 1,000 node-days (all causes).
  double per_1000_node_days() const;
};

// A model with every category at rate 0 (exponential) on `job`.
FailureModel empty_failure_model(const JobComponents& job);

// The failures.job_mtbf model: one exponential cause "job_mtbf" of mean
// `mtbf` (> 0) for the whole job. With blast kJob (the default: a user who
// knows only the job's MTBF cannot say what fails) its component is the job
// (kJobSoftware) and the job restarts. With kProcess, kNode or kLeaf it
// strikes one of the job's nodes (kHost) drawn uniformly, at a rate per node
// of 1 / (mtbf x nodes), so the job still fails once per mtbf on average.
// kDegradeBandwidth is not a job MTBF's (InvariantError; the config rejects it).
FailureModel job_mtbf_failure_model(const JobComponents& job, sim::SimTime mtbf,
                                    BlastRadius blast = BlastRadius::kJob);

// Whether a cause striking `component` can have blast radius `blast`: job
// always; degrade_bandwidth only for spine, core and switch-to-switch
// links; leaf for what sits in or serves a node (a leaf switch too);
// process and node for what sits in a node. "" when it can, otherwise the
// reason (for the config's message).
std::string_view blast_problem(ComponentKind component, BlastRadius blast);

// --- Unit conversions (exact formulas; every argument > 0 unless said) ---

inline constexpr double kNsPerHour = 3.6e12;
inline constexpr double kNodeHoursPer1000NodeDays = 24'000.0;

// Hours in `t` (t / 3600 s).
double hours_of(sim::SimTime t);
// Per-hour rate of a mean time between failures: 1 / hours_of(mtbf).
double rate_from_mtbf(sim::SimTime mtbf);
// Mean time between failures of a per-hour rate, rounded to the nanosecond.
sim::SimTime mtbf_from_rate(double rate_per_hour);
// Per-component-hour rate from failures per 1,000 node-days over a job of
// `job_nodes` nodes holding `components` components of the kind:
// x * job_nodes / (24,000 * components). x >= 0.
double rate_from_per_1000_node_days(double per_1000_node_days, int64_t job_nodes,
                                    int64_t components);
// The inverse: rate * components * 24,000 / job_nodes. rate >= 0.
double per_1000_node_days_from_rate(double rate_per_hour, int64_t components, int64_t job_nodes);

}  // namespace clustersim::failures
