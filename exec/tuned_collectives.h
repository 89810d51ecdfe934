// The tuner's answer for a collective, in the engines' integer nanoseconds,
// and a cache of those answers by group shape, so that a step that runs the
// same collective on thousands of groups asks the tuner once.
//
// A collective takes latency_ns, then moves its bytes at alone_Bps when no
// other transfer shares its links (transfer_ns = bytes / alone_Bps, rounded
// to the nanosecond); contention is FlowTransfers' business.
//
// Units: nanoseconds, bytes, bytes/s. Ownership: algorithm and protocol
// point at the tuner's static names. Thread safety: TunedCollectives is not
// thread-safe (one per simulation); tuned_times is pure.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/tuner.h"
#include "hardware/hardware_profile.h"

namespace clustersim::workloads {

struct TunedTimes {
  int64_t latency_ns = 0;
  int64_t transfer_ns = 0;  // uncontended
  double alone_Bps = 0;     // bytes / uncontended transfer time; 0 if nothing moves
  std::string_view algorithm;
  std::string_view protocol;
};

// `tuned` for a collective of `bytes`.
TunedTimes tuned_times(const collectives::TunedCollective& tuned, int64_t bytes);

// Tuner answers by (group geometry, collective, bytes, forced or not). The
// geometry's ranks, nodes and ranks per node are the key: the link rates of
// one cluster are the same for every group of that shape.
class TunedCollectives {
 public:
  TunedCollectives(const collectives::HardwareProfile& profile, collectives::ForcedChoice forced)
      : profile_(profile), forced_(forced) {}

  // The id of the answer (stable; see at()). `forced`: apply the scenario's
  // forced algorithm/protocol (point-to-point transfers are never forced).
  // Throws what collectives::tune_collective throws (std::invalid_argument
  // for a forced choice the group cannot run); nothing is cached then.
  int32_t find_or_tune(const collectives::GroupGeometry& geometry, collectives::CollectiveOp op,
                       int64_t bytes, bool forced);
  const TunedTimes& at(int32_t id) const { return tuned_[static_cast<size_t>(id)]; }

 private:
  const collectives::HardwareProfile& profile_;
  collectives::ForcedChoice forced_;
  std::map<std::tuple<int, int, int, int, int64_t, bool>, int32_t> index_;
  std::vector<TunedTimes> tuned_;
};

}  // namespace clustersim::workloads
