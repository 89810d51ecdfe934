// A per-rank program, what the engine runs (exec/engine.h): the operations
// of each stream of a rank in stream order, their dependencies, and the host
// thread that issues them. Every rank of a role runs the same Program
// (flyweight): it holds no rank ids, groups or times. Front ends compile to
// it (workloads/schedules/step_program.h compiles FSDP/HSDP/TP schedules).
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
//    A channel with a slot (Channel::slot >= 0) runs on the rank's explicit
//    group of that slot instead (exec/rank_groups.h): the engine tunes it
//    on that group's geometry when it starts (latency_ns etc. unset).
//  * kLocal: a copy, host CPU work or a kernel off the compute stream, of
//    fixed duration_ns; what waiting on its end is: `exposed`.
//  * kSend / kRecv: point-to-point, matched by peer: the seq-th send of
//    rank s to peer rank d with `tag` meets the seq-th receive of d from s
//    (peer: a rank of the job relative to RankGroups::peer_base, or with
//    peer_role the member `peer` places on around the rank's group of that
//    role, exec/mesh_layout.h's ring_neighbor: a ring exchange); the
//    transfer starts when both are there, and takes the tuner's two-rank
//    broadcast time for the pair with max-min sharing, both ending together.
// Dependencies name (stream, position) pairs: op waits until `stream` has
// completed more than `pos` operations (stream order is implied; a pair on
// the op's own stream at or after its position never holds: a cycle).
// Host issue times: host_start_ns, non-decreasing in op order (the host
// issues ops in index order), from the host's anchor; an op may start no
// earlier than host start + host_cost_ns (segments: + first_launch_ns). At
// a gate the host first waits until the gate's dependencies hold, and
// resumes from then at the gate's host time; the ops from the gate's op on
// are not issued before. Every op before a gate ends its host cost by the
// gate's host time.
//
// Trace labels: kernels of segments (Program::kernels, a range per segment)
// and one label per other op (label -1: none), so that the engine records
// what ran without knowing the front end. The host's work: a segment's
// launch (Program::launch, over its host cost), or the op's host spans
// (Program::host_spans[host_span_begin, host_span_end), each at the op's
// host start + offset_ns).
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

enum class OpKind : uint8_t { kSegment, kCollective, kLocal, kSend, kRecv };

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
  int32_t host_span_begin = 0;
  int32_t host_span_end = 0;
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
  // What waiting on the op is (kLocal: its end; collectives: the exposed kind).
  step_accounts::Account exposed = step_accounts::kExposedAllReduce;
  // kSend / kRecv: the other rank (relative), the tag, the ordinal among the
  // rank's ops of the same kind, peer and tag; bytes below.
  int64_t peer = 0;
  GroupRole peer_role = GroupRole::kNone;  // kNone: peer is a rank (see above)
  // The transfer runs on copy engines (async TP's symmetric-memory copies),
  // not NCCL kernels: it takes no SMs from the rank's compute.
  bool copy_engine = false;
  int64_t tag = 0;
  int32_t seq = 0;
  // kCollective
  collectives::CollectiveOp op = collectives::CollectiveOp::kAllGather;
  GroupRole role = GroupRole::kNone;
  int32_t channel = 0;
  int64_t bytes = 0;
  int64_t latency_ns = 0;
  int64_t transfer_ns = 0;  // uncontended
  double alone_Bps = 0;     // bytes / uncontended transfer time
  std::string_view algorithm;
  std::string_view protocol;
};

// A host wait: before issuing ops[op] and what follows, the host waits until
// deps[dep_begin, dep_end) hold, then resumes at host time host_ns.
struct Gate {
  int32_t op = 0;
  int64_t host_ns = 0;
  int32_t dep_begin = 0;
  int32_t dep_end = 0;
};

// Host work traced on its own (a launch node of a trace), relative to its op.
struct HostSpan {
  int64_t offset_ns = 0;  // after the op's host start
  int64_t duration_ns = 0;
  OpLabel label;
};

struct Program {
  std::vector<Op> ops;
  std::vector<Dep> deps;  // ops' and gates' dependencies
  // By stream (kProgramStreams unless the front end sizes them otherwise;
  // at most 255): op ids in stream order, names for messages.
  std::vector<std::vector<int32_t>> stream_ops = std::vector<std::vector<int32_t>>(kProgramStreams);
  std::vector<std::string_view> stream_names = std::vector<std::string_view>(kProgramStreams);
  std::vector<Gate> gates;        // in op order
  std::vector<int> used_streams;  // streams with ops, ascending
  struct Channel {
    GroupRole role;
    uint8_t stream;
    int32_t slot = -1;  // >= 0: the rank's explicit group of this slot (role unused)
  };
  std::vector<Channel> channels;
  std::vector<OpLabel> kernels;  // segments' kernels, in segment order
  std::vector<OpLabel> labels;   // other ops
  std::vector<HostSpan> host_spans;
  OpLabel launch;  // a segment's host launch (name, category, track)
};

// Adds a gate before op `op` (the last op added so far or a later one): the
// host waits for `count` ops of the compute stream (none: no gate).
inline void add_compute_gate(Program& p, int32_t op, int32_t count, int64_t host_ns) {
  if (count <= 0) return;
  Gate g;
  g.op = op;
  g.host_ns = host_ns;
  g.dep_begin = static_cast<int32_t>(p.deps.size());
  p.deps.push_back(Dep{static_cast<uint8_t>(kComputeStream), count - 1});
  g.dep_end = static_cast<int32_t>(p.deps.size());
  p.gates.push_back(g);
}

}  // namespace clustersim::workloads
