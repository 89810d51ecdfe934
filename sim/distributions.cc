#include "sim/distributions.h"

#include <cstddef>
#include <string>

#include "sim/check.h"

namespace clustersim::sim {
namespace {

std::string describe(const char* what, double value) {
  return std::string(what) + " = " + std::to_string(value);
}

// exp and log for the ziggurat table, evaluated at compile time: std::exp and
// std::log are not constexpr in C++20. Accurate to a few ulp over the
// arguments used (exp on [-r, r], log on (0, 1]), which is all the table
// needs: its layers have area v to within rounding either way.
//
// ln 2 split as in fdlibm: ln2_hi has 32 significant bits, so k * ln2_hi is
// exact for |k| < 2^21.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kSqrtHalf = 0.70710678118654752440;

// exp(x) = 2^k exp(t), t = x - k ln 2 in [-ln2 / 2, ln2 / 2]; exp(t) by its
// Taylor series (Horner), 2^k by exact doublings. For |x| < 700.
constexpr double constexpr_exp(double x) noexcept {
  const double kd = x * 1.44269504088896340736;  // x / ln 2
  const int k = static_cast<int>(kd < 0 ? kd - 0.5 : kd + 0.5);
  const double t = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = 1.0;
  for (int n = 22; n >= 1; --n) p = 1.0 + t * p / n;
  for (int i = 0; i < k; ++i) p *= 2.0;
  for (int i = 0; i > k; --i) p *= 0.5;
  return p;
}

// log(y) = e ln 2 + 2 atanh(s), y = m 2^e with m in [sqrt(1/2), sqrt(2)) and
// s = (m - 1) / (m + 1), |s| < 0.172; atanh by its series. For normal y > 0.
constexpr double constexpr_log(double y) noexcept {
  int e = 0;
  while (y >= 2 * kSqrtHalf) {
    y *= 0.5;
    ++e;
  }
  while (y < kSqrtHalf) {
    y *= 2.0;
    --e;
  }
  const double s = (y - 1.0) / (y + 1.0);  // y - 1 is exact (Sterbenz)
  const double s2 = s * s;
  double p = 0.0;
  for (int n = 30; n >= 0; --n) p = 1.0 / (2 * n + 1) + s2 * p;
  return e * kLn2Hi + (e * kLn2Lo + 2.0 * s * p);
}

constexpr detail::ExpZiggurat make_exp_ziggurat() noexcept {
  // The paper's names: r is the base strip's right edge, v each layer's area.
  const double r = detail::kExpZigguratR;
  const double v = detail::kExpZigguratV;
  detail::ExpZiggurat z{};
  z.f[1] = constexpr_exp(-r);
  z.x[0] = v / z.f[1];
  z.f[0] = 0.0;  // unused: layer 0 has no wedge
  z.x[1] = r;
  for (std::size_t i = 1; i < 255; ++i) {
    z.x[i + 1] = -constexpr_log(v / z.x[i] + z.f[i]);
    z.f[i + 1] = constexpr_exp(-z.x[i + 1]);
  }
  // The recursion would give x[256] = 0 only approximately (r is rounded);
  // the top layer's area stays v to about 1e-12 relative.
  z.x[256] = 0.0;
  z.f[256] = 1.0;
  for (std::size_t i = 0; i < 256; ++i) {
    z.layers[i].accept = static_cast<uint64_t>(z.x[i + 1] / z.x[i] * 0x1.0p53);
    z.layers[i].width = z.x[i] * 0x1.0p-53;
  }
  return z;
}

}  // namespace

namespace detail {
constinit const ExpZiggurat kExpZiggurat = make_exp_ziggurat();
}  // namespace detail

Uniform::Uniform(double lo, double hi) : lo_(lo), hi_(hi), width_(hi - lo) {
  CLUSTERSIM_CHECK(
      std::isfinite(lo) && std::isfinite(hi) && lo < hi,
      "Uniform needs finite lo < hi, got " + describe("lo", lo) + ", " + describe("hi", hi));
  // hi - lo can overflow to infinity for finite bounds of opposite signs.
  CLUSTERSIM_CHECK(std::isfinite(width_), describe("Uniform width", width_));
  below_hi_ = std::nextafter(hi, lo);
}

Exponential::Exponential(double mean) : mean_(mean) {
  CLUSTERSIM_CHECK(std::isfinite(mean) && mean > 0, describe("Exponential mean", mean));
}

double Exponential::standard_slow(RandomStream& rng, uint64_t bits) {
  const detail::ExpZiggurat& z = detail::kExpZiggurat;
  double offset = 0.0;  // r for each trip through the tail
  for (;;) {
    const std::size_t i = bits & 0xff;
    const uint64_t u = bits >> 11;
    const double x = static_cast<double>(u) * z.layers[i].width;
    if (u < z.layers[i].accept) return offset + x;
    if (i == 0) {
      // Base strip, beyond r: the tail. Given X > r, X - r is again Exp(1).
      offset += detail::kExpZigguratR;
    } else if (z.f[i] + rng.next_unit() * (z.f[i + 1] - z.f[i]) < std::exp(-x)) {
      // Wedge of layer i, x in [x[i+1], x[i]): accept (x, y), y uniform over
      // the layer's height, if it lies under the curve.
      return offset + x;
    }
    bits = rng.next_u64();
  }
}

Weibull::Weibull(double shape, double scale)
    : shape_(shape), scale_(scale), inv_shape_(1.0 / shape) {
  CLUSTERSIM_CHECK(std::isfinite(shape) && shape > 0, describe("Weibull shape", shape));
  CLUSTERSIM_CHECK(std::isfinite(scale) && scale > 0, describe("Weibull scale", scale));
}

double Weibull::operator()(RandomStream& rng) const {
  return scale_ * std::pow(-std::log(rng.next_open_unit()), inv_shape_);
}

double Weibull::mean() const { return scale_ * std::tgamma(1.0 + inv_shape_); }

double Weibull::variance() const {
  const double g1 = std::tgamma(1.0 + inv_shape_);
  return scale_ * scale_ * (std::tgamma(1.0 + 2.0 * inv_shape_) - g1 * g1);
}

Normal::Normal(double mean, double stddev) : mean_(mean), stddev_(stddev) {
  CLUSTERSIM_CHECK(std::isfinite(mean), describe("Normal mean", mean));
  CLUSTERSIM_CHECK(std::isfinite(stddev) && stddev >= 0, describe("Normal stddev", stddev));
}

double Normal::standard(RandomStream& rng) {
  // Marsaglia and Bray (1964). 2u - 1 is exact for u a multiple of 2^-53.
  double u = 0;
  double s = 0;
  do {
    u = 2.0 * rng.next_unit() - 1.0;
    const double v = 2.0 * rng.next_unit() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  return u * std::sqrt(-2.0 * std::log(s) / s);
}

LogNormal::LogNormal(double mu, double sigma) : mu_(mu), sigma_(sigma) {
  CLUSTERSIM_CHECK(std::isfinite(mu), describe("LogNormal mu", mu));
  CLUSTERSIM_CHECK(std::isfinite(sigma) && sigma >= 0, describe("LogNormal sigma", sigma));
}

LogNormal LogNormal::from_mean_stddev(double mean, double stddev) {
  CLUSTERSIM_CHECK(std::isfinite(mean) && mean > 0, describe("LogNormal mean", mean));
  CLUSTERSIM_CHECK(std::isfinite(stddev) && stddev >= 0, describe("LogNormal stddev", stddev));
  const double cv = stddev / mean;
  // log1p keeps precision when the coefficient of variation is small.
  const double sigma2 = std::log1p(cv * cv);
  return LogNormal(std::log(mean) - 0.5 * sigma2, std::sqrt(sigma2));
}

double LogNormal::mean() const { return std::exp(mu_ + 0.5 * sigma_ * sigma_); }

double LogNormal::variance() const {
  const double s2 = sigma_ * sigma_;
  return std::expm1(s2) * std::exp(2.0 * mu_ + s2);
}

}  // namespace clustersim::sim
