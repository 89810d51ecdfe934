#include "failures/checkpoint_interval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "sim/check.h"
#include "sim/random_stream.h"
#include "sim/sim_time.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;

double minutes(SimTime t) { return t.to_seconds() / 60.0; }

// Young: sqrt(2 * 5 min * M), by hand: 2*5*1440 = 14400 -> 120 min;
// 2*5*360 = 3600 -> 60 min; 2*5*15 = 150 -> 12.2474 min.
TEST(YoungInterval, HandComputed) {
  EXPECT_EQ(young_interval(SimTime::minutes(5), SimTime::hours(24)), SimTime::minutes(120));
  EXPECT_EQ(young_interval(SimTime::minutes(5), SimTime::hours(6)), SimTime::minutes(60));
  EXPECT_NEAR(minutes(young_interval(SimTime::minutes(5), SimTime::minutes(15))), 12.247449, 1e-6);
  EXPECT_EQ(young_interval(SimTime::zero(), SimTime::hours(1)), SimTime::zero());
}

// Daly's worked example (data/README.md): restart 10 min, save 5 min;
// MTBF 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min. All three are on
// the delta < 2M branch (5 min < 30 min even for the 15 min MTBF), and the
// restart cost is not needed: the formula reproduces the published figures
// without it. By hand, x = delta / 2M:
//   24 h: x = 5/2880, 120 * (1 + 0.013889 + 0.000193) - 5 = 116.690 min
//    6 h: x = 5/720,   60 * (1 + 0.027778 + 0.000772) - 5 =  56.713 min
//   15 m: x = 1/6, 12.2474 * (1 + 0.136083 + 0.018519) - 5 =   9.141 min
TEST(DalyInterval, WorkedExamplesToThePublishedRounding) {
  const SimTime save = SimTime::minutes(5);
  const SimTime daily = daly_interval(save, SimTime::hours(24));
  const SimTime six_hours = daly_interval(save, SimTime::hours(6));
  const SimTime quarter = daly_interval(save, SimTime::minutes(15));
  EXPECT_EQ(std::lround(minutes(daily)), 117);
  EXPECT_EQ(std::lround(minutes(six_hours)), 57);
  EXPECT_EQ(std::lround(minutes(quarter) * 10), 91);
  EXPECT_NEAR(minutes(daily), 116.689815, 1e-5);
  EXPECT_NEAR(minutes(six_hours), 56.712963, 1e-5);
  EXPECT_NEAR(minutes(quarter), 9.140920, 1e-5);
}

TEST(DalyInterval, SaveOfTwiceTheMtbfOrMoreGivesTheMtbf) {
  EXPECT_EQ(daly_interval(SimTime::minutes(30), SimTime::minutes(15)), SimTime::minutes(15));
  EXPECT_EQ(daly_interval(SimTime::minutes(31), SimTime::minutes(15)), SimTime::minutes(15));
}

// Daly's formula is a series for the exact optimum of the model; Young's is
// its first term. The exact optimum for 15 min solves
// (1 - tau/15) exp((tau + 5)/15) = 1: tau = 9.17 min (Daly 9.14, Young 12.2).
TEST(OptimalInterval, DalyIsCloseToTheExactOptimumYoungLessSo) {
  const SimTime save = SimTime::minutes(5);
  for (SimTime mtbf : {SimTime::hours(24), SimTime::hours(6), SimTime::minutes(15)}) {
    const double exact = minutes(optimal_interval(save, mtbf));
    EXPECT_NEAR(minutes(daly_interval(save, mtbf)) / exact, 1.0, 0.005) << minutes(mtbf);
    EXPECT_GT(minutes(young_interval(save, mtbf)), exact) << minutes(mtbf);
  }
  EXPECT_NEAR(minutes(optimal_interval(save, SimTime::minutes(15))), 9.17, 0.01);
  EXPECT_EQ(optimal_interval(SimTime::zero(), SimTime::hours(1)), SimTime::zero());
}

TEST(OptimalInterval, MaximisesTheEttrFormula) {
  CheckpointRestartModel m{SimTime::hours(2), SimTime::minutes(10), SimTime::s(40), {}};
  m.interval = optimal_interval(m.save, m.mtbf);
  const double best = expected_ettr(m);
  for (double factor : {0.8, 0.95, 1.05, 1.25}) {
    CheckpointRestartModel other = m;
    other.interval = SimTime::from_seconds_rounded(m.interval.to_seconds() * factor);
    EXPECT_LT(expected_ettr(other), best) << factor;
  }
}

