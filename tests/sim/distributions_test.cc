#include "sim/distributions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "sim/check.h"
#include "sim/random_stream.h"

namespace clustersim::sim {
namespace {

constexpr int kDraws = 1'000'000;

// Moments of a distribution: mean, variance and fourth central moment (which
// sets the standard error of the sample variance).
struct Moments {
  double mean;
  double variance;
  double mu4;
};

// From raw moments E[X], E[X^2], E[X^3], E[X^4].
Moments from_raw(double r1, double r2, double r3, double r4) {
  return {r1, r2 - r1 * r1, r4 - 4 * r1 * r3 + 6 * r1 * r1 * r2 - 3 * r1 * r1 * r1 * r1};
}

// Draws kDraws samples and checks the sample mean and sample variance
// against the analytic moments, each within 5 standard errors: sqrt(var / n)
// for the mean and sqrt((mu4 - var^2) / n) for the variance (large-n form).
// The stream is fixed, so the test is deterministic; 5 sigma means a correct
// implementation passes for essentially every seed, while an error of a few
// per mille in a moment fails.
template <typename Dist>
void expect_moments(const Dist& dist, const Moments& m, uint64_t seed) {
  RandomStream rng(seed, "distributions_test", 0);
  std::vector<double> x(kDraws);
  for (double& v : x) v = dist(rng);
  double sum = 0;
  for (double v : x) sum += v;
  const double mean = sum / kDraws;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  const double variance = ss / (kDraws - 1);

  EXPECT_NEAR(mean, m.mean, 5 * std::sqrt(m.variance / kDraws));
  EXPECT_NEAR(variance, m.variance, 5 * std::sqrt((m.mu4 - m.variance * m.variance) / kDraws));
  // The class's closed forms agree with the test's (computed another way).
  EXPECT_NEAR(dist.mean(), m.mean, 1e-12 * std::abs(m.mean));
  EXPECT_NEAR(dist.variance(), m.variance, 1e-12 * m.variance);
}

TEST(Uniform, Moments) {
  const double w = 5.0;
  expect_moments(Uniform(-2, 3), {0.5, w * w / 12, w * w * w * w / 80}, 1);
}

TEST(Uniform, StaysBelowHiEvenWhenRoundingWouldReachIt) {
  // One ulp wide: lo + width * u rounds to hi for about half of the draws.
  const double lo = 1.0;
  const Uniform dist(lo, std::nextafter(lo, 2.0));
  RandomStream rng(2, "uniform", 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(dist(rng), lo);
}

TEST(Exponential, Moments) {
  const double m = 2.5;
  expect_moments(Exponential(m), {m, m * m, 9 * m * m * m * m}, 3);
}

TEST(Exponential, KolmogorovSmirnov) {
  // D = sup |F_n(x) - F(x)| against F(x) = 1 - exp(-x / mean); under the null
  // hypothesis D sqrt(n) is asymptotically Kolmogorov distributed, and
  // P(D sqrt(n) > 1.95) ~ 0.001.
  const double m = 0.75;
  const Exponential dist(m);
  RandomStream rng(15, "exponential.ks", 0);
  std::vector<double> x(kDraws);
  for (double& v : x) v = dist(rng);
  std::sort(x.begin(), x.end());
  double d = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double f = -std::expm1(-x[static_cast<std::size_t>(i)] / m);
    d = std::max({d, f - static_cast<double>(i) / kDraws, static_cast<double>(i + 1) / kDraws - f});
  }
  EXPECT_LT(d * std::sqrt(static_cast<double>(kDraws)), 1.95);
}

TEST(Exponential, Tail) {
  // Beyond r the ziggurat draws from its tail (r plus a fresh deviate), and
  // near it from wedges; P(X > t) = exp(-t). 10^7 draws: about 4541 beyond
  // r and 454 beyond 10, each within 5 binomial standard errors; the excess
  // over r of those beyond r is again Exp(1), its mean 1 within 5 standard
  // errors.
  constexpr int kN = 10'000'000;
  const double r = detail::kExpZigguratR;
  const Exponential dist(1.0);
  RandomStream rng(16, "exponential.tail", 0);
  int beyond_r = 0;
  int beyond_10 = 0;
  double excess = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = dist(rng);
    if (x > r) {
      ++beyond_r;
      excess += x - r;
    }
    if (x > 10) ++beyond_10;
  }
  for (const auto& [t, count] : {std::pair{r, beyond_r}, {10.0, beyond_10}}) {
    const double p = std::exp(-t);
    EXPECT_NEAR(static_cast<double>(count) / kN, p, 5 * std::sqrt(p * (1 - p) / kN)) << t;
  }
  ASSERT_GT(beyond_r, 0);
  EXPECT_NEAR(excess / beyond_r, 1.0, 5 / std::sqrt(static_cast<double>(beyond_r)));
}

TEST(Exponential, ZigguratTable) {
  // The compile-time table agrees with one built by the C library's exp and
  // log, and every layer has area v (the top one to the precision of r).
  const detail::ExpZiggurat& z = detail::kExpZiggurat;
  const double r = detail::kExpZigguratR;
  const double v = detail::kExpZigguratV;
  std::vector<double> x(257);
  std::vector<double> f(257);
  f[1] = std::exp(-r);
  x[0] = v / f[1];
  x[1] = r;
  for (std::size_t i = 1; i < 255; ++i) {
    x[i + 1] = -std::log(v / x[i] + f[i]);
    f[i + 1] = std::exp(-x[i + 1]);
  }
  for (std::size_t i = 0; i < 256; ++i) {
    EXPECT_NEAR(z.x[i], x[i], 1e-13 * x[i]) << i;
    if (i > 0) {
      EXPECT_NEAR(z.f[i], f[i], 1e-13 * f[i]) << i;
    }
    EXPECT_EQ(z.layers[i].width, z.x[i] * 0x1.0p-53) << i;
    EXPECT_LE(static_cast<double>(z.layers[i].accept) * z.layers[i].width, z.x[i + 1]) << i;
  }
  EXPECT_EQ(z.x[1], r);
  EXPECT_EQ(z.x[256], 0.0);
  EXPECT_EQ(z.f[256], 1.0);
  EXPECT_EQ(z.layers[255].accept, 0u);  // the top layer is all wedge
  EXPECT_NEAR(z.x[0] * z.f[1], v, 1e-15 * v);
  for (std::size_t i = 1; i < 256; ++i) {
    EXPECT_NEAR(z.x[i] * (z.f[i + 1] - z.f[i]), v, (i < 255 ? 1e-13 : 1e-11) * v) << i;
  }
}

TEST(Exponential, DrawsPerSample) {
  // Per attempt (one draw): accept with probability (1 - e^-r) / (256 v),
  // else retry (tail or rejected wedge); a missed fast path in layer i >= 1
  // (probability 1 - x[i+1] / x[i]) costs one more draw for the wedge test.
  const detail::ExpZiggurat& z = detail::kExpZiggurat;
  const double r = detail::kExpZigguratR;
  const double v = detail::kExpZigguratV;
  double wedge = 0;
  for (std::size_t i = 1; i < 256; ++i) wedge += (1 - z.x[i + 1] / z.x[i]) / 256;
  const double expected = 256 * v / (1 - std::exp(-r)) * (1 + wedge);  // 1.0336

  RandomStream rng(4, "exponential", 0);
  const Exponential dist(1.0);
  double sum = 0;
  double sum2 = 0;
  int one_draw = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t before = rng.position();
    const double x = dist(rng);
    ASSERT_TRUE(x >= 0 && std::isfinite(x));
    const double draws = static_cast<double>(rng.position() - before);
    sum += draws;
    sum2 += draws * draws;
    one_draw += draws == 1 ? 1 : 0;
  }
  const double mean = sum / kDraws;
  const double sd = std::sqrt(sum2 / kDraws - mean * mean);
  EXPECT_NEAR(mean, expected, 5 * sd / std::sqrt(static_cast<double>(kDraws)));
  EXPECT_GT(static_cast<double>(one_draw) / kDraws, 0.97);
}

