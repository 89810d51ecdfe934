#include "workloads/schedules/step_program.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "collectives/group_collectives.h"
#include "collectives/tuner.h"
#include "exec/tuned_collectives.h"
#include "sim/check.h"
#include "sim/sim_time.h"

namespace clustersim::workloads::step {

namespace {

using collectives::CollectiveOp;
using sim::SimTime;

// Send/recv tags: a micro-batch's activation (forward) or its gradient.
constexpr int64_t kActivationTag = 0;
constexpr int64_t kGradientTag = 1;
constexpr int64_t kRingTag = 2;  // context parallelism's ring exchanges
constexpr int64_t kTpTag = 3;    // async TP's copies

// The three users of send/recv. A ring's peer (context parallelism's
// exchanges, async TP's copies) is the member of the rank's group that many
// places on; a pipeline stage's is the rank one stage on or back.
struct P2pKind {
  bool ring;
  bool copy_engine;
  int64_t tag;  // rings; a pipeline's tag is its direction
  step_accounts::Account exposed;
  std::string_view track, category;
};
constexpr P2pKind kPipelineP2p{false, false, 0, step_accounts::kPipelineBubble, "pp", "pipeline"};
constexpr P2pKind kCpP2p{
    true, false, kRingTag, step_accounts::kExposedCp, "cp", "context_parallel"};
constexpr P2pKind kTpP2p{true, true, kTpTag, step_accounts::kExposedTp, "tp", "async_tp"};
const P2pKind& p2p_kind(const Task& t) {
  return t.group == GroupRole::kTp ? kTpP2p : t.group == GroupRole::kCp ? kCpP2p : kPipelineP2p;
}

bool is_kernel(TaskKind kind) { return kind == TaskKind::kKernel || kind == TaskKind::kOptimizer; }
bool is_local(TaskKind kind) {
  return kind == TaskKind::kCopyToDevice || kind == TaskKind::kCopyToHost ||
         kind == TaskKind::kCpuOptimizer;
}

class ProgramBuilder {
 public:
  ProgramBuilder(const FsdpSchedule& schedule, const StepConfig& config, const Layout& layout,
                 const topology::Cluster& cluster, const collectives::HardwareProfile& profile)
      : s_(schedule),
        config_(config),
        layout_(layout),
        cluster_(cluster),
        tuned_(profile, config.forced) {}

  StepProgram build() {
    kernel_ns_.reserve(s_.kernels.size());
    for (const Kernel& k : s_.kernels) {
      kernel_ns_.push_back(kernel_time(k, config_.compute).count_ns());
    }
    // Pipeline stages' sends and receives get streams beyond these, one per
    // channel, and context parallelism its collectives' stream (extra_stream).
    const int streams = kStreamCountWithoutPipeline;
    p_.stream_ops.resize(static_cast<size_t>(streams));
    p_.stream_names.resize(static_cast<size_t>(streams));
    for (int st = 0; st < streams; ++st) {
      p_.stream_names[static_cast<size_t>(st)] = stream_name(static_cast<Stream>(st));
    }
    p_.launch.track = "host";
    p_.launch.name = config_.workload.cuda_graphs ? "cuda_graph_launch" : "kernel_launches";
    p_.launch.category = "host";
    // First, so that every stage's program numbers it alike.
    if (config_.workload.cp > 1) (void)extra_stream(Stream::kCp, 0);
    if (config_.workload.pp > 1) register_channels();
    task_op_.assign(static_cast<size_t>(s_.size()), -1);
    free_compute_count_.assign(static_cast<size_t>(s_.size()), -1);
    // Kernels another stream waits for end their segment: the waiter starts
    // when that kernel is done, not when the kernels issued after it are
    // (async TP's copies start as their input is made, beside the local
    // chunk's GEMM).
    awaited_.assign(static_cast<size_t>(s_.size()), false);
    for (int32_t i = 0; i < s_.size(); ++i) {
      const Task& t = s_.tasks[static_cast<size_t>(i)];
      if (t.kind == TaskKind::kFree) continue;  // frees wait by count (gates), not by task
      for (const int32_t d : s_.deps_of(i)) {
        const Task& dt = s_.tasks[static_cast<size_t>(d)];
        if (is_kernel(dt.kind) && dt.stream != t.stream) awaited_[static_cast<size_t>(d)] = true;
      }
    }
    int32_t compute_ops = 0;
    int32_t prev_task_op = -1;  // op of the previous non-free task in host order
    for (int32_t i = 0; i < s_.size(); ++i) {
      const Task& t = s_.tasks[static_cast<size_t>(i)];
      if (t.kind == TaskKind::kFree) {
        // A free completes once the compute ops issued before it have.
        free_compute_count_[static_cast<size_t>(i)] = compute_ops;
        continue;
      }
      if (is_kernel(t.kind) && can_extend(i, prev_task_op)) {
        extend_segment(i, prev_task_op);
        task_op_[static_cast<size_t>(i)] = prev_task_op;
        continue;
      }
      const auto id = static_cast<int32_t>(p_.ops.size());
      p_.ops.push_back(new_op(i));
      task_op_[static_cast<size_t>(i)] = id;
      prev_task_op = id;
      if (p_.ops.back().stream == static_cast<uint8_t>(Stream::kCompute)) ++compute_ops;
    }
    finish_host_times();
    for (const auto& [op, count] : gates_) {
      add_compute_gate(p_, op, count, p_.ops[static_cast<size_t>(op)].host_start_ns);
    }
    for (size_t st = 0; st < p_.stream_ops.size(); ++st) {
      if (!p_.stream_ops[st].empty()) p_.used_streams.push_back(static_cast<int>(st));
    }
    return StepProgram{std::move(p_), std::move(kernel_ns_)};
  }