// M = 1 h, R = 10 min, delta = 1 min, tau = 30 min; W = 31 min.
// exp(31/60) - 1 = 0.676430; exp(10/60) = 1.181360.
//   restart-recovery: E[T] = 3600 * 1.181360 * 0.676430 = 2876.79 s,
//                     ETTR = 1800 / 2876.79 = 0.625698
//   ignored:          E[T] = (3600 + 600) * 0.676430 = 2841.01 s,
//                     ETTR = 1800 / 2841.01 = 0.633578
TEST(ExpectedEttr, HandComputedCase) {
  CheckpointRestartModel m{SimTime::hours(1), SimTime::minutes(10), SimTime::minutes(1),
                           SimTime::minutes(30)};
  EXPECT_NEAR(expected_segment_seconds(m), 2876.788, 1e-3);
  EXPECT_NEAR(expected_ettr(m), 0.625698, 1e-6);
  m.during_recovery = FailuresDuringRecovery::kIgnored;
  EXPECT_NEAR(expected_segment_seconds(m), 2841.007, 1e-3);
  EXPECT_NEAR(expected_ettr(m), 0.633578, 1e-6);
}

TEST(ExpectedEttr, WithoutFailuresOnlyTheSavesCost) {
  const CheckpointRestartModel m{SimTime::days(36500), SimTime::minutes(10), SimTime::minutes(1),
                                 SimTime::minutes(29)};
  EXPECT_NEAR(expected_ettr(m), 29.0 / 30.0, 1e-6);
}

TEST(ExpectedEttr, HopelessSettingsGiveZero) {
  const CheckpointRestartModel m{SimTime::s(1), SimTime::minutes(10), SimTime::s(1),
                                 SimTime::hours(10)};
  EXPECT_EQ(expected_ettr(m), 0.0);
}

TEST(ExpectedEttr, BadArgumentsAreInvariantErrors) {
  CheckpointRestartModel m{SimTime::hours(1), SimTime::minutes(10), SimTime::minutes(1),
                           SimTime::zero()};
  EXPECT_THROW(expected_ettr(m), sim::InvariantError);
  EXPECT_THROW(young_interval(SimTime::s(1), SimTime::zero()), sim::InvariantError);
  EXPECT_THROW(daly_interval(SimTime::s(-1), SimTime::hours(1)), sim::InvariantError);
}

// The formula's semantics, replayed: failures on the wall clock at rate 1/M;
// a failure during a segment loses it; one during a recovery restarts the
// recovery (or, kIgnored, cannot happen). 200,000 segments per mode.
double monte_carlo_ettr(const CheckpointRestartModel& m) {
  sim::RandomStream rng(7, "test.ettr", 0);
  const double mtbf = m.mtbf.to_seconds();
  const double r = m.restart.to_seconds();
  const double w = m.interval.to_seconds() + m.save.to_seconds();
  auto next_gap = [&] { return -mtbf * std::log(rng.next_open_unit()); };
  double t = 0;
  double failure = next_gap();
  int64_t segments = 0;
  while (segments < 200'000) {
    if (failure >= t + w) {
      t += w;
      ++segments;
      continue;
    }
    t = failure;
    failure = t + next_gap();
    if (m.during_recovery == FailuresDuringRecovery::kRestartRecovery) {
      while (failure < t + r) {
        t = failure;
        failure = t + next_gap();
      }
      t += r;
    } else {
      t += r;
      failure = t + next_gap();
    }
  }
  return static_cast<double>(segments) * m.interval.to_seconds() / t;
}

TEST(ExpectedEttr, MatchesAReplayOfItsAssumptions) {
  CheckpointRestartModel m{SimTime::hours(1), SimTime::minutes(20), SimTime::minutes(2),
                           SimTime::minutes(30)};
  for (FailuresDuringRecovery mode :
       {FailuresDuringRecovery::kRestartRecovery, FailuresDuringRecovery::kIgnored}) {
    m.during_recovery = mode;
    EXPECT_NEAR(monte_carlo_ettr(m) / expected_ettr(m), 1.0, 0.01);
  }
}

}  // namespace
}  // namespace clustersim::failures