TEST(Exponential, PinnedSamples) {
  // Golden values: any change to the stream, the table or the algorithm
  // shows up here (and in every scenario's results).
  RandomStream rng(42, "test", 7);
  const Exponential dist(1.0);
  EXPECT_EQ(dist(rng), 0x1.ac9d547aa2ed4p+0);  // 1.6742756652264932
  EXPECT_EQ(dist(rng), 0x1.05fb32153fbcp+1);   // 2.0467283824686717
  EXPECT_EQ(dist(rng), 0x1.a2d190ed7406ap+0);  // 1.6360102252692976
  EXPECT_EQ(rng.position(), 3u);
}

TEST(Weibull, ShapeOneIsExponential) {
  // Equal in distribution, not sample for sample (Weibull inverts, Exponential
  // uses the ziggurat): both match the Exp(scale) moments.
  const double scale = 3.0;
  const Moments m{scale, scale * scale, 9 * std::pow(scale, 4)};
  expect_moments(Weibull(1, scale), m, 5);
  expect_moments(Exponential(scale), m, 6);
}

TEST(Weibull, ShapeTwoMatchesGammaFormula) {
  // E[X^k] = scale^k Gamma(1 + k / shape); with shape 2, mean
  // scale sqrt(pi) / 2 and variance scale^2 (1 - pi / 4).
  const double s = 1.5;
  const Weibull dist(2, s);
  EXPECT_DOUBLE_EQ(dist.mean(), s * std::sqrt(std::numbers::pi) / 2);
  EXPECT_DOUBLE_EQ(dist.variance(), s * s * (1 - std::numbers::pi / 4));
  expect_moments(dist,
                 from_raw(s * std::tgamma(1.5), s * s * std::tgamma(2.0),
                          s * s * s * std::tgamma(2.5), s * s * s * s * std::tgamma(3.0)),
                 7);
}