 private:
  // A kernel joins the open segment when it follows it directly in host
  // order and depends on nothing but the previous kernel.
  bool can_extend(int32_t task, int32_t prev_op) const {
    if (prev_op < 0) return false;
    const Op& op = p_.ops[static_cast<size_t>(prev_op)];
    if (op.kind != OpKind::kSegment) return false;
    if (op.first_task + op.task_count != task) return false;  // something was issued between
    if (awaited_[static_cast<size_t>(task - 1)]) return false;  // another stream waits for it
    const Task& t = s_.tasks[static_cast<size_t>(task)];
    if (t.host_wait != kNoHostWait) return false;
    for (const int32_t d : s_.deps_of(task)) {
      if (d != task - 1) return false;
    }
    return true;
  }

  void extend_segment(int32_t task, int32_t op_id) {
    Op& op = p_.ops[static_cast<size_t>(op_id)];
    ++op.task_count;
    op.work_ns += kernel_ns_[static_cast<size_t>(s_.tasks[static_cast<size_t>(task)].kernel)];
    add_kernel_label(task);
  }

  Op new_op(int32_t task) {
    const Task& t = s_.tasks[static_cast<size_t>(task)];
    Op op;
    op.stream = program_stream(t);
    op.pos = static_cast<int32_t>(p_.stream_ops[op.stream].size());
    p_.stream_ops[op.stream].push_back(static_cast<int32_t>(p_.ops.size()));
    op.first_task = task;
    op.task_count = 1;
    op.dep_begin = static_cast<int32_t>(p_.deps.size());
    pending_deps_ = 0;
    for (const int32_t d : s_.deps_of(task)) add_dep(d, op.stream);
    op.dep_end = static_cast<int32_t>(p_.deps.size());
    if (t.host_wait != kNoHostWait) {
      const int32_t count = free_compute_count_[static_cast<size_t>(t.host_wait)];
      CLUSTERSIM_CHECK(count >= 0, "a host wait names a free");
      gates_.emplace_back(static_cast<int32_t>(p_.ops.size()), count);
    }
    if (is_kernel(t.kind)) {
      op.kind = OpKind::kSegment;
      op.work_ns = kernel_ns_[static_cast<size_t>(t.kernel)];
      op.label = static_cast<int32_t>(p_.kernels.size());
      add_kernel_label(task);
    } else if (t.kind == TaskKind::kSend || t.kind == TaskKind::kRecv) {
      // The peer rank is this rank's position peer_stage stages on or back
      // (or members around its CP or TP group); the ordinal pairs the k-th
      // send of a direction with the k-th receive.
      const P2pKind& k = p2p_kind(t);
      op.kind = t.kind == TaskKind::kSend ? OpKind::kSend : OpKind::kRecv;
      op.peer = t.peer_stage;
      op.peer_role = k.ring ? t.group : GroupRole::kPp;
      op.copy_engine = k.copy_engine;
      op.tag = k.ring ? k.tag : t.phase == Phase::kForward ? kActivationTag : kGradientTag;
      op.seq = p2p_count_[std::make_tuple(op.kind, op.peer, op.tag)]++;
      op.bytes = t.bytes;
      op.exposed = k.exposed;
      op.label =
          add_label(OpLabel{k.track, task_kind_name(t.kind), k.category, tag_of(t), t.bytes, 0});
    } else if (is_local(t.kind)) {
      op.kind = OpKind::kLocal;
      op.exposed = step_accounts::kExposedPcie;
      const bool cpu = t.kind == TaskKind::kCpuOptimizer;
      op.label = add_label(OpLabel{cpu ? "cpu" : "pcie", task_kind_name(t.kind),
                                   cpu ? "cpu" : "pcie", tag_of(t), cpu ? 0 : t.bytes, 0});
      const double seconds = t.kind == TaskKind::kCpuOptimizer
                                 ? static_cast<double>(t.bytes) / config_.host.cpu_adam_params_per_s
                                 : static_cast<double>(t.bytes) / config_.host.pcie_Bps;
      op.duration_ns = SimTime::from_seconds_rounded(seconds).count_ns();
    } else {
      op.kind = OpKind::kCollective;
      op.op = *collective_of(t.kind);
      op.role = t.group;
      op.bytes = t.bytes;
      op.channel = channel_of(t.group, op.stream);
      // Waiting on the pipeline group (the gradient norm) is waiting for other stages.
      op.exposed = t.group == GroupRole::kTp   ? step_accounts::kExposedTp
                   : t.group == GroupRole::kPp ? step_accounts::kPipelineBubble
                   : t.group == GroupRole::kCp ? step_accounts::kExposedCp
                                               : step_accounts::exposed_account(op.op);
      op.label =
          add_label(OpLabel{t.group == GroupRole::kTp ? "tp" : stream_name(t.stream),
                            task_kind_name(t.kind), task_kind_name(t.kind), tag_of(t), 0, 0});
      tune(op);
    }
    return op;
  }

