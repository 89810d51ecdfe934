// The spread of compute speed across the GPUs of one job: identical parts
// run at different speeds (manufacturing variability under power
// management; Sinha et al., "Not All GPUs Are Created Equal", SC'22), and in
// a synchronous step every collective waits for its slowest member, so the
// cost grows with the size of the groups. The hardware profile's
// gpu.speed_variation is the standard deviation sd of log speed; GPU r's
// kernels take exp(sd * z_r) times as long as the median GPU's, z_r a
// standard normal drawn from the scenario's seed on the stream
// ("gpu.speed", r), so a GPU keeps its speed whatever else the scenario
// holds and whatever the thread or MPI rank count.
//
// Units: dimensionless factors on compute time. Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <vector>

namespace clustersim::workloads {

// One factor per rank 0 .. world - 1 (GPU r = rank r); empty when sd == 0.
// Requires world > 0 and sd >= 0 (invariant check).
std::vector<double> gpu_time_factors(int64_t world, double sd, uint64_t seed);

}  // namespace clustersim::workloads
