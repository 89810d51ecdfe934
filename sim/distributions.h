// Probability distributions, implemented here rather than taken from <random>:
// the standard library's distributions are unspecified algorithms that differ
// between libstdc++, libc++ and MSVC, which would make a scenario's results
// depend on the compiler.
//
// Contract: each distribution is a small immutable value; operator() turns
// draws of a RandomStream into one sample. A sample depends only on the
// stream's integer draws and on the C library's log, exp, sqrt and pow (glibc
// on our platforms; LogNormal::from_mean_stddev also uses log1p), given IEEE
// double arithmetic without -ffast-math; nothing else (no hidden state, no
// cached second normal deviate). The one table, Exponential's ziggurat, is
// computed at compile time with IEEE arithmetic alone (its own exp and log,
// not the C library's), so it is the same for every build. Parameters are
// plain doubles in whatever unit the caller uses (seconds, hours, bytes), and
// samples come out in that same unit. Constructors check their parameters
// (finite; positive where the distribution needs it) and throw InvariantError.
// mean() and variance() are the analytic moments, for tests and reports.
//
// Thread safety: the distributions are immutable and may be shared between
// threads; the RandomStream passed in must not be.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "sim/random_stream.h"

namespace clustersim::sim {

// Continuous uniform on [lo, hi), lo < hi. One draw.
class Uniform {
 public:
  Uniform(double lo, double hi);

  double operator()(RandomStream& rng) const {
    const double x = lo_ + width_ * rng.next_unit();
    // lo + width * u can round up to hi; keep the interval half-open.
    return x < hi_ ? x : below_hi_;
  }

  double lo() const { return lo_; }
  double hi() const { return hi_; }
  double mean() const { return lo_ + 0.5 * width_; }
  double variance() const { return width_ * width_ / 12.0; }

 private:
  double lo_;
  double hi_;
  double width_;
  double below_hi_;  // largest double below hi
};

namespace detail {

// The ziggurat for the standard exponential density f(x) = exp(-x), x >= 0
// (Marsaglia and Tsang, "The Ziggurat Method for Generating Random
// Variables", Journal of Statistical Software 5(8), 2000: 256 layers,
// r = 7.69711747013104972, layer area v = 3.949659822581572e-3).
//
// x[1] = r > x[2] > ... > x[255] > x[256] = 0, with f(x[i + 1]) = f(x[i]) +
// v / x[i], so layer i >= 1, the rectangle [0, x[i]) x [f(x[i]), f(x[i+1])],
// has area v. Layer 0 is the base strip [0, r) x [0, f(r)] plus the tail
// beyond r (area f(r)), drawn as one rectangle of width x[0] = v / f(r).
// A layer's points with x < x[i + 1] lie under the curve: the fast path.
struct ExpZigguratLayer {
  uint64_t accept;  // floor(x[i + 1] / x[i] * 2^53): accept a 53-bit u below this
  double width;     // x[i] * 2^-53: the sample is u * width
};

struct alignas(64) ExpZiggurat {
  // Interleaved and aligned: the fast path touches one 16-byte entry.
  std::array<ExpZigguratLayer, 256> layers;
  std::array<double, 257> x;
  std::array<double, 257> f;  // exp(-x[i])
};

// Constant-initialised (constinit in distributions.cc), so it is ready before
// any dynamic initialiser runs.
extern const ExpZiggurat kExpZiggurat;

inline constexpr double kExpZigguratR = 7.69711747013104972;
inline constexpr double kExpZigguratV = 3.949659822581572e-3;

}  // namespace detail

// Exponential with the given mean (1 / rate), mean > 0: mean times a standard
// exponential deviate from the ziggurat (see detail::ExpZiggurat). Each
// attempt takes one 64-bit draw: its low 8 bits pick the layer, its top 53
// bits the uniform position u in it. 97.8% of samples take the fast path (one
// draw, a table lookup, a compare and a multiply; no libm call). The rest
// (standard_slow) test the wedge against exp(-x), with one more draw, or, in
// the tail beyond r, return r plus a fresh standard deviate (the tail of an
// exponential is again exponential); a sample consumes 1.0336 draws on
// average, a variable number. A sample depends only on the stream's integer
// draws and on the C library's exp (the wedge test; the tail needs no log);
// the table is computed at compile time without the C library. Inline: the
// engine's hot path (one per event in the hold benchmark, and every failure
// inter-arrival).
class Exponential {
 public:
  explicit Exponential(double mean);