  static TaskTag tag_of(const Task& t) { return TaskTag{t.unit, t.micro_batch, t.phase}; }

  void add_kernel_label(int32_t task) {
    const Task& t = s_.tasks[static_cast<size_t>(task)];
    const Kernel& k = s_.kernels[static_cast<size_t>(t.kernel)];
    p_.kernels.push_back(OpLabel{stream_name(Stream::kCompute), k.name, kernel_class_name(k.cls),
                                 tag_of(t), 0, kernel_ns_[static_cast<size_t>(t.kernel)]});
  }

  int32_t add_label(const OpLabel& label) {
    p_.labels.push_back(label);
    return static_cast<int32_t>(p_.labels.size() - 1);
  }

  void add_dep(int32_t task, uint8_t own_stream) {
    const Task& d = s_.tasks[static_cast<size_t>(task)];
    if (d.kind == TaskKind::kFree) {
      const int32_t count = free_compute_count_[static_cast<size_t>(task)];
      if (count > 0) add_stream_dep(static_cast<uint8_t>(Stream::kCompute), count - 1, own_stream);
      return;
    }
    const Op& op = p_.ops[static_cast<size_t>(task_op_[static_cast<size_t>(task)])];
    add_stream_dep(op.stream, op.pos, own_stream);
  }

  void add_stream_dep(uint8_t stream, int32_t pos, uint8_t own_stream) {
    if (stream == own_stream) return;  // stream order
    // Keep one dependency per stream: the latest position.
    const size_t begin = p_.deps.size() - pending_deps_;
    for (size_t i = begin; i < p_.deps.size(); ++i) {
      if (p_.deps[i].stream == stream) {
        p_.deps[i].pos = std::max(p_.deps[i].pos, pos);
        return;
      }
    }
    p_.deps.push_back(Dep{stream, pos});
    ++pending_deps_;
  }

  // Pipeline stages run different programs whose collectives meet on the
  // pipeline group: every stage numbers its channels alike, in (role,
  // stream) order (the stages' schedules use the same set).
  void register_channels() {
    std::vector<std::pair<GroupRole, uint8_t>> used;
    for (const Task& t : s_.tasks) {
      if (collective_of(t.kind)) used.emplace_back(t.group, program_stream(t));
    }
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (const auto& [role, stream] : used) (void)channel_of(role, stream);
  }

