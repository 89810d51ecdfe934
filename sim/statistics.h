// Summary statistics for simulation outputs: streaming moments, stored
// samples with percentiles, and fixed-width histograms.
//
// Contract: observations are doubles in the caller's unit; results come back
// in that unit (variance in its square). NaN is never a valid observation
// (add() checks); RunningStats and Samples also reject infinities, which
// would silently turn every moment into NaN. Asking for a statistic that
// does not exist (the mean of nothing, the sample variance of one value) is a
// broken invariant and throws InvariantError. Results are deterministic
// given the order of add() and merge() calls; floating-point summation is
// order dependent, so callers that aggregate across threads must merge in a
// fixed order.
//
// Thread safety: plain values, no internal locking; one writer at a time.
// Samples caches a sorted copy inside const methods, so unlike the other
// two, not even const calls on one Samples may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace clustersim::sim {

// Count, mean, variance, min, max and sum in O(1) memory. Welford's update
// (Technometrics 1962) for the second moment, which stays accurate when the
// mean is large compared to the spread, unlike sum of squares.
class RunningStats {
 public:
  void add(double x);

  // Combines with stats over another set of observations, as if all had been
  // added here (Chan, Golub and LeVeque, "Updating formulae and a pairwise
  // algorithm for computing sample variances", 1979).
  void merge(const RunningStats& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Exact sum of the additions in order, not mean * count.
  double sum() const { return sum_; }
  double mean() const;      // count >= 1
  double variance() const;  // sample variance, divisor count - 1; count >= 2
  double stddev() const;    // sqrt(variance())
  double min() const;       // count >= 1
  double max() const;       // count >= 1

 private:
  uint64_t count_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // sum of squared deviations from the mean
  double sum_ = 0;
  double min_ = 0;
  double max_ = 0;
};

// All observations, for order statistics. O(n) memory.
class Samples {
 public:
  void add(double x);
  void reserve(std::size_t n) { values_.reserve(n); }

  std::size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  // In insertion order; percentile() never reorders them.
  const std::vector<double>& values() const { return values_; }

  // The p-th percentile, p in [0, 100], interpolating linearly between the
  // closest ranks: with the values sorted as x[0..n-1] and h = (n - 1) p / 100,
  // x[floor(h)] + (h - floor(h)) (x[floor(h) + 1] - x[floor(h)]). This is
  // numpy.percentile's default method ("linear", Hyndman and Fan type 7).
  // The first call after add() sorts a copy: O(n log n); later ones are O(1).
  // Non-empty only.
  double percentile(double p) const;
  double median() const { return percentile(50); }
  double mean() const;  // non-empty only

 private:
  const std::vector<double>& sorted() const;

  std::vector<double> values_;
  mutable std::vector<double> sorted_;
  mutable bool sorted_valid_ = true;  // an empty sample is sorted
};

// Counts over `bins` equal-width bins covering [lo, hi); bin i is
// [bin_lower(i), bin_upper(i)). Values below lo count as underflow, values
// at or above hi as overflow. An observation always lands in the bin whose
// reported edges contain it, even where (x - lo) / width rounds the other way.
class Histogram {
 public:
  Histogram(double lo, double hi, std::size_t bins);

  void add(double x);

  std::size_t bins() const { return counts_.size(); }
  double lo() const { return lo_; }
  double hi() const { return hi_; }
  uint64_t count(std::size_t bin) const;
  double bin_lower(std::size_t bin) const;  // bin < bins()
  double bin_upper(std::size_t bin) const;  // bin < bins(); bin_upper(bins() - 1) == hi
  uint64_t underflow() const { return underflow_; }
  uint64_t overflow() const { return overflow_; }
  // All observations, including underflow and overflow.
  uint64_t total() const { return total_; }

 private:
  double edge(std::size_t i) const;  // i in [0, bins()]

  double lo_;
  double hi_;
  double width_;
  std::vector<uint64_t> counts_;
  uint64_t underflow_ = 0;
  uint64_t overflow_ = 0;
  uint64_t total_ = 0;
};

}  // namespace clustersim::sim
