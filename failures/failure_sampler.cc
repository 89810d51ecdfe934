#include "failures/failure_sampler.h"

#include <limits>
#include <string>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

// `after` plus a delay of `delay_ns`, rounded to the nanosecond; SimTime::max()
// when the sum would not fit (a rate so small that it never fires).
sim::SimTime later_by(sim::SimTime after, double delay_ns) {
  const double room =
      static_cast<double>(std::numeric_limits<int64_t>::max() - after.count_ns()) - 1024.0;
  if (!(delay_ns < room)) return sim::SimTime::max();
  return after + sim::SimTime::from_ns_rounded(delay_ns);
}

}  // namespace

FailureSampler::FailureSampler(const FailureModel& model, uint64_t seed, uint64_t trial)
    : model_(&model) {
  CLUSTERSIM_CHECK(!model.causes.empty(), "failure model without causes");
  causes_.reserve(model.causes.size());
  for (size_t i = 0; i < model.causes.size(); ++i) {
    const FailureCause& cause = model.causes[i];
    CLUSTERSIM_CHECK(cause.rate_per_hour >= 0 && cause.components >= 0,
                     "cause " + std::string(cause.name) + " with a negative rate or count");
    const std::string stream = "failures." + std::string(cause.name);
    CauseState state{sim::RandomStream(seed, stream, trial), Failure{}, 0, std::nullopt, {}};
    state.pending.cause = static_cast<int>(i);
    state.pending.category = cause.name;
    state.pending.component = cause.component;
    state.pending.blast = cause.blast;
    const double aggregate = cause.aggregate_rate_per_hour();
    if (aggregate > 0) {
      if (cause.distribution == InterArrival::kWeibull &&
          cause.components <= model.weibull_clock_limit) {
        const sim::Weibull hours = cause.weibull_hours();
        state.weibull.emplace(hours.shape(), hours.scale() * kNsPerHour);
        state.clocks.reserve(static_cast<size_t>(cause.components));
        for (int64_t c = 0; c < cause.components; ++c) {
          state.clocks.push_back(later_by(sim::SimTime::zero(), (*state.weibull)(state.rng)));
        }
      } else {
        state.mean_ns = kNsPerHour / aggregate;
      }
      draw_next(state, sim::SimTime::zero());
    }
    causes_.push_back(std::move(state));
  }
  find_earliest();
}

void FailureSampler::draw_next(CauseState& state, sim::SimTime after) const {
  Failure& f = state.pending;
  if (state.weibull) {
    size_t first = 0;
    for (size_t c = 1; c < state.clocks.size(); ++c) {
      if (state.clocks[c] < state.clocks[first]) first = c;
    }
    f.time = state.clocks[first];
    f.component_index = static_cast<int64_t>(first);
    return;
  }
  const int64_t n = model_->causes[static_cast<size_t>(f.cause)].components;
  f.time = later_by(after, state.mean_ns * sim::Exponential::standard(state.rng));
  f.component_index = static_cast<int64_t>(state.rng.next_below(static_cast<uint64_t>(n)));
}

void FailureSampler::find_earliest() {
  earliest_ = 0;
  for (size_t i = 1; i < causes_.size(); ++i) {
    if (causes_[i].pending.time < causes_[earliest_].pending.time) earliest_ = i;
  }
}

Failure FailureSampler::next() {
  CauseState& state = causes_[earliest_];
  const Failure taken = state.pending;
  if (taken.time == sim::SimTime::max()) return taken;
  if (state.weibull) {
    // The failed component is replaced by a new one: its clock restarts now.
    auto& clock = state.clocks[static_cast<size_t>(taken.component_index)];
    clock = later_by(taken.time, (*state.weibull)(state.rng));
  }
  draw_next(state, taken.time);
  find_earliest();
  return taken;
}

std::vector<Failure> draw_failures(const FailureModel& model, uint64_t seed, uint64_t trial,
                                   sim::SimTime end) {
  FailureSampler sampler(model, seed, trial);
  std::vector<Failure> out;
  while (sampler.peek().time < end) out.push_back(sampler.next());
  return out;
}

Failure removal_failure(const StragglerEvent& straggler) {
  Failure f;
  f.time = straggler.removed;
  f.cause = -1;
  f.category = "straggler";
  f.component = ComponentKind::kHost;
  f.component_index = straggler.node;
  f.blast = BlastRadius::kNode;
  return f;
}

StragglerSampler::StragglerSampler(const FailureModel& model, uint64_t seed, uint64_t trial)
    : rng_(seed, "failures.stragglers", trial),
      process_(model.stragglers),
      nodes_(model.job.nodes()) {
  CLUSTERSIM_CHECK(process_.rate_per_node_hour >= 0 && process_.slowdown >= 1 &&
                       process_.detection >= sim::SimTime::zero(),
                   "straggler process with a negative rate or delay, or a slowdown below 1");
  const double aggregate = process_.rate_per_node_hour * static_cast<double>(nodes_);
  pending_.slowdown = process_.slowdown;
  if (aggregate > 0) {
    mean_ns_ = kNsPerHour / aggregate;
    draw_after(sim::SimTime::zero());
  }
}

void StragglerSampler::draw_after(sim::SimTime after) {
  pending_.appears = later_by(after, mean_ns_ * sim::Exponential::standard(rng_));
  pending_.node = static_cast<int64_t>(rng_.next_below(static_cast<uint64_t>(nodes_)));
  const bool fits = pending_.appears <= sim::SimTime::max() - process_.detection;
  pending_.removed = fits ? pending_.appears + process_.detection : sim::SimTime::max();
}

StragglerEvent StragglerSampler::next() {
  const StragglerEvent taken = pending_;
  if (taken.appears == sim::SimTime::max()) return taken;
  draw_after(taken.appears);
  return taken;
}

}  // namespace clustersim::failures
