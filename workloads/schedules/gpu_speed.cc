#include "workloads/schedules/gpu_speed.h"

#include <cmath>
#include <string>

#include "sim/check.h"
#include "sim/distributions.h"
#include "sim/random_stream.h"

namespace clustersim::workloads {

std::vector<double> gpu_time_factors(int64_t world, double sd, uint64_t seed) {
  CLUSTERSIM_CHECK(
      world > 0 && sd >= 0 && std::isfinite(sd),
      "gpu_time_factors: world " + std::to_string(world) + ", sd " + std::to_string(sd));
  std::vector<double> factors;
  if (sd == 0) return factors;
  factors.reserve(static_cast<size_t>(world));
  for (int64_t r = 0; r < world; ++r) {
    sim::RandomStream rng(seed, "gpu.speed", static_cast<uint64_t>(r));
    factors.push_back(std::exp(sd * sim::Normal::standard(rng)));
  }
  return factors;
}

}  // namespace clustersim::workloads
