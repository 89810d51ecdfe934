#include "failures/failure_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "failures/llama3_fit.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;

FailureModel llama3_model() {
  return llama3_h100_model(JobComponents(llama3_fitting_cluster(), 16'384));
}

bool same(const Failure& a, const Failure& b) {
  return a.time == b.time && a.cause == b.cause && a.category == b.category &&
         a.component == b.component && a.component_index == b.component_index && a.blast == b.blast;
}

bool same_sequence(const std::vector<Failure>& a, const std::vector<Failure>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}

// A model with one category at `rate` per component-hour.
FailureModel one_cause(const JobComponents& job, const char* category, double rate,
                       InterArrival distribution = InterArrival::kExponential, double shape = 1) {
  FailureModel model = empty_failure_model(job);
  FailureCause& cause = model.causes[static_cast<size_t>(failure_category_index(category))];
  cause.rate_per_hour = rate;
  cause.distribution = distribution;
  cause.weibull_shape = shape;
  return model;
}

TEST(FailureSampler, InTimeOrderWithConsistentFields) {
  const FailureModel model = llama3_model();
  const std::vector<Failure> failures = draw_failures(model, 7, 0, SimTime::days(54));
  ASSERT_GT(failures.size(), 300u);
  for (size_t i = 0; i < failures.size(); ++i) {
    const Failure& f = failures[i];
    if (i > 0) {
      EXPECT_LE(failures[i - 1].time, f.time);
    }
    const FailureCause& cause = model.causes[static_cast<size_t>(f.cause)];
    EXPECT_EQ(f.category, cause.name);
    EXPECT_EQ(f.component, cause.component);
    EXPECT_EQ(f.blast, cause.blast);
    EXPECT_GE(f.component_index, 0);
    EXPECT_LT(f.component_index, cause.components);
    EXPECT_GT(cause.rate_per_hour, 0);  // causes at rate 0 never fire
  }
}

TEST(FailureSampler, SameSeedAndTrialSameDraws) {
  const FailureModel model = llama3_model();
  const auto a = draw_failures(model, 42, 3, SimTime::days(54));
  EXPECT_TRUE(same_sequence(a, draw_failures(model, 42, 3, SimTime::days(54))));
  EXPECT_FALSE(same_sequence(a, draw_failures(model, 42, 4, SimTime::days(54))));
  EXPECT_FALSE(same_sequence(a, draw_failures(model, 43, 3, SimTime::days(54))));
  // Trials drawn on other threads, in another order, give the same sequences.
  std::vector<std::vector<Failure>> threaded(4);
  std::vector<std::thread> threads;
  for (int t = 3; t >= 0; --t) {
    threads.emplace_back([&, t] {
      threaded[static_cast<size_t>(t)] =
          draw_failures(model, 42, static_cast<uint64_t>(t), SimTime::days(54));
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(same_sequence(threaded[3], a));
  EXPECT_TRUE(same_sequence(threaded[0], draw_failures(model, 42, 0, SimTime::days(54))));
}

TEST(FailureSampler, OneCauseDoesNotShiftAnother) {
  // Each cause has its own stream: tripling the HBM rate leaves the GPU
  // failures exactly where they were.
  const FailureModel base = llama3_model();
  FailureModel more = base;
  more.causes[1].rate_per_hour *= 3;
  auto only_gpu = [](const std::vector<Failure>& all) {
    std::vector<Failure> out;
    for (const Failure& f : all) {
      if (f.cause == 0) out.push_back(f);
    }
    return out;
  };
  EXPECT_TRUE(same_sequence(only_gpu(draw_failures(base, 5, 1, SimTime::days(54))),
                            only_gpu(draw_failures(more, 5, 1, SimTime::days(54)))));
}

TEST(FailureSampler, NoRateNoFailures) {
  FailureModel model = empty_failure_model(JobComponents(llama3_fitting_cluster(), 64));
  FailureSampler sampler(model, 1, 0);
  EXPECT_EQ(sampler.peek().time, SimTime::max());
  EXPECT_EQ(sampler.next().time, SimTime::max());
  EXPECT_TRUE(draw_failures(model, 1, 0, SimTime::days(10'000)).empty());
  // A rate so small that the next failure lies beyond SimTime's 292 years:
  // the sampler saturates at max() instead of overflowing.
  model.causes[0].rate_per_hour = 1e-15;
  EXPECT_EQ(FailureSampler(model, 1, 0).peek().time, SimTime::max());
}

// job_mtbf: one exponential process; 20,000 inter-arrivals of mean 3 h have
// a relative standard error of 1 / sqrt(20,000) = 0.71%, so 3% is 4.2 of them.
TEST(FailureSampler, JobMtbfMeanInterArrival) {
  const FailureModel model =
      job_mtbf_failure_model(JobComponents(llama3_fitting_cluster(), 16'384), SimTime::hours(3));
  FailureSampler sampler(model, 11, 0);
  const int n = 20'000;
  Failure last;
  for (int i = 0; i < n; ++i) {
    last = sampler.next();
    EXPECT_EQ(last.blast, BlastRadius::kJob);
    EXPECT_EQ(last.component_index, 0);
  }
  EXPECT_EQ(last.category, "job_mtbf");
  EXPECT_NEAR(hours_of(last.time) / n, 3.0, 0.03 * 3.0);
}

// Exact per-component Weibull clocks (N = 1 <= the clock limit): the mean gap
// between one component's failures is 1 / rate. Weibull(0.7) has a
// coefficient of variation of 1.46, so 50,000 gaps give a relative standard
// error of 0.65%; 3% is 4.6 of them. (Mean 1 h: 50,000 h stay well inside
// SimTime's range of 292 years, beyond which a sampler saturates at max().)
TEST(FailureSampler, WeibullSingleComponentMeanIsTheRate) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const FailureModel model = one_cause(job, "dependency", 1.0, InterArrival::kWeibull, 0.7);
  ASSERT_EQ(model.causes[15].components, 1);
  FailureSampler sampler(model, 3, 0);
  const int n = 50'000;
  Failure last;
  for (int i = 0; i < n; ++i) last = sampler.next();
  EXPECT_NEAR(hours_of(last.time) / n, 1.0, 0.03);
}

// Several components on their own clocks (256 spine switches, at the clock
// limit) and many (16,384 GPUs, above it: the Poisson approximation) both give
// about N * rate * T failures over a long T. Each component has a mean of 10 h
// between failures and T = 1,000 h. For a fresh Weibull(1.5) clock the
// expected count is T / mean + (cv^2 - 1) / 2 + o(1) with cv^2 = 0.46 (the
// renewal function's asymptote), so 256 clocks fall short of N r T by 0.27%;
// the Poisson count has a relative standard error of 1 / sqrt(5 N r T), under
// 0.3%. Tolerance 2%.
TEST(FailureSampler, WeibullSuperpositionKeepsTheRate) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  ASSERT_EQ(job.count(ComponentKind::kSpineSwitch), 256);
  for (const char* category : {"spine_switch", "faulty_gpu"}) {
    const FailureModel model = one_cause(job, category, 0.1, InterArrival::kWeibull, 1.5);
    const FailureCause& cause = model.causes[static_cast<size_t>(failure_category_index(category))];
    const double expected = cause.aggregate_rate_per_hour() * 1'000.0;
    double total = 0;
    std::vector<int64_t> struck(static_cast<size_t>(cause.components), 0);
    for (uint64_t trial = 0; trial < 5; ++trial) {
      for (const Failure& f : draw_failures(model, 9, trial, SimTime::hours(1'000))) {
        total += 1;
        ++struck[static_cast<size_t>(f.component_index)];
      }
    }
    EXPECT_NEAR(total / 5.0, expected, 0.02 * expected) << category;
    // Every component takes its share: about 500 each for a spine.
    if (cause.components == 256) {
      for (int64_t n : struck) EXPECT_NEAR(static_cast<double>(n), 500.0, 150.0);
    }
  }
}

TEST(FailureSampler, WeibullClocksRestartAfterAFailure) {
  // Shape 5: failures of one component are close to regular, mean 10 h, so
  // the k-th failure of a single clock is near 10 k h, not 10 h after time 0.
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const FailureModel model = one_cause(job, "dependency", 0.1, InterArrival::kWeibull, 5.0);
  FailureSampler sampler(model, 1, 0);
  SimTime previous = SimTime::zero();
  for (int k = 1; k <= 100; ++k) {
    const Failure f = sampler.next();
    EXPECT_GT(f.time, previous);
    previous = f.time;
  }
  EXPECT_NEAR(hours_of(previous), 1'000.0, 50.0);
}

TEST(StragglerSampler, RateDetectionAndRemoval) {
  FailureModel model = empty_failure_model(JobComponents(llama3_fitting_cluster(), 16'384));
  EXPECT_EQ(StragglerSampler(model, 1, 0).peek().appears, SimTime::max());
  model.stragglers = {1e-4, 1.3, SimTime::minutes(20)};
  // 1e-4 per node-hour x 2,048 nodes = 0.2048 per hour; 10,000 stragglers
  // give the mean gap within 1% (standard error); tolerance 4%.
  StragglerSampler sampler(model, 8, 2);
  const int n = 10'000;
  StragglerEvent last;
  for (int i = 0; i < n; ++i) {
    last = sampler.next();
    EXPECT_EQ(last.removed - last.appears, SimTime::minutes(20));
    EXPECT_EQ(last.slowdown, 1.3);
    EXPECT_GE(last.node, 0);
    EXPECT_LT(last.node, 2'048);
  }
  EXPECT_NEAR(hours_of(last.appears) / n, 1.0 / 0.2048, 0.04 / 0.2048);
  const Failure removal = removal_failure(last);
  EXPECT_EQ(removal.time, last.removed);
  EXPECT_EQ(removal.blast, BlastRadius::kNode);
  EXPECT_EQ(removal.component, ComponentKind::kHost);
  EXPECT_EQ(removal.component_index, last.node);
  EXPECT_EQ(removal.category, "straggler");
  // Deterministic per (seed, trial).
  StragglerSampler again(model, 8, 2);
  const StragglerEvent first = again.next();
  EXPECT_EQ(first.appears, StragglerSampler(model, 8, 2).peek().appears);
  EXPECT_NE(first.appears, StragglerSampler(model, 8, 3).peek().appears);
}

}  // namespace
}  // namespace clustersim::failures
