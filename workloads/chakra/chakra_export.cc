#include "workloads/chakra/chakra_export.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "sim/check.h"
#include "sim/sim_time.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/schedules/step_program.h"

namespace clustersim::workloads::chakra {

namespace {

// ---- AttributeProto encoding (proto/et_def.proto) ----

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_tag(std::string& out, uint32_t field, uint32_t wire_type) {
  put_varint(out, (uint64_t{field} << 3) | wire_type);
}

void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

constexpr uint32_t kNameField = 1;
constexpr uint32_t kInt64Field = 9;
constexpr uint32_t kStringField = 29;

int64_t comm_type_of(TaskKind kind) {
  switch (kind) {
    case TaskKind::kAllGather:
      return static_cast<int64_t>(CommType::kAllGather);
    case TaskKind::kReduceScatter:
      return static_cast<int64_t>(CommType::kReduceScatter);
    default:
      return static_cast<int64_t>(CommType::kAllReduce);
  }
}

uint64_t micros_rounded(int64_t ns) { return static_cast<uint64_t>((ns + 500) / 1000); }

std::string unit_name(int32_t unit) {
  if (unit == kRootUnit) return "root";
  if (unit == kWholeModel) return "model";
  return "block" + std::to_string(unit);
}

// "forward/block3/mb0/qkv_proj": what a reader of the trace needs to find
// the task again.
std::string task_name(const Task& t, std::string_view what) {
  return std::string(phase_name(t.phase)) + "/" + unit_name(t.unit) + "/mb" +
         std::to_string(t.micro_batch) + "/" + std::string(what);
}

void set_duration(Node& node, int64_t ns) {
  node.duration_ns = ns;
  node.duration_micros = micros_rounded(ns);
}

}  // namespace

RawAttribute string_attribute(const std::string& name, const std::string& value) {
  RawAttribute a;
  a.name = name;
  put_bytes(a.encoded, kNameField, name);
  put_bytes(a.encoded, kStringField, value);
  return a;
}

RawAttribute int64_attribute(const std::string& name, int64_t value) {
  RawAttribute a;
  a.name = name;
  put_bytes(a.encoded, kNameField, name);
  put_tag(a.encoded, kInt64Field, 0);
  put_varint(a.encoded, static_cast<uint64_t>(value));
  return a;
}

StepExporter::StepExporter(const topology::Cluster& cluster,
                           const collectives::HardwareProfile& profile, const StepConfig& config,
                           ExportOptions options)
    : config_(config), options_(std::move(options)) {
  const WorkloadSpec& w = config_.workload;
  (void)step::step_layout(w, cluster);  // its invariant checks
  stages_.resize(static_cast<size_t>(w.pp));
  for (int64_t s = 0; s < w.pp; ++s) {
    FsdpScheduleOptions schedule_options = config_.schedule_options;
    schedule_options.stage = s;
    StageGraph& stage = stages_[static_cast<size_t>(s)];
    stage.schedule = build_fsdp_schedule(w, schedule_options);
    build(stage, cluster, profile);
  }
  number_groups();
}

int64_t StepExporter::host_work_left_out_ns() const {
  int64_t most = 0;
  for (const StageGraph& s : stages_) most = std::max(most, s.host_work_left_out_ns);
  return most;
}

int32_t StepExporter::channel_index(GroupRole role, Stream stream) {
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (channels_[c].role == role && channels_[c].stream == stream) return static_cast<int32_t>(c);
  }
  channels_.push_back(Channel{role, stream});
  return static_cast<int32_t>(channels_.size() - 1);
}

