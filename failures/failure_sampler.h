// Drawing failures (and stragglers) of a FailureModel on the wall clock, for
// a campaign engine: the sampler yields the job's failures in time order, the
// superposition of every cause's process, from time 0 of the campaign. The
// processes run on the wall clock whatever the job is doing (failures strike
// during recovery too); what a failure does then is the engine's business.
//
// How each cause is drawn (N = the job's components of the cause's kind,
// r = the rate per component-hour):
//  * Exponential: the superposition of N independent Poisson processes of
//    rate r is exactly a Poisson process of rate N * r, so one exponential
//    inter-arrival of mean 1 / (N r) per failure, then the component by a
//    uniform draw in [0, N). Exact, O(1) per failure.
//  * Weibull, N <= FailureModel::weibull_clock_limit: exact. Each component
//    is its own renewal process (a failed part is replaced by a new one, so
//    its clock restarts at the failure), with Weibull(k, scale) inter-arrivals
//    of mean 1 / r (FailureCause::weibull_hours); every component starts new
//    at time 0 (age 0: a fresh or freshly burnt-in cluster, so with k < 1 the
//    early failures are denser than later ones). O(N) per failure.
//  * Weibull, N > the limit: approximated. By the Palm-Khintchine theorem the
//    superposition of many independent sparse renewal processes approaches a
//    Poisson process with the sum of their long-run rates, N * r; it is drawn
//    like the exponential case. The shape then no longer shows (only the
//    mean rate), which is the point: at thousands of components the job's
//    failure stream is Poisson whatever the per-part wear-out law. Tests
//    check both regimes against N * r.
//
// Determinism: cause i draws only from the stream ("failures." + cause name,
// entity = trial) of the given seed, stragglers from ("failures.stragglers",
// trial): the sequence depends only on (model, seed, trial), not on threads
// or on the other causes (changing one cause's rate leaves the others'
// failures unchanged). Times are integer nanoseconds; each inter-arrival is
// rounded to the nanosecond before it is added; a failure that would lie
// beyond SimTime::max() (292 years) is reported at max(), i.e. never. Ties
// between causes go to the lower cause index, between Weibull components to
// the lower component.
//
// Ownership: a sampler keeps a pointer to its model, which must outlive it.
// Thread safety: one sampler per trial and thread; samplers of the same
// model may run on different threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "failures/failure_model.h"
#include "sim/random_stream.h"
#include "sim/sim_time.h"

namespace clustersim::failures {

struct Failure {
  sim::SimTime time = sim::SimTime::max();  // since the campaign's start; max(): none
  int cause = -1;                           // index in FailureModel::causes
  std::string_view category;                // that cause's name (static storage)
  ComponentKind component = ComponentKind::kJobSoftware;
  int64_t component_index = 0;  // numbering in job_components.h
  BlastRadius blast = BlastRadius::kJob;
};

class FailureSampler {
 public:
  FailureSampler(const FailureModel& model, uint64_t seed, uint64_t trial);

  // The earliest failure not yet taken; time == SimTime::max() when every
  // rate is 0 (and stays so).
  const Failure& peek() const { return causes_[earliest_].pending; }
  // Takes that failure and draws its cause's next one.
  Failure next();

 private:
  struct CauseState {
    sim::RandomStream rng;
    Failure pending;
    double mean_ns = 0;                   // aggregate Poisson mode: 1 / (N r) in ns
    std::optional<sim::Weibull> weibull;  // per-component clock mode, in ns
    std::vector<sim::SimTime> clocks;     // per-component clock mode: next failures
  };

  void draw_next(CauseState& state, sim::SimTime after) const;
  void find_earliest();

  const FailureModel* model_;
  std::vector<CauseState> causes_;
  size_t earliest_ = 0;
};

// Every failure with time < end, in order (convenience for tests, reports).
std::vector<Failure> draw_failures(const FailureModel& model, uint64_t seed, uint64_t trial,
                                   sim::SimTime end);

// One straggler: node `node` runs `slowdown` times slower from `appears`
// until `removed` = appears + detection, when it is taken out of the job
// like a failed node (removal_failure()).
struct StragglerEvent {
  sim::SimTime appears = sim::SimTime::max();
  sim::SimTime removed = sim::SimTime::max();
  int64_t node = 0;
  double slowdown = 1;
};

// The failure a straggler's removal amounts to: at `removed`, category
// "straggler", cause -1, the node (kHost) with blast radius kNode.
Failure removal_failure(const StragglerEvent& straggler);

// Stragglers appear as a Poisson process of rate rate_per_node_hour * nodes
// on uniformly drawn job nodes (exact superposition, as for exponential
// causes); stream ("failures.stragglers", trial). Stragglers may overlap in
// time, and a node may be drawn again while it is slow (the engine decides
// what a second slowdown of the same node means).
class StragglerSampler {
 public:
  StragglerSampler(const FailureModel& model, uint64_t seed, uint64_t trial);

  // appears == SimTime::max() when the rate is 0.
  const StragglerEvent& peek() const { return pending_; }
  StragglerEvent next();

 private:
  void draw_after(sim::SimTime after);

  sim::RandomStream rng_;
  StragglerProcess process_;
  int64_t nodes_ = 0;
  double mean_ns_ = 0;
  StragglerEvent pending_;
};

}  // namespace clustersim::failures