  // The program stream of a task: its Stream, or for a send or receive the
  // stream of its channel (direction, what it moves: Task::stream, and peer)
  // and for context parallelism's collectives a stream of their own, both
  // made on first use.
  uint8_t program_stream(const Task& t) {
    if (t.kind == TaskKind::kSend || t.kind == TaskKind::kRecv) {
      // Async TP's copies to every peer share one stream each way.
      return extra_stream(t.stream, t.group == GroupRole::kTp ? 0 : t.peer_stage);
    }
    if (static_cast<int>(t.stream) >= kStreamCountWithoutPipeline) return extra_stream(t.stream, 0);
    return static_cast<uint8_t>(t.stream);
  }
  uint8_t extra_stream(Stream stream, int32_t peer) {
    const auto key = std::make_pair(static_cast<int>(stream), peer);
    const auto it = extra_streams_.find(key);
    if (it != extra_streams_.end()) return it->second;
    CLUSTERSIM_CHECK(p_.stream_ops.size() < 255, "at most 255 streams a program");
    const auto id = static_cast<uint8_t>(p_.stream_ops.size());
    p_.stream_ops.emplace_back();
    p_.stream_names.push_back(stream_name(stream));
    extra_streams_.emplace(key, id);
    return id;
  }

  int32_t channel_of(GroupRole role, uint8_t stream) {
    for (size_t i = 0; i < p_.channels.size(); ++i) {
      if (p_.channels[i].role == role && p_.channels[i].stream == stream) {
        return static_cast<int32_t>(i);
      }
    }
    p_.channels.push_back(Program::Channel{role, stream});
    return static_cast<int32_t>(p_.channels.size() - 1);
  }

  // The tuner runs once per collective shape of the template, on group 0.
  void tune(Op& op) {
    const TunedTimes& t = tuned_.at(tuned_.find_or_tune(group_geometry(layout_, op.role, cluster_),
                                                        op.op, op.bytes, /*forced=*/true));
    op.latency_ns = t.latency_ns;
    op.transfer_ns = t.transfer_ns;
    op.alone_Bps = t.alone_Bps;
    op.algorithm = t.algorithm;
    op.protocol = t.protocol;
  }

  // The loop's own host work before each task: host_per_micro_batch_ns at
  // each forward's first task, host_per_layer_ns at the first kernel of each
  // pass of a transformer layer (its kernels of one phase and micro-batch,
  // until another unit's run), none of it per layer under CUDA graphs. Both
  // fall on tasks some op runs: a forward never begins with a free.
  std::vector<int64_t> loop_host_ns() const {
    const WorkloadSpec& w = config_.workload;
    std::vector<int64_t> extra(s_.tasks.size(), 0);
    for (const int32_t t : s_.forward_begins) {
      if (t >= s_.size()) continue;
      CLUSTERSIM_CHECK(s_.tasks[static_cast<size_t>(t)].kind != TaskKind::kFree,
                       "a forward begins with a task an op runs");
      extra[static_cast<size_t>(t)] += w.host_per_micro_batch_ns;
    }
    const int64_t per_layer = w.cuda_graphs ? 0 : w.host_per_layer_ns;
    if (per_layer == 0) return extra;
    std::array<int64_t, 3> last{kRootUnit, -1, -1};  // unit, phase, micro-batch
    for (size_t i = 0; i < s_.tasks.size(); ++i) {
      const Task& t = s_.tasks[i];
      if (!is_kernel(t.kind) || t.unit < 0) continue;  // the root's and the optimizer's
      const std::array<int64_t, 3> pass{t.unit, static_cast<int64_t>(t.phase), t.micro_batch};
      if (pass == last) continue;
      extra[i] += per_layer;
      last = pass;
    }
    return extra;
  }

  // Host issue times (no blocking) and each segment's launch-bound tail:
  // kernel k of n, issued at (k + 1) c after the segment's host start plus
  // the loop's host work before kernels 0..k, ends no earlier than that plus
  // the kernels from k on.
  void finish_host_times() {
    const int64_t launch = config_.host.kernel_launch.count_ns();
    const int64_t graph = config_.host.graph_launch.count_ns();
    const std::vector<int64_t> loop = loop_host_ns();
    int64_t host = 0;
    for (Op& op : p_.ops) {
      op.host_start_ns = host;
      const auto loop_of = [&](int32_t k) { return loop[static_cast<size_t>(op.first_task + k)]; };
      int64_t python = 0;
      for (int32_t k = 0; k < op.task_count; ++k) python += loop_of(k);
      if (op.kind == OpKind::kSegment) {
        if (config_.workload.cuda_graphs) {
          op.host_cost_ns = python + graph;
          op.first_launch_ns = python + graph;
          op.tail_ns = python + graph + op.work_ns;
        } else {
          op.host_cost_ns = launch * op.task_count + python;
          op.first_launch_ns = launch + loop_of(0);
          // Backwards: kernel k's launch is done `issued` after the host start.
          int64_t issued = op.host_cost_ns;
          int64_t suffix = 0;
          int64_t tail = 0;
          for (int32_t k = op.task_count - 1; k >= 0; --k) {
            const Task& t = s_.tasks[static_cast<size_t>(op.first_task + k)];
            suffix += kernel_ns_[static_cast<size_t>(t.kernel)];
            tail = std::max(tail, issued + suffix);
            issued -= launch + loop_of(k);
          }
          op.tail_ns = tail;
        }
      } else {
        const bool cpu = op.kind == OpKind::kLocal &&
                         s_.tasks[static_cast<size_t>(op.first_task)].kind ==
                             TaskKind::kCpuOptimizer;
        // A collective or a cudaMemcpyAsync is one launch; the host optimizer none.
        op.host_cost_ns = python + (cpu ? 0 : launch);
      }
      host += op.host_cost_ns;
    }
  }

