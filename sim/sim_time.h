// SimTime: simulated time as a signed 64-bit count of nanoseconds.
//
// Contract: never a double. Construct with the named constructors
// (SimTime::us(3)); convert to seconds only for reporting, explicitly
// (to_seconds()). Arithmetic is plain int64 arithmetic: the range is about
// +-292 years, far beyond any campaign, and overflow is a broken invariant,
// not something the engine checks per event.
// Thread safety: a value type; freely copied between threads.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::sim {

class SimTime {
 public:
  constexpr SimTime() = default;

  static constexpr SimTime ns(int64_t n) { return SimTime(n); }
  static constexpr SimTime us(int64_t n) { return SimTime(n * kNsPerUs); }
  static constexpr SimTime ms(int64_t n) { return SimTime(n * kNsPerMs); }
  static constexpr SimTime s(int64_t n) { return SimTime(n * kNsPerS); }
  static constexpr SimTime minutes(int64_t n) { return SimTime(n * 60 * kNsPerS); }
  static constexpr SimTime hours(int64_t n) { return SimTime(n * 3600 * kNsPerS); }
  static constexpr SimTime days(int64_t n) { return SimTime(n * 86400 * kNsPerS); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<int64_t>::max()); }

  // Rounds to the nearest nanosecond (halves away from zero). The only way
  // from a double to a SimTime, and deliberately verbose.
  static SimTime from_seconds_rounded(double seconds);
  // The same from a (non-negative) count of nanoseconds, inline for hot paths
  // such as drawing delays: rounds halves up without a libm call.
  static SimTime from_ns_rounded(double ns) {
    if (!(ns >= 0.0 && ns < 9.2e18)) [[unlikely]]
      return from_seconds_rounded(ns * 1e-9);
    auto whole = static_cast<int64_t>(ns);  // truncation; exact below 2^63
    whole += static_cast<int64_t>(ns - static_cast<double>(whole) >= 0.5);
    return SimTime(whole);
  }

  constexpr int64_t count_ns() const { return ns_; }
  // For reports and plots only; never feed the result back into time.
  constexpr double to_seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const SimTime&) const = default;

  constexpr SimTime& operator+=(SimTime o) {
    ns_ += o.ns_;
    return *this;
  }
  constexpr SimTime& operator-=(SimTime o) {
    ns_ -= o.ns_;
    return *this;
  }
  friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime(a.ns_ + b.ns_); }
  friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime(a.ns_ - b.ns_); }
  friend constexpr SimTime operator*(SimTime a, int64_t k) { return SimTime(a.ns_ * k); }
  friend constexpr SimTime operator*(int64_t k, SimTime a) { return SimTime(a.ns_ * k); }
  friend constexpr SimTime operator/(SimTime a, int64_t k) { return SimTime(a.ns_ / k); }
  // How many whole `b` fit in `a` (e.g. steps in an interval).
  friend constexpr int64_t operator/(SimTime a, SimTime b) { return a.ns_ / b.ns_; }

  static constexpr int64_t kNsPerUs = 1'000;
  static constexpr int64_t kNsPerMs = 1'000'000;
  static constexpr int64_t kNsPerS = 1'000'000'000;

 private:
  constexpr explicit SimTime(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

}  // namespace clustersim::sim
