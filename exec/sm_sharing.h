// Compute slowed by communication sharing the GPU's SMs, the rule both
// engines apply: while a collective (or send/recv) of a rank is
// transferring, the rank's kernels run 1 / comm_overlap_slowdown as fast
// (NCCL's kernels occupy SMs; the profile's gpu.comm_overlap_slowdown).
//
// A running piece of compute (a segment of kernels, or one kernel) is
// tracked by its full-speed work and the rank's transfer overlap when it
// started; its progress at t is the elapsed time less what the overlap since
// then cost. Its end is found by looking again: a look is scheduled where the
// remaining work would end at the speed of the moment (exact while no
// transfer starts or ends), and a look that finds work left schedules
// another (each look leaves at most the slowed fraction of the previous
// remainder, so this ends in a few steps); the owner moves a pending look
// earlier when the rank's last transfer ends.
//
// Units: nanoseconds (int64 times, double work). Thread safety: values.
#pragma once

#include <cmath>
#include <cstdint>

namespace clustersim::workloads {

// Time one rank has had a transfer in flight since the step's start.
// Packed for the engines' per-rank hot state (16 bytes + the count).
struct TransferOverlap {
  int64_t overlap_ns = 0;  // until change_ns
  int64_t change_ns = 0;   // the last start or end of a transfer of the rank

  // Overlap until t (t not before change_ns) when `active` transfers are in flight.
  int64_t until(int64_t t, int active) const {
    return overlap_ns + (active > 0 ? t - change_ns : 0);
  }
  // A transfer starts or ends at `now`; `active` is the count before it.
  void change(int64_t now, int active) {
    overlap_ns = until(now, active);
    change_ns = now;
  }
};

struct SmSharing {
  double rate = 1;  // 1 / comm_overlap_slowdown: compute speed while a transfer is in flight

  explicit SmSharing(double comm_overlap_slowdown = 1) : rate(1.0 / comm_overlap_slowdown) {}

  // Full-speed work done by compute that started at start_ns, at now_ns,
  // given the rank's overlap then and at its start.
  double work_done(int64_t now_ns, int64_t start_ns, int64_t overlap_now_ns,
                   int64_t overlap_start_ns) const {
    const auto overlap = static_cast<double>(overlap_now_ns - overlap_start_ns);
    return static_cast<double>(now_ns - start_ns) - (1 - rate) * overlap;
  }
  // Elapsed time of `work_ns` of full-speed work that overlapped transfers
  // for `overlap_ns` (the slowed duration).
  double slowed_ns(double work_ns, int64_t overlap_ns) const {
    return work_ns + (1 - rate) * static_cast<double>(overlap_ns);
  }
  // When `left_ns` of full-speed work from `from_ns` would end: at full
  // speed, or slowed if a transfer is in flight (`slowed`).
  int64_t look_at(int64_t from_ns, double left_ns, bool slowed) const {
    const double span = slowed ? left_ns / rate : left_ns;
    return from_ns + static_cast<int64_t>(std::ceil(span));
  }
};

}  // namespace clustersim::workloads