void StepExporter::build(StageGraph& stage, const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile) {
  const Layout layout = step::mesh_layout(config_.workload);
  const FsdpSchedule& schedule = stage.schedule;
  // The simulator's own compilation: its segments and host costs are what
  // the launch nodes reproduce.
  const step::StepProgram compiled =
      step::compile_program(schedule, config_, layout, cluster, profile);
  const Program& program = compiled.program;
  const auto n = static_cast<size_t>(schedule.size());
  std::vector<int32_t> op_of(n, -1);
  for (size_t o = 0; o < program.ops.size(); ++o) {
    const Op& op = program.ops[o];
    for (int32_t k = 0; k < op.task_count; ++k) {
      op_of[static_cast<size_t>(op.first_task + k)] = static_cast<int32_t>(o);
    }
  }
  const bool graphs = config_.workload.cuda_graphs;
  const bool host = options_.host_nodes;
  const int64_t kernel_launch = config_.host.kernel_launch.count_ns();
  const int64_t graph_launch = config_.host.graph_launch.count_ns();

  stage.graph.version = kExportVersion;
  std::vector<Node>& nodes = stage.graph.nodes;
  std::vector<uint64_t>& task_node = stage.task_node;
  task_node.assign(n, kNoNode);
  std::vector<int64_t> op_launch_ns(program.ops.size(), 0);  // launch cost emitted per op
  int64_t last_launch = -1;
  // Without host nodes a left-out task (the CPU optimizer) hands its own
  // dependencies on to the tasks that depend on it, so that what ran after
  // it still runs after what it waited for.
  std::vector<std::vector<int32_t>> handed_on(n);

  const auto add_launch = [&](int32_t task, int32_t op_id, int64_t cost,
                              std::string_view what) -> uint64_t {
    const Task& t = schedule.tasks[static_cast<size_t>(task)];
    Node node;
    node.id = nodes.size();
    node.name = "launch:" + task_name(t, what);
    node.type = static_cast<int32_t>(NodeType::kComp);
    node.is_cpu_op = true;
    node.kernel_class =
        graphs && op_id >= 0 && program.ops[static_cast<size_t>(op_id)].kind == OpKind::kSegment
            ? "graph_launch"
            : "launch";
    set_duration(node, cost);
    if (last_launch >= 0) node.ctrl_deps.push_back(static_cast<uint64_t>(last_launch));
    if (t.host_wait != kNoHostWait) {
      // limit_all_gathers: the host waits here for the free's kernels.
      node.ctrl_deps.push_back(task_node[static_cast<size_t>(t.host_wait)]);
    }
    op_launch_ns[static_cast<size_t>(op_id)] += cost;
    last_launch = static_cast<int64_t>(node.id);
    nodes.push_back(std::move(node));
    ++stage.launches;
    return static_cast<uint64_t>(last_launch);
  };

  for (int32_t i = 0; i < schedule.size(); ++i) {
    const Task& t = schedule.tasks[static_cast<size_t>(i)];
    const int32_t op_id = op_of[static_cast<size_t>(i)];
    const Op* op = op_id >= 0 ? &program.ops[static_cast<size_t>(op_id)] : nullptr;
    const Kernel* kernel =
        t.kernel != kNoKernel ? &schedule.kernels[static_cast<size_t>(t.kernel)] : nullptr;
    const std::string_view what = kernel ? kernel->name : task_kind_name(t.kind);

    // The host's part: which launch (if any) this node waits for.
    int64_t launch = -1;
    if (t.kind == TaskKind::kFree) {
      CLUSTERSIM_CHECK(op == nullptr, "a free is no operation of the step program");
    } else {
      CLUSTERSIM_CHECK(op != nullptr, "task " + std::to_string(i) + " has an operation");
      if (!host) {
        // No launches: the schedule's own dependencies (stream order, host
        // waits on frees) already order the GPU side.
      } else if (t.kind == TaskKind::kCpuOptimizer) {
        launch = last_launch;  // issued once the host got there; costs it nothing
      } else if (op->kind == OpKind::kSegment && graphs) {
        if (op->first_task == i)
          launch = static_cast<int64_t>(add_launch(i, op_id, graph_launch, what));
      } else {
        launch = static_cast<int64_t>(add_launch(i, op_id, kernel_launch, what));
      }
      CLUSTERSIM_CHECK(t.host_wait == kNoHostWait || op->first_task == i,
                       "a host wait opens an operation");
    }

    std::vector<int32_t> deps;
    for (const int32_t d : schedule.deps_of(i)) {
      if (task_node[static_cast<size_t>(d)] != kNoNode) {
        deps.push_back(d);
      } else {
        const std::vector<int32_t>& more = handed_on[static_cast<size_t>(d)];
        deps.insert(deps.end(), more.begin(), more.end());
      }
    }
    if (!host && t.kind == TaskKind::kCpuOptimizer) {
      handed_on[static_cast<size_t>(i)] = std::move(deps);
      stage.host_work_left_out_ns += op->duration_ns;
      continue;
    }

    Node node;
    node.id = nodes.size();
    node.name = task_name(t, what);
    // The program's stream: a send or receive channel's own (one per
    // direction, what it moves and peer), CP's collectives' own.
    node.stream = op != nullptr ? int64_t{op->stream} : static_cast<int64_t>(t.stream);
    if (launch >= 0) node.ctrl_deps.push_back(static_cast<uint64_t>(launch));
    for (const int32_t d : deps) {
      const Task& dep = schedule.tasks[static_cast<size_t>(d)];
      const uint64_t id = task_node[static_cast<size_t>(d)];
      std::vector<uint64_t>& list = dep.stream == t.stream ? node.ctrl_deps : node.data_deps;
      if (std::find(list.begin(), list.end(), id) == list.end()) list.push_back(id);
    }
    switch (t.kind) {
      case TaskKind::kKernel:
      case TaskKind::kOptimizer:
        node.type = static_cast<int32_t>(NodeType::kComp);
        set_duration(node, compiled.kernel_ns[static_cast<size_t>(t.kernel)]);
        node.num_ops = std::llround(kernel->flops);
        node.tensor_size = std::llround(kernel->bytes);
        node.kernel_class = std::string(kernel_class_name(kernel->cls));
        break;
      case TaskKind::kFree:
        node.type = static_cast<int32_t>(NodeType::kComp);
        set_duration(node, 0);
        node.kernel_class = "free";
        break;
      case TaskKind::kSend:
      case TaskKind::kRecv: {
        const bool send = t.kind == TaskKind::kSend;
        node.type = static_cast<int32_t>(send ? NodeType::kCommSend : NodeType::kCommRecv);
        node.comm_size = t.bytes;
        node.comm_tag = op->tag;
        if (op->copy_engine) node.copy_engine = 1;
        node.kernel_class = std::string(group_role_name(op->peer_role));
        stage.p2p.push_back(P2pNode{nodes.size(), op->peer_role, op->peer, send});
        break;
      }
      case TaskKind::kAllGather:
      case TaskKind::kReduceScatter:
      case TaskKind::kAllReduce: {
        node.type = static_cast<int32_t>(NodeType::kCommColl);
        node.comm_type = comm_type_of(t.kind);
        node.comm_size = t.bytes;
        if (t.kind == TaskKind::kAllGather) {
          // Each rank's input, as Chakra's consumers read it; the shard is
          // padded up to a multiple of the group (as FSDP pads), and the
          // exact total kept for a replay that must move what run moved.
          const int64_t members = layout.group_size(t.group);
          node.comm_size = (t.bytes + members - 1) / members;
          if (*node.comm_size * members != t.bytes) node.comm_total = t.bytes;
        }
        node.kernel_class = std::string(group_role_name(t.group));
        node.duration_micros = micros_rounded(op->latency_ns + op->transfer_ns);
        const int32_t channel = channel_index(t.group, t.stream);
        if (std::find(stage.channels.begin(), stage.channels.end(), channel) ==
            stage.channels.end()) {
          stage.channels.push_back(channel);
        }
        stage.collective_nodes.push_back(nodes.size());
        stage.collective_channel.push_back(channel);
        break;
      }
      case TaskKind::kCopyToDevice:
      case TaskKind::kCopyToHost:
        node.type = static_cast<int32_t>(t.kind == TaskKind::kCopyToDevice ? NodeType::kMemLoad
                                                                           : NodeType::kMemStore);
        node.tensor_size = t.bytes;
        node.kernel_class = std::string(task_kind_name(t.kind));
        set_duration(node, op->duration_ns);
        break;
      case TaskKind::kCpuOptimizer:
        node.type = static_cast<int32_t>(NodeType::kComp);
        node.is_cpu_op = true;
        node.kernel_class = std::string(task_kind_name(t.kind));
        set_duration(node, op->duration_ns);
        break;
    }
    task_node[static_cast<size_t>(i)] = node.id;
    nodes.push_back(std::move(node));
  }
  // The launches charge the host what the simulator does, op by op.
  for (size_t o = 0; host && o < program.ops.size(); ++o) {
    CLUSTERSIM_CHECK(op_launch_ns[o] == program.ops[o].host_cost_ns,
                     "launch nodes of operation " + std::to_string(o) + " cost its host time");
  }
  std::sort(stage.channels.begin(), stage.channels.end());
}