TEST(Normal, Moments) {
  const double mu = -1.0;
  const double sd = 2.0;
  expect_moments(Normal(mu, sd), {mu, sd * sd, 3 * sd * sd * sd * sd}, 8);
}

TEST(Normal, OneSigmaFraction) {
  RandomStream rng(9, "normal", 0);
  const Normal dist(10, 3);
  int inside = 0;
  for (int i = 0; i < kDraws; ++i) inside += std::abs(dist(rng) - 10) < 3 ? 1 : 0;
  const double p = std::erf(1 / std::sqrt(2.0));  // 0.682689...
  EXPECT_NEAR(static_cast<double>(inside) / kDraws, p, 5 * std::sqrt(p * (1 - p) / kDraws));
}

TEST(Normal, PolarMethodDrawsPairsAtRateFourOverPi) {
  // Each attempt takes two draws and succeeds with probability pi/4, so a
  // sample costs 8/pi draws on average; per sample the count has standard
  // deviation 2 sqrt(1 - pi/4) / (pi/4).
  RandomStream rng(10, "normal", 0);
  for (int i = 0; i < kDraws; ++i) Normal::standard(rng);
  const double per_sample = static_cast<double>(rng.position()) / kDraws;
  const double p = std::numbers::pi / 4;
  EXPECT_EQ(rng.position() % 2, 0u);
  EXPECT_NEAR(per_sample, 2 / p, 5 * 2 * std::sqrt(1 - p) / p / std::sqrt(kDraws));
}

TEST(Normal, ZeroStddevIsPointMass) {
  RandomStream rng(11, "normal", 0);
  EXPECT_EQ(Normal(4.5, 0)(rng), 4.5);
}

TEST(LogNormal, Moments) {
  const double mu = 0.3;
  const double sigma = 0.4;
  auto raw = [&](double k) { return std::exp(k * mu + k * k * sigma * sigma / 2); };
  expect_moments(LogNormal(mu, sigma), from_raw(raw(1), raw(2), raw(3), raw(4)), 12);
}

TEST(LogNormal, FromMeanStddevRoundTrips) {
  for (const auto& [mean, sd] : {std::pair{3.0, 1.5}, {1e-3, 1e-6}, {600.0, 1200.0}}) {
    const LogNormal dist = LogNormal::from_mean_stddev(mean, sd);
    EXPECT_NEAR(dist.mean(), mean, 1e-12 * mean);
    EXPECT_NEAR(std::sqrt(dist.variance()), sd, 1e-9 * sd);
  }
  const LogNormal dist = LogNormal::from_mean_stddev(3.0, 1.5);
  auto raw = [&](double k) {
    return std::exp(k * dist.mu() + k * k * dist.sigma() * dist.sigma() / 2);
  };
  expect_moments(dist, from_raw(raw(1), raw(2), raw(3), raw(4)), 13);
}

TEST(Distributions, SamplesAreDeterministic) {
  RandomStream a(14, "det", 3);
  RandomStream b(14, "det", 3);
  const LogNormal dist = LogNormal::from_mean_stddev(2, 1);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(dist(a), dist(b));
}

TEST(Distributions, BadParametersThrow) {
  // (void) makes each a discarded expression rather than a declaration.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  constexpr double kMax = std::numeric_limits<double>::max();
  EXPECT_THROW((void)Uniform(1, 1), InvariantError);
  EXPECT_THROW((void)Uniform(2, 1), InvariantError);
  EXPECT_THROW((void)Uniform(kNan, 1), InvariantError);
  EXPECT_THROW((void)Uniform(0, kInf), InvariantError);
  EXPECT_THROW((void)Uniform(-kMax, kMax), InvariantError);  // width overflows
  EXPECT_THROW((void)Exponential(0), InvariantError);
  EXPECT_THROW((void)Exponential(-1), InvariantError);
  EXPECT_THROW((void)Exponential(kInf), InvariantError);
  EXPECT_THROW((void)Exponential(kNan), InvariantError);
  EXPECT_THROW((void)Weibull(0, 1), InvariantError);
  EXPECT_THROW((void)Weibull(1, 0), InvariantError);
  EXPECT_THROW((void)Weibull(-1, 1), InvariantError);
  EXPECT_THROW((void)Weibull(1, kNan), InvariantError);
  EXPECT_THROW((void)Normal(0, -1), InvariantError);
  EXPECT_THROW((void)Normal(kInf, 1), InvariantError);
  EXPECT_THROW((void)Normal(0, kNan), InvariantError);
  EXPECT_THROW((void)LogNormal(0, -0.1), InvariantError);
  EXPECT_THROW((void)LogNormal(kNan, 1), InvariantError);
  EXPECT_THROW(LogNormal::from_mean_stddev(0, 1), InvariantError);
  EXPECT_THROW(LogNormal::from_mean_stddev(-1, 1), InvariantError);
  EXPECT_THROW(LogNormal::from_mean_stddev(1, -1), InvariantError);
  EXPECT_THROW(LogNormal::from_mean_stddev(1, kInf), InvariantError);
}

}  // namespace
}  // namespace clustersim::sim
