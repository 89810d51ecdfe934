// Length of the union of half-open intervals [start, end): the busy time of
// a stream whose kernels may overlap (measured compute kernels, simulated
// compute tasks). Sorts `intervals` in place. Works for any arithmetic time
// type (microseconds as double, nanoseconds as int64_t).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace clustersim::calibration {

template <class T>
T union_length(std::vector<std::pair<T, T>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  T total{};
  T start{}, end{};
  bool open = false;
  for (const auto& [b, e] : intervals) {
    if (open && b <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) total += end - start;
    start = b;
    end = e;
    open = true;
  }
  if (open) total += end - start;
  return total;
}

}  // namespace clustersim::calibration