void StepExporter::number_groups() {
  const Layout layout = step::mesh_layout(config_.workload);
  std::vector<size_t> order(channels_.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = c;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(channels_[a].role, channels_[a].stream) <
           std::pair(channels_[b].role, channels_[b].stream);
  });
  channel_base_.assign(channels_.size(), 0);
  int64_t next = 1;  // "0" is the world's, as PyTorch's default group
  bool world_taken = false;
  for (const size_t c : order) {
    const Channel& ch = channels_[c];
    if (!world_taken && spans_world(ch.role) && ch.stream != Stream::kReduce) {
      world_taken = true;
      continue;
    }
    channel_base_[c] = next;
    next += layout.group_count(ch.role);
  }
}

bool StepExporter::spans_world(GroupRole role) const {
  const Layout layout = step::mesh_layout(config_.workload);
  return layout.group_size(role) == layout.world && layout.world > 1;
}

size_t StepExporter::channel_of(GroupRole role, Stream stream) const {
  for (size_t c = 0; c < channels_.size(); ++c) {
    if (channels_[c].role == role && channels_[c].stream == stream) return c;
  }
  CLUSTERSIM_CHECK(false, std::string("the schedule has collectives of role ") +
                              std::string(group_role_name(role)) + " on stream " +
                              std::string(stream_name(stream)));
  return 0;
}

