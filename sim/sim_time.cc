#include "sim/sim_time.h"

#include <cmath>

#include "sim/check.h"

namespace clustersim::sim {

SimTime SimTime::from_seconds_rounded(double seconds) {
  const double ns = std::round(seconds * 1e9);
  // 9.2e18 is the largest magnitude an int64 holds; beyond it is a bug upstream.
  CLUSTERSIM_CHECK(std::isfinite(ns) && std::fabs(ns) < 9.2e18,
                   "seconds value " + std::to_string(seconds) + " does not fit in SimTime");
  return SimTime(static_cast<int64_t>(ns));
}

}  // namespace clustersim::sim