  double operator()(RandomStream& rng) const { return mean_ * standard(rng); }

  // One Exp(1) deviate.
  static double standard(RandomStream& rng) {
    const uint64_t bits = rng.next_u64();
    const detail::ExpZigguratLayer& layer = detail::kExpZiggurat.layers[bits & 0xff];
    const uint64_t u = bits >> 11;
    if (u < layer.accept) [[likely]] {
      return static_cast<double>(u) * layer.width;
    }
    return standard_slow(rng, bits);
  }

  double mean() const { return mean_; }
  double variance() const { return mean_ * mean_; }

 private:
  // The rest of standard() for a first draw `bits` that missed the fast path.
  static double standard_slow(RandomStream& rng, uint64_t bits);

  double mean_;
};

// Weibull(shape k, scale lambda), both > 0: inversion,
// lambda * (-log U)^(1/k). One draw. shape < 1 models infant mortality,
// shape > 1 wear-out; shape 1 has the distribution of Exponential(scale)
// (though not its samples: Exponential draws by the ziggurat).
class Weibull {
 public:
  Weibull(double shape, double scale);

  double operator()(RandomStream& rng) const;

  double shape() const { return shape_; }
  double scale() const { return scale_; }
  // scale * Gamma(1 + 1/k) and scale^2 * (Gamma(1 + 2/k) - Gamma(1 + 1/k)^2).
  double mean() const;
  double variance() const;

 private:
  double shape_;
  double scale_;
  double inv_shape_;
};

// Normal(mean, stddev), stddev >= 0 (0 is a point mass at mean), by the
// Marsaglia polar method: draws pairs (u, v) uniform in the square until they
// fall inside the unit disc (probability pi/4), so it consumes a variable,
// even number of draws (2 / (pi/4) ~ 2.55 on average). Of the two deviates the
// method yields, only one is used: caching the other would make a sample
// depend on the previous call.
class Normal {
 public:
  Normal(double mean, double stddev);

  double operator()(RandomStream& rng) const { return mean_ + stddev_ * standard(rng); }

  // One N(0, 1) deviate.
  static double standard(RandomStream& rng);

  double mean() const { return mean_; }
  double stddev() const { return stddev_; }
  double variance() const { return stddev_ * stddev_; }

 private:
  double mean_;
  double stddev_;
};

// LogNormal: exp(N(mu, sigma)), sigma >= 0; mu and sigma are the parameters
// of the underlying normal, not the mean and stddev of the samples (use
// from_mean_stddev for those). Draws as Normal.
class LogNormal {
 public:
  LogNormal(double mu, double sigma);

  // The LogNormal whose samples have this mean (> 0) and stddev (>= 0):
  // sigma^2 = log(1 + stddev^2 / mean^2), mu = log(mean) - sigma^2 / 2.
  static LogNormal from_mean_stddev(double mean, double stddev);

  double operator()(RandomStream& rng) const {
    return std::exp(mu_ + sigma_ * Normal::standard(rng));
  }

  double mu() const { return mu_; }
  double sigma() const { return sigma_; }
  // exp(mu + sigma^2 / 2) and (exp(sigma^2) - 1) * exp(2 mu + sigma^2).
  double mean() const;
  double variance() const;

 private:
  double mu_;
  double sigma_;
};

}  // namespace clustersim::sim