std::string StepExporter::pg_name(GroupRole role, Stream stream, int64_t rank) const {
  const Layout layout = step::mesh_layout(config_.workload);
  return std::to_string(channel_base_[channel_of(role, stream)] + layout.group_of(role, rank));
}

std::string StepExporter::pg_desc(GroupRole role, Stream stream, int64_t rank) const {
  const Layout layout = step::mesh_layout(config_.workload);
  std::string name = spans_world(role) ? std::string("world")
                                       : std::string(group_role_name(role)) + "_" +
                                             std::to_string(layout.group_of(role, rank));
  if (stream == Stream::kReduce) name += ".reduce";
  return name;
}

Trace StepExporter::trace(int64_t rank) const {
  CLUSTERSIM_CHECK(
      rank >= 0 && rank < world_size(),
      "rank " + std::to_string(rank) + " below the world size " + std::to_string(world_size()));
  const Layout layout = step::mesh_layout(config_.workload);
  const StageGraph& stage = at(layout.stage_of(rank));
  Trace trace = stage.graph;
  trace.metadata.push_back(string_attribute("clustersim_generator", "clustersim"));
  trace.metadata.push_back(string_attribute("clustersim_scenario", options_.scenario));
  trace.metadata.push_back(int64_attribute("clustersim_rank", rank));
  trace.metadata.push_back(int64_attribute("clustersim_world_size", world_size()));
  trace.metadata.push_back(string_attribute("clustersim_trace_form", "standard"));
  std::vector<std::string> names;
  std::vector<std::string> descs;
  names.reserve(channels_.size());
  descs.reserve(channels_.size());
  for (const Channel& c : channels_) {
    names.push_back(pg_name(c.role, c.stream, rank));
    descs.push_back(pg_desc(c.role, c.stream, rank));
  }
  for (size_t k = 0; k < stage.collective_nodes.size(); ++k) {
    Node& node = trace.nodes[stage.collective_nodes[k]];
    node.pg_name = names[static_cast<size_t>(stage.collective_channel[k])];
    node.pg_desc = descs[static_cast<size_t>(stage.collective_channel[k])];
  }
  for (const P2pNode& p : stage.p2p) {
    Node& node = trace.nodes[p.node];
    const int64_t peer = layout.ring_neighbor(p.role, rank, p.shift);
    node.comm_src = p.send ? rank : peer;
    node.comm_dst = p.send ? peer : rank;
  }
  return trace;
}

void StepExporter::add_groups(int64_t rank, CommGroups& groups, GroupDescs* descs) const {
  const Layout layout = step::mesh_layout(config_.workload);
  for (const int32_t index : at(layout.stage_of(rank)).channels) {
    const Channel& c = channels_[static_cast<size_t>(index)];
    const std::string name = pg_name(c.role, c.stream, rank);
    if (groups.contains(name)) continue;
    if (descs) (*descs)[name] = pg_desc(c.role, c.stream, rank);
    const int64_t g = layout.group_of(c.role, rank);
    std::vector<int64_t>& members = groups[name];
    for (int64_t i = 0; i < layout.group_size(c.role); ++i) {
      members.push_back(layout.member(c.role, g, i));
    }
  }
}

ExportedStep export_step(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const StepConfig& config,
                         std::span<const int64_t> ranks, const ExportOptions& options) {
  const StepExporter exporter(cluster, profile, config, options);
  ExportedStep out;
  out.ranks.assign(ranks.begin(), ranks.end());
  out.tasks_per_rank = exporter.schedule().size();  // stage 0's
  out.launches_per_rank = exporter.launches_per_rank();
  out.traces.reserve(ranks.size());
  for (const int64_t r : ranks) {
    out.traces.push_back(exporter.trace(r));
    exporter.add_groups(r, out.groups, &out.descs);
  }
  return out;
}

}  // namespace clustersim::workloads::chakra
