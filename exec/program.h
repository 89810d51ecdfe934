// A per-rank program, what the engine runs (exec/engine.h): the operations
// of each stream of a rank in stream order, their dependencies, and the host
// thread that issues them. Every rank of a role runs the same Program
// (flyweight): it holds no rank ids, groups or times. Front ends compile to
// it (schedules/step_program.h compiles FSDP/HSDP/TP schedules).
//
// Operations:
//  * kSegment, on the compute stream: back-to-back kernels timed at once.
//    The host starts issuing it at host_start_ns (from the rank's host
//    anchor, see below); its first kernel may start first_launch_ns later;
//    it ends no earlier than host start + tail_ns (launch-bound) nor before
//    its work_ns of kernels ran (slowed while a transfer of the rank is in
//    flight, exec/sm_sharing.h).
//  * kCollective: a group collective of `role`'s group (exec/mesh_layout.h)
//    on `channel` (a (role, stream) pair, one pending collective per group
//    each); the tuner's latency, then `bytes` at alone_Bps times its max-min
//    share of the links.
//  * kLocal: a copy or host CPU work of fixed duration_ns.
// Dependencies name (stream, position) pairs: op waits until `stream` has
// completed more than `pos` operations (stream order is implied). Host
// issue times are prefix sums of host_cost_ns in op order (the host issues
// ops in index order); at a gate op the host first waits until the compute
// stream has completed gate_compute operations, and resumes from then.
//
// Trace labels: kernels of segments (Program::kernels, a range per segment)
// and one label per other op, so that the engine records what ran without
// knowing the front end.
//
// Units: nanoseconds (int64) and bytes. Ownership: string_views point into
// the front end's tables (kernel names) or static strings; they must outlive
// the program's results. Thread safety: immutable once built.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "collectives/collective_cost.h"
#include "exec/mesh_layout.h"
#include "exec/step_accounts.h"
#include "exec/trace_sink.h"

namespace clustersim::workloads {

inline constexpr int kProgramStreams = 6;  // streams per rank, compute stream first
inline constexpr int kComputeStream = 0;

enum class OpKind : uint8_t { kSegment, kCollective, kLocal };

struct Dep {
  uint8_t stream;
  int32_t pos;
};

// What a trace shows for a kernel of a segment, or for another operation.
struct OpLabel {
  std::string_view track;
  std::string_view name;
  std::string_view category;
  TaskTag tag;
  int64_t bytes = 0;      // kLocal copies
  int64_t kernel_ns = 0;  // kernels: their share of the segment
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
  // The front end's items this op runs (schedule tasks, graph nodes): opaque
  // to the engine.
  int32_t first_task = 0;
  int32_t task_count = 0;
  // Trace: kSegment: its task_count kernels from Program::kernels[label], the
  // launch labelled by Program::launch; otherwise Program::labels[label].
  int32_t label = 0;
  // kSegment
  int64_t work_ns = 0;          // sum of the kernels' times
  int64_t first_launch_ns = 0;  // the first kernel is on the GPU this long after host start
  int64_t tail_ns = 0;          // launch-bound end, after host start
  // kLocal: its duration
  int64_t duration_ns = 0;
  // kCollective
  collectives::CollectiveOp op = collectives::CollectiveOp::kAllGather;
  GroupRole role = GroupRole::kNone;
  step_accounts::Account exposed = step_accounts::kExposedAllReduce;  // what waiting on it is
  int32_t channel = 0;
  int64_t bytes = 0;
  int64_t latency_ns = 0;
  int64_t transfer_ns = 0;  // uncontended
  double alone_Bps = 0;     // bytes / uncontended transfer time
  std::string_view algorithm;
  std::string_view protocol;
};

struct Program {
  std::vector<Op> ops;
  std::vector<Dep> deps;
  std::array<std::vector<int32_t>, kProgramStreams> stream_ops;  // op ids in stream order
  std::array<std::string_view, kProgramStreams> stream_names;    // for messages
  std::vector<int32_t> gate_ops;                                 // ops with a host wait
  std::vector<int> used_streams;                                 // streams with ops, ascending
  struct Channel {
    GroupRole role;
    uint8_t stream;
  };
  std::vector<Channel> channels;
  std::vector<OpLabel> kernels;  // segments' kernels, in segment order
  std::vector<OpLabel> labels;   // other ops
  OpLabel launch;                // a segment's host launch (name, category, track)
};

}  // namespace clustersim::workloads
