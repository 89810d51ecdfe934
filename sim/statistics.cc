#include "sim/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/check.h"

namespace clustersim::sim {

void RunningStats::add(double x) {
  CLUSTERSIM_CHECK(std::isfinite(x), "RunningStats observation " + std::to_string(x));
  ++count_;
  sum_ += x;
  if (count_ == 1) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (x - mean_);
}

void RunningStats::merge(const RunningStats& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(count_);
  const double nb = static_cast<double>(other.count_);
  const double n = na + nb;
  const double delta = other.mean_ - mean_;
  mean_ += delta * (nb / n);
  m2_ += other.m2_ + delta * delta * (na * nb / n);
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double RunningStats::mean() const {
  CLUSTERSIM_CHECK(count_ >= 1, "mean of no observations");
  return mean_;
}

double RunningStats::variance() const {
  CLUSTERSIM_CHECK(count_ >= 2,
                   "sample variance needs two observations, have " + std::to_string(count_));
  return m2_ / static_cast<double>(count_ - 1);
}

double RunningStats::stddev() const { return std::sqrt(variance()); }

double RunningStats::min() const {
  CLUSTERSIM_CHECK(count_ >= 1, "min of no observations");
  return min_;
}

double RunningStats::max() const {
  CLUSTERSIM_CHECK(count_ >= 1, "max of no observations");
  return max_;
}

void Samples::add(double x) {
  CLUSTERSIM_CHECK(std::isfinite(x), "Samples observation " + std::to_string(x));
  values_.push_back(x);
  sorted_valid_ = false;
}

const std::vector<double>& Samples::sorted() const {
  if (!sorted_valid_) {
    sorted_ = values_;
    std::sort(sorted_.begin(), sorted_.end());
    sorted_valid_ = true;
  }
  return sorted_;
}

double Samples::percentile(double p) const {
  CLUSTERSIM_CHECK(!values_.empty(), "percentile of no samples");
  CLUSTERSIM_CHECK(p >= 0 && p <= 100, "percentile p = " + std::to_string(p));
  const std::vector<double>& x = sorted();
  // Same operations, in the same order, as numpy's "linear" method, so that
  // results agree with numpy to the last bit.
  const double h = static_cast<double>(x.size() - 1) * (p / 100.0);
  const double below = std::floor(h);
  const auto i = static_cast<std::size_t>(below);
  const std::size_t j = std::min(i + 1, x.size() - 1);
  const double t = h - below;
  const double a = x[i];
  const double b = x[j];
  const double diff = b - a;
  // numpy's _lerp: interpolate from the nearer end, so that t close to 1
  // gives b exactly rather than a + (b - a) rounded.
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double Samples::mean() const {
  CLUSTERSIM_CHECK(!values_.empty(), "mean of no samples");
  double sum = 0;
  for (const double v : values_) sum += v;
  return sum / static_cast<double>(values_.size());
}

Histogram::Histogram(double lo, double hi, std::size_t bins)
    : lo_(lo), hi_(hi), width_((hi - lo) / static_cast<double>(bins)), counts_(bins, 0) {
  CLUSTERSIM_CHECK(bins > 0, "Histogram needs at least one bin");
  CLUSTERSIM_CHECK(std::isfinite(lo) && std::isfinite(hi) && lo < hi,
                   "Histogram needs finite lo < hi, got lo = " + std::to_string(lo) +
                       ", hi = " + std::to_string(hi));
  CLUSTERSIM_CHECK(std::isfinite(width_) && width_ > 0,
                   "Histogram bin width " + std::to_string(width_));
}

double Histogram::edge(std::size_t i) const {
  return i == counts_.size() ? hi_ : lo_ + width_ * static_cast<double>(i);
}

void Histogram::add(double x) {
  CLUSTERSIM_CHECK(!std::isnan(x), "Histogram observation is NaN");
  ++total_;
  if (x < lo_) {
    ++underflow_;
    return;
  }
  if (x >= hi_) {
    ++overflow_;
    return;
  }
  // The division is a guess that can be one off near an edge; the edges are
  // the truth (bin_lower/bin_upper report them), so settle against them.
  std::size_t i = std::min(static_cast<std::size_t>((x - lo_) / width_), counts_.size() - 1);
  while (i > 0 && x < edge(i)) --i;
  while (i + 1 < counts_.size() && x >= edge(i + 1)) ++i;
  ++counts_[i];
}

uint64_t Histogram::count(std::size_t bin) const {
  CLUSTERSIM_CHECK(bin < counts_.size(), "Histogram bin " + std::to_string(bin));
  return counts_[bin];
}

double Histogram::bin_lower(std::size_t bin) const {
  CLUSTERSIM_CHECK(bin < counts_.size(), "Histogram bin " + std::to_string(bin));
  return edge(bin);
}

double Histogram::bin_upper(std::size_t bin) const {
  CLUSTERSIM_CHECK(bin < counts_.size(), "Histogram bin " + std::to_string(bin));
  return edge(bin + 1);
}

}  // namespace clustersim::sim