  const FsdpSchedule& s_;
  const StepConfig& config_;
  const Layout& layout_;
  const topology::Cluster& cluster_;
  TunedCollectives tuned_;
  Program p_;
  std::vector<int64_t> kernel_ns_;                            // by schedule kernel
  std::vector<int32_t> task_op_;                              // op of each non-free task
  std::vector<bool> awaited_;  // kernels a task on another stream depends on
  std::vector<int32_t> free_compute_count_;                   // compute ops issued before each free
  size_t pending_deps_ = 0;                                   // deps of the op being built
  std::vector<std::pair<int32_t, int32_t>> gates_;            // (op, compute ops it waits for)
  std::map<std::pair<int, int32_t>, uint8_t> extra_streams_;  // (Task::stream, peer) -> stream
  // Pipeline sends and receives so far, by kind, peer and tag.
  std::map<std::tuple<OpKind, int64_t, int64_t>, int32_t> p2p_count_;
};

}  // namespace

Layout step_layout(const WorkloadSpec& w, const topology::Cluster& cluster) {
  CLUSTERSIM_CHECK(w.world_size > 0 && w.world_size <= cluster.gpu_count(),
                   "world size " + std::to_string(w.world_size) + " within the cluster's " +
                       std::to_string(cluster.gpu_count()) + " GPUs");
  CLUSTERSIM_CHECK(cluster.spec().node.gpus_per_node % w.tp == 0, "tp divides the GPUs of a node");
  CLUSTERSIM_CHECK(w.shard_group_size * w.replica_group_size * w.tp * w.pp == w.world_size &&
                       w.shard_group_size % w.cp == 0,
                   "shard x replica x tp x pp = world size, cp dividing shard");
  return mesh_layout(w);
}

Layout mesh_layout(const WorkloadSpec& w) {
  Layout layout;
  layout.world = w.world_size;
  layout.tp = w.tp;
  layout.shard = w.shard_group_size;
  layout.replica = w.replica_group_size;
  layout.pp = w.pp;
  layout.cp = w.cp;
  layout.order = w.mesh_order;
  return layout;
}

std::vector<int64_t> group_members(const Layout& layout, GroupRole role, int64_t g) {
  std::vector<int64_t> gpus(static_cast<size_t>(layout.group_size(role)));
  for (size_t i = 0; i < gpus.size(); ++i) {
    gpus[i] = layout.member(role, g, static_cast<int64_t>(i));
  }
  return gpus;
}

collectives::GroupGeometry group_geometry(const Layout& layout, GroupRole role,
                                          const topology::Cluster& cluster) {
  return collectives::geometry_of(cluster, group_members(layout, role, 0));
}

std::optional<UnevenGroup> uneven_group(const topology::Cluster& cluster, const Layout& layout,
                                        bool every_group) {
  for (const GroupRole role : {GroupRole::kShard, GroupRole::kReplica, GroupRole::kTp,
                               GroupRole::kPp, GroupRole::kCp}) {
    if (layout.group_size(role) == 1) continue;  // one member: even
    const int64_t groups = every_group ? layout.group_count(role) : 1;
    for (int64_t g = 0; g < groups; ++g) {
      if (collectives::uniform_ranks_per_node(cluster, group_members(layout, role, g)) == 0) {
        return UnevenGroup{role, g};
      }
    }
  }
  return std::nullopt;
}

StepProgram compile_program(const FsdpSchedule& schedule, const StepConfig& config,
                            const Layout& layout, const topology::Cluster& cluster,
                            const collectives::HardwareProfile& profile) {
  return ProgramBuilder(schedule, config, layout, cluster, profile).build();
}

}  // namespace clustersim::workloads::step
