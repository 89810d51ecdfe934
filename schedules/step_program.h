// The step simulator's program: an FsdpSchedule compiled into what the
// event loop runs (internal to workloads/; step_simulator.h is the API).
//
// Tasks become operations on their stream, in stream order: consecutive
// kernels with no dependency on another stream form one segment (timed at
// once, with its launch-bound tail); frees disappear (a host wait on a free
// becomes a wait for the compute operations issued before it); each
// collective is tuned once for its group shape (every group of a role has the
// same shape, see Layout); copies and host CPU work become local operations
// of fixed duration. Dependencies name (stream, position) pairs, so a rank's
// progress is a few counters. Host issue times are prefix sums of the
// operations' host costs (launches).
//
// Units: nanoseconds (int64) and bytes. Thread safety: compile_program is a
// pure function; a Program is immutable once built.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "collectives/collective_cost.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"
#include "schedules/fsdp_schedule.h"
#include "schedules/step_simulator.h"

namespace clustersim::workloads::step {

constexpr int kStreams = kStreamCount;

enum class OpKind : uint8_t { kSegment, kCollective, kLocal };

// Satisfied once `stream` has completed more than `pos` operations.
struct Dep {
  uint8_t stream;
  int32_t pos;
};

struct Op {
  OpKind kind = OpKind::kSegment;
  uint8_t stream = 0;
  int32_t pos = 0;            // index on its stream
  int64_t host_start_ns = 0;  // when the host starts issuing it, without blocking
  int64_t host_cost_ns = 0;   // host time to issue it
  int32_t gate_compute = -1;  // the host first waits for this many compute ops (-1: no wait)
  int32_t dep_begin = 0;
  int32_t dep_end = 0;
  int32_t first_task = 0;  // in the FsdpSchedule
  int32_t task_count = 0;
  // kSegment
  int64_t work_ns = 0;          // sum of the kernels' times
  int64_t first_launch_ns = 0;  // the first kernel is on the GPU this long after host start
  int64_t tail_ns = 0;          // launch-bound end, after host start
  // kLocal (a copy or host CPU work): its duration
  int64_t duration_ns = 0;
  // kCollective
  collectives::CollectiveOp op = collectives::CollectiveOp::kAllGather;
  GroupRole role = GroupRole::kNone;
  int32_t channel = 0;  // (role, stream) pair: one pending collective per group each
  int64_t bytes = 0;
  int64_t latency_ns = 0;
  int64_t transfer_ns = 0;  // uncontended
  double alone_Bps = 0;     // bytes / uncontended transfer time
  std::string_view algorithm;
  std::string_view protocol;
};

// Ranks laid out as torchtitan's device mesh [replica, shard, tp] (see
// step_simulator.h): r = (replica * shard + shard_index) * tp + tp_index.
struct Layout {
  int64_t world = 0;
  int64_t tp = 1;
  int64_t shard = 1;
  int64_t replica = 1;

  int64_t group_count(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return replica * tp;
      case GroupRole::kReplica:
        return shard * tp;
      case GroupRole::kTp:
        return world / tp;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  int64_t group_size(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return shard;
      case GroupRole::kReplica:
        return replica;
      case GroupRole::kTp:
        return tp;
      case GroupRole::kNone:
        break;
    }
    return 1;
  }
  // r = (rep * shard + sh) * tp + t
  int64_t group_of(GroupRole role, int64_t r) const {
    const int64_t t = r % tp;
    const int64_t sh = (r / tp) % shard;
    const int64_t rep = r / (tp * shard);
    switch (role) {
      case GroupRole::kShard:
        return rep * tp + t;
      case GroupRole::kReplica:
        return sh * tp + t;
      case GroupRole::kTp:
        return r / tp;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // The i-th member (ring order) of group g.
  int64_t member(GroupRole role, int64_t g, int64_t i) const {
    switch (role) {
      case GroupRole::kShard: {
        const int64_t rep = g / tp;
        const int64_t t = g % tp;
        return (rep * shard + i) * tp + t;
      }
      case GroupRole::kReplica: {
        const int64_t sh = g / tp;
        const int64_t t = g % tp;
        return (i * shard + sh) * tp + t;
      }
      case GroupRole::kTp:
        return g * tp + i;
      case GroupRole::kNone:
        break;
    }
    return g;
  }
};

struct Program {
  std::vector<Op> ops;
  std::vector<Dep> deps;
  std::array<std::vector<int32_t>, kStreams> stream_ops;  // op ids in stream order
  std::vector<int32_t> gate_ops;                          // ops with a host wait, host order
  std::vector<int> used_streams;                          // streams with ops, ascending
  std::vector<int64_t> kernel_ns;                         // by schedule kernel index
  struct Channel {
    GroupRole role;
    uint8_t stream;
  };
  std::vector<Channel> channels;
};

// Precondition: the layout matches config.workload and fits the cluster.
Program compile_program(const FsdpSchedule& schedule, const StepConfig& config,
                        const Layout& layout, const topology::Cluster& cluster,
                        const collectives::HardwareProfile& profile);

}  // namespace clustersim::workloads::step
