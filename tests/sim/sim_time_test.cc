#include "sim/sim_time.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/check.h"

namespace clustersim::sim {
namespace {

TEST(SimTime, NamedConstructorsAreExactNanoseconds) {
  EXPECT_EQ(SimTime::ns(7).count_ns(), 7);
  EXPECT_EQ(SimTime::us(3).count_ns(), 3'000);
  EXPECT_EQ(SimTime::ms(2).count_ns(), 2'000'000);
  EXPECT_EQ(SimTime::s(5).count_ns(), 5'000'000'000);
  EXPECT_EQ(SimTime::minutes(10).count_ns(), 600'000'000'000);
  EXPECT_EQ(SimTime::hours(1).count_ns(), 3'600'000'000'000);
  EXPECT_EQ(SimTime::days(54).count_ns(), 54LL * 86'400 * 1'000'000'000);
}

TEST(SimTime, ArithmeticAndOrdering) {
  const SimTime a = SimTime::us(3);
  const SimTime b = SimTime::ns(500);
  EXPECT_EQ((a + b).count_ns(), 3'500);
  EXPECT_EQ((a - b).count_ns(), 2'500);
  EXPECT_EQ((a * 4).count_ns(), 12'000);
  EXPECT_EQ((a / 4).count_ns(), 750);
  EXPECT_EQ(SimTime::s(1) / SimTime::ms(300), 3);
  EXPECT_LT(b, a);
  EXPECT_EQ(SimTime::zero(), SimTime::ns(0));
  EXPECT_DOUBLE_EQ(SimTime::ms(1500).to_seconds(), 1.5);
}

TEST(SimTime, RoundingFromDoubles) {
  EXPECT_EQ(SimTime::from_seconds_rounded(1.5e-9).count_ns(), 2);  // half away from zero
  EXPECT_EQ(SimTime::from_seconds_rounded(-1.5e-9).count_ns(), -2);
  EXPECT_EQ(SimTime::from_seconds_rounded(2.4e-9).count_ns(), 2);
  EXPECT_EQ(SimTime::from_seconds_rounded(0.1).count_ns(), 100'000'000);
  EXPECT_EQ(SimTime::from_ns_rounded(0.5).count_ns(), 1);
  EXPECT_EQ(SimTime::from_ns_rounded(0.49).count_ns(), 0);
  EXPECT_EQ(SimTime::from_ns_rounded(1234.5).count_ns(), 1235);
  EXPECT_EQ(SimTime::from_ns_rounded(1e15).count_ns(), 1'000'000'000'000'000);
  EXPECT_THROW(SimTime::from_seconds_rounded(1e300), InvariantError);
  EXPECT_THROW(SimTime::from_ns_rounded(std::nan("")), InvariantError);
}

}  // namespace
}  // namespace clustersim::sim
