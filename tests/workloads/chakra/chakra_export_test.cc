// export_step: the node mapping of workloads/chakra/chakra_export.h against the
// schedule (counts, durations, deps), collectives' sizes and groups by hand
// for a small HSDP job, the host's launch chain and waits, metadata.
#include "workloads/chakra/chakra_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "workloads/chakra/chakra_replay.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/model_spec.h"
#include "workloads/schedules/gpu_speed.h"
#include "sim/check.h"
#include "tests/support/step_fixtures.h"
#include "topology/cluster_config.h"

namespace clustersim::workloads::chakra {
namespace {

using test_support::h100;
using test_support::hgx_h100;
using test_support::small_spec;
using topology::Cluster;

StepConfig config_for(const WorkloadSpec& w) {
  StepConfig c;
  c.workload = w;
  c.compute = compute_spec_from_profile(h100());
  c.host.kernel_launch = sim::SimTime::us(4);
  c.host.graph_launch = sim::SimTime::us(9);
  return c;
}

bool is_launch(const Node& n) {
  return n.kernel_class == "launch" || n.kernel_class == "graph_launch";
}

std::vector<const Node*> task_nodes(const Trace& t) {
  std::vector<const Node*> out;
  for (const Node& n : t.nodes) {
    if (!is_launch(n)) out.push_back(&n);
  }
  return out;
}

// Every id is its position, every dependency names an earlier node (so the
// graph is a DAG, in topological file order), no dependency is listed twice.
void expect_dag_in_file_order(const Trace& t) {
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    ASSERT_EQ(n.id, i);
    std::set<uint64_t> seen;
    for (const std::vector<uint64_t>* deps : {&n.ctrl_deps, &n.data_deps}) {
      for (const uint64_t d : *deps) {
        EXPECT_LT(d, n.id) << n.name;
        EXPECT_TRUE(seen.insert(d).second) << n.name << " lists " << d << " twice";
      }
    }
  }
}

// Kahn's algorithm over ids, independent of the order: every node is
// reached (no cycle, no dangling dependency).
bool acyclic_and_closed(const Trace& t) {
  std::map<uint64_t, int> pending;
  std::map<uint64_t, std::vector<uint64_t>> users;
  for (const Node& n : t.nodes) pending[n.id] = 0;
  for (const Node& n : t.nodes) {
    for (const std::vector<uint64_t>* deps : {&n.ctrl_deps, &n.data_deps}) {
      for (const uint64_t d : *deps) {
        if (!pending.contains(d)) return false;
        ++pending[n.id];
        users[d].push_back(n.id);
      }
    }
  }
  std::vector<uint64_t> ready;
  for (const auto& [id, count] : pending) {
    if (count == 0) ready.push_back(id);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const uint64_t id = ready.back();
    ready.pop_back();
    ++done;
    for (const uint64_t u : users[id]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  return done == t.nodes.size();
}

TEST(ChakraExport, OneNodePerTaskWithKernelTimesAndTheScheduleDeps) {
  const Cluster cluster = hgx_h100(2);
  const StepConfig c = config_for(small_spec(16, 8));
  const std::vector<int64_t> ranks = {0, 9};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  const FsdpSchedule s = build_fsdp_schedule(c.workload);
  ASSERT_EQ(e.traces.size(), 2u);
  EXPECT_EQ(e.ranks, ranks);
  EXPECT_EQ(e.tasks_per_rank, s.size());
  for (const Trace& t : e.traces) {
    EXPECT_EQ(t.version, "0.0.4");
    const std::vector<const Node*> tasks = task_nodes(t);
    ASSERT_EQ(static_cast<int64_t>(tasks.size()), s.size());
    EXPECT_EQ(static_cast<int64_t>(t.nodes.size()), e.tasks_per_rank + e.launches_per_rank);
    int64_t comp = 0;
    int64_t coll = 0;
    for (int32_t i = 0; i < s.size(); ++i) {
      const Task& task = s.tasks[static_cast<size_t>(i)];
      const Node& n = *tasks[static_cast<size_t>(i)];
      ASSERT_TRUE(n.stream.has_value());
      EXPECT_EQ(*n.stream, static_cast<int64_t>(task.stream));
      if (task.kind == TaskKind::kKernel || task.kind == TaskKind::kOptimizer) {
        ++comp;
        const Kernel& k = s.kernels[static_cast<size_t>(task.kernel)];
        const int64_t ns = kernel_time(k, c.compute).count_ns();
        EXPECT_EQ(n.type, static_cast<int32_t>(NodeType::kComp));
        EXPECT_EQ(n.duration_ns, ns);
        EXPECT_EQ(n.duration_micros, static_cast<uint64_t>((ns + 500) / 1000));
        EXPECT_EQ(n.num_ops, std::llround(k.flops));
        EXPECT_EQ(n.tensor_size, std::llround(k.bytes));
        EXPECT_EQ(n.kernel_class, std::string(kernel_class_name(k.cls)));
        EXPECT_FALSE(n.is_cpu_op);
        EXPECT_NE(n.name.find(std::string(k.name)), std::string::npos) << n.name;
      } else if (task.kind == TaskKind::kFree) {
        EXPECT_EQ(n.type, static_cast<int32_t>(NodeType::kComp));
        EXPECT_EQ(n.duration_in_ns(), 0);
        EXPECT_EQ(n.kernel_class, "free");
      } else {
        ++coll;
        EXPECT_EQ(n.type, static_cast<int32_t>(NodeType::kCommColl));
      }
      // The schedule's deps: same stream as ctrl, others as data.
      std::vector<uint64_t> want_ctrl;
      std::vector<uint64_t> want_data;
      for (const int32_t d : s.deps_of(i)) {
        const uint64_t id = tasks[static_cast<size_t>(d)]->id;
        (s.tasks[static_cast<size_t>(d)].stream == task.stream ? want_ctrl : want_data)
            .push_back(id);
      }
      std::vector<uint64_t> ctrl;  // less the launch
      for (const uint64_t d : n.ctrl_deps) {
        if (!is_launch(t.nodes[d])) ctrl.push_back(d);
      }
      EXPECT_EQ(ctrl, want_ctrl) << n.name;
      EXPECT_EQ(n.data_deps, want_data) << n.name;
    }
    EXPECT_EQ(comp, s.count(TaskKind::kKernel) + s.count(TaskKind::kOptimizer));
    EXPECT_EQ(coll, s.count(TaskKind::kAllGather) + s.count(TaskKind::kReduceScatter) +
                        s.count(TaskKind::kAllReduce));
    expect_dag_in_file_order(t);
    EXPECT_TRUE(acyclic_and_closed(t));
  }
}

// 16 GPUs, shard 8 x replica 2, the small model in bf16. By hand:
//   block = attention (q 2048x2048, k and v 2048x1024 each, out 2048x2048)
//           12,582,912 + MLP 3 x 2048 x 5632 = 34,603,008 + two RMSNorms 4,096
//         = 47,190,016 parameters -> 94,380,032 bytes gathered and
//           reduce-scattered (the whole unit). comm_size is what each rank
//           passes in: the all-gather's input shard, 94,380,032 / 8 =
//           11,797,504 bytes; the reduce-scatter's whole input, 94,380,032;
//           the replica all-reduce one shard, 47,190,016 / 8 x 2 =
//           11,797,504 bytes.
//   root  = embedding 32000 x 2048 x 2 (untied head) + final norm 2048
//         = 131,074,048 parameters -> 262,148,096 bytes; all-gather input
//           262,148,096 / 8 = 32,768,512; all-reduce 16,384,256 x 2 =
//           32,768,512 bytes.
// Groups: channels (shard, comm) then (replica, comm); "0" is kept for the
// world, which no group here is. Shard groups 0, 1 -> ids 1, 2; replica
// groups 0..7 -> ids 3..10. Rank 9 = replica 1, shard index 1: shard group
// 1 = ranks 8..15 (id 2), replica group 1 = {1, 9} (id 4).
TEST(ChakraExport, HsdpCollectivesSizesAndGroupsByHand) {
  const Cluster cluster = hgx_h100(2);
  const StepConfig c = config_for(small_spec(16, 8));
  const std::vector<int64_t> ranks = {9};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  const FsdpSchedule s = build_fsdp_schedule(c.workload);
  const std::vector<const Node*> tasks = task_nodes(e.traces[0]);
  std::map<std::string, int> seen;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& task = s.tasks[static_cast<size_t>(i)];
    const Node& n = *tasks[static_cast<size_t>(i)];
    const bool root = task.unit == kRootUnit;
    switch (task.kind) {
      case TaskKind::kAllGather:
        EXPECT_EQ(n.comm_type, static_cast<int64_t>(CommType::kAllGather));
        EXPECT_EQ(n.comm_size, root ? 32768512 : 11797504);
        EXPECT_FALSE(n.comm_total.has_value());  // 8 divides both
        EXPECT_EQ(n.pg_name, "2");
        EXPECT_EQ(n.pg_desc, "shard_1");
        EXPECT_EQ(n.kernel_class, "shard");
        break;
      case TaskKind::kReduceScatter:
        EXPECT_EQ(n.comm_type, static_cast<int64_t>(CommType::kReduceScatter));
        EXPECT_EQ(n.comm_size, root ? 262148096 : 94380032);
        EXPECT_EQ(n.pg_name, "2");
        break;
      case TaskKind::kAllReduce:
        EXPECT_EQ(n.comm_type, static_cast<int64_t>(CommType::kAllReduce));
        EXPECT_EQ(n.comm_size, root ? 32768512 : 11797504);
        EXPECT_EQ(n.pg_name, "4");
        EXPECT_EQ(n.pg_desc, "replica_1");
        EXPECT_EQ(n.kernel_class, "replica");
        break;
      default:
        EXPECT_FALSE(n.pg_name.has_value());
        EXPECT_FALSE(n.comm_size.has_value());
        continue;
    }
    ++seen[task_kind_name(task.kind).data()];
    EXPECT_GT(n.duration_micros, 0u);  // the tuner's uncontended time, a hint
    EXPECT_FALSE(n.duration_ns.has_value());
  }
  // 5 units: each all-gathered in forward and (blocks 0-3 again) backward.
  EXPECT_EQ(seen["all_gather"], 9);
  EXPECT_EQ(seen["reduce_scatter"], 5);
  EXPECT_EQ(seen["all_reduce"], 5);
  const CommGroups want = {{"4", {1, 9}}, {"2", {8, 9, 10, 11, 12, 13, 14, 15}}};
  EXPECT_EQ(e.groups, want);
  const GroupDescs names = {{"2", "shard_1"}, {"4", "replica_1"}};
  EXPECT_EQ(e.descs, names);
}

TEST(ChakraExport, GroupsOfSeveralRanksAndTheWholeWorld) {
  const Cluster cluster = hgx_h100(2);
  const std::vector<int64_t> ranks = {0, 9, 8};
  const ExportedStep hsdp = export_step(cluster, h100(), config_for(small_spec(16, 8)), ranks);
  const CommGroups want = {{"3", {0, 8}},
                           {"4", {1, 9}},
                           {"1", {0, 1, 2, 3, 4, 5, 6, 7}},
                           {"2", {8, 9, 10, 11, 12, 13, 14, 15}}};
  EXPECT_EQ(hsdp.groups, want);
  // FULL_SHARD over all 16: one group holding every rank, "0" as in PyTorch
  // (ASTRA-sim takes "0" for the whole world).
  const ExportedStep fsdp = export_step(cluster, h100(), config_for(small_spec(16, 16)), ranks);
  ASSERT_EQ(fsdp.groups.size(), 1u);
  EXPECT_EQ(fsdp.groups.begin()->first, "0");
  EXPECT_EQ(fsdp.groups.begin()->second.size(), 16u);
  EXPECT_EQ(fsdp.descs, (GroupDescs{{"0", "world"}}));
  for (const Node& n : fsdp.traces[2].nodes) {
    if (n.type == static_cast<int32_t>(NodeType::kCommColl)) {
      EXPECT_EQ(n.pg_name, "0");
      EXPECT_EQ(n.pg_desc, "world");
    }
  }
}

TEST(ChakraExport, TensorParallelAndSeparateReduceStreamGroups) {
  const Cluster cluster = hgx_h100(2);
  WorkloadSpec w = small_spec(16, 4);
  w.tp = 2;
  w.dp_size = 8;
  w.shard_group_size = 4;
  w.replica_group_size = 2;
  StepConfig c = config_for(w);
  c.schedule_options.separate_reduce_stream = true;
  // Rank 11 = (replica 1, shard 1, tp 1): tp group 5 = {10, 11}; shard group
  // 1 * 2 + 1 = 3 = {9, 11, 13, 15}; replica group 1 * 2 + 1 = 3 = {3, 11}.
  const std::vector<int64_t> ranks = {11};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  // Ids by channel (role, stream): (shard, comm) 4 groups -> 1..4, (shard,
  // reduce) 5..8, (replica, reduce) 8 groups -> 9..16, (tp, tp) 8 -> 17..24.
  const CommGroups want = {
      {"12", {3, 11}}, {"4", {9, 11, 13, 15}}, {"8", {9, 11, 13, 15}}, {"22", {10, 11}}};
  EXPECT_EQ(e.groups, want);
  const GroupDescs names = {
      {"12", "replica_3.reduce"}, {"4", "shard_3"}, {"8", "shard_3.reduce"}, {"22", "tp_5"}};
  EXPECT_EQ(e.descs, names);
  // A TP all-gather's input is 1 / tp of the activation: 2048 x 2048 x 2 / 2.
  for (const Node& n : e.traces[0].nodes) {
    if (n.pg_name == "22" && n.comm_type == static_cast<int64_t>(CommType::kAllGather)) {
      EXPECT_EQ(n.comm_size, 4194304);
    }
  }
  std::set<std::string> used;
  for (const Node& n : e.traces[0].nodes) {
    if (n.pg_name) used.insert(*n.pg_name);
  }
  EXPECT_EQ(used.size(), 4u);
}

// The host: a chain of launches costing what the simulator charges, each
// GPU node after its own; limit_all_gathers' waits on frees.
TEST(ChakraExport, LaunchChainAndHostWaits) {
  const Cluster cluster = hgx_h100(1);
  const StepConfig c = config_for(small_spec(8, 8));
  const std::vector<int64_t> ranks = {3};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  const FsdpSchedule s = build_fsdp_schedule(c.workload);
  const Trace& t = e.traces[0];
  // Eager: one launch per kernel, collective and copy.
  const int64_t issued = s.size() - s.count(TaskKind::kFree) - s.count(TaskKind::kCpuOptimizer);
  EXPECT_EQ(e.launches_per_rank, issued);
  int64_t previous = -1;
  int64_t waits = 0;
  for (const Node& n : t.nodes) {
    if (is_launch(n)) {
      EXPECT_TRUE(n.is_cpu_op);
      EXPECT_FALSE(n.stream.has_value());
      EXPECT_EQ(n.duration_ns, 4000);
      EXPECT_EQ(n.kernel_class, "launch");
      if (previous >= 0) {
        ASSERT_FALSE(n.ctrl_deps.empty());
        EXPECT_EQ(n.ctrl_deps[0], static_cast<uint64_t>(previous));
      }
      for (const uint64_t d : n.ctrl_deps) {
        if (t.nodes[d].kernel_class == "free") ++waits;
      }
      previous = static_cast<int64_t>(n.id);
      // It launches the very next node.
      ASSERT_LT(n.id + 1, t.nodes.size());
      const Node& next = t.nodes[n.id + 1];
      EXPECT_FALSE(is_launch(next));
      EXPECT_NE(std::find(next.ctrl_deps.begin(), next.ctrl_deps.end(), n.id),
                next.ctrl_deps.end());
    }
  }
  int64_t host_waits = 0;
  for (const Task& task : s.tasks) host_waits += task.host_wait != kNoHostWait ? 1 : 0;
  EXPECT_GT(host_waits, 0);
  EXPECT_EQ(waits, host_waits);
}

TEST(ChakraExport, CudaGraphsLaunchEachSegmentOnce) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.cuda_graphs = true;
  const StepConfig c = config_for(w);
  const std::vector<int64_t> ranks = {0};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  int64_t graph = 0;
  int64_t eager = 0;
  for (const Node& n : e.traces[0].nodes) {
    if (n.kernel_class == "graph_launch") {
      ++graph;
      EXPECT_EQ(n.duration_ns, 9000);
    } else if (n.kernel_class == "launch") {
      ++eager;
      EXPECT_EQ(n.duration_ns, 4000);
    }
  }
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(eager, s.count(TaskKind::kAllGather) + s.count(TaskKind::kReduceScatter) +
                       s.count(TaskKind::kAllReduce));
  // Far fewer graph launches than kernels: a block's forward is one segment.
  EXPECT_GT(graph, 0);
  EXPECT_LT(graph * 4, s.count(TaskKind::kKernel));
}

TEST(ChakraExport, CpuOffloadCopiesAndTheHostOptimizer) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.cpu_offload = true;
  StepConfig c = config_for(w);
  c.host.pcie_Bps = 50e9;
  c.host.cpu_adam_params_per_s = 1e9;
  const std::vector<int64_t> ranks = {0};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  const FsdpSchedule s = build_fsdp_schedule(w);
  int64_t loads = 0;
  int64_t stores = 0;
  int64_t cpu = 0;
  for (const Node& n : e.traces[0].nodes) {
    if (n.type == static_cast<int32_t>(NodeType::kMemLoad) ||
        n.type == static_cast<int32_t>(NodeType::kMemStore)) {
      (n.type == static_cast<int32_t>(NodeType::kMemLoad) ? loads : stores) += 1;
      ASSERT_TRUE(n.tensor_size.has_value());
      // bytes / 50 GB/s
      EXPECT_EQ(n.duration_ns, std::llround(static_cast<double>(*n.tensor_size) / 50e9 * 1e9));
    }
    if (n.kernel_class == "cpu_optimizer") {
      ++cpu;
      EXPECT_TRUE(n.is_cpu_op);
      EXPECT_EQ(n.duration_ns, std::llround(static_cast<double>(s.local_params) / 1e9 * 1e9));
    }
  }
  EXPECT_EQ(loads, s.count(TaskKind::kCopyToDevice));
  EXPECT_EQ(stores, s.count(TaskKind::kCopyToHost));
  EXPECT_GT(loads, 0);
  EXPECT_GT(stores, 0);
  EXPECT_EQ(cpu, 1);
}

TEST(ChakraExport, MetadataNamesClustersimTheScenarioAndTheRank) {
  const Cluster cluster = hgx_h100(1);
  ExportOptions options;
  options.scenario = "tiny";
  const std::vector<int64_t> ranks = {5};
  const ExportedStep e = export_step(cluster, h100(), config_for(small_spec(8, 8)), ranks, options);
  std::map<std::string, std::string> meta;
  for (const RawAttribute& a : e.traces[0].metadata) meta[a.name] = a.encoded;
  // AttributeProto: name (field 1), string_val (29) or int64_val (9).
  EXPECT_EQ(meta["clustersim_scenario"], std::string("\x0a\x13"
                                                     "clustersim_scenario"
                                                     "\xea\x01\x04"
                                                     "tiny"));
  EXPECT_EQ(meta["clustersim_rank"], std::string("\x0a\x0f"
                                                 "clustersim_rank"
                                                 "\x48\x05"));
  EXPECT_EQ(meta["clustersim_trace_form"], std::string("\x0a\x15"
                                                       "clustersim_trace_form"
                                                       "\xea\x01\x08"
                                                       "standard"));
  EXPECT_TRUE(meta.contains("clustersim_generator"));
  EXPECT_TRUE(meta.contains("clustersim_world_size"));
  EXPECT_EQ(int64_attribute("x", -1).encoded,
            std::string("\x0a\x01x\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 14));
}

TEST(ChakraExport, TracesOfDifferentRanksDifferOnlyInGroupsAndRank) {
  const Cluster cluster = hgx_h100(2);
  const StepConfig c = config_for(small_spec(16, 8));
  const StepExporter exporter(cluster, h100(), c);
  const Trace a = exporter.trace(0);
  const Trace b = exporter.trace(15);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].name, b.nodes[i].name);
    EXPECT_EQ(a.nodes[i].duration_ns, b.nodes[i].duration_ns);
    EXPECT_EQ(a.nodes[i].ctrl_deps, b.nodes[i].ctrl_deps);
    EXPECT_EQ(a.nodes[i].data_deps, b.nodes[i].data_deps);
  }
  EXPECT_EQ(exporter.pg_name(GroupRole::kShard, Stream::kComm, 15), "2");
  EXPECT_EQ(exporter.pg_desc(GroupRole::kShard, Stream::kComm, 15), "shard_1");
  EXPECT_EQ(exporter.pg_name(GroupRole::kReplica, Stream::kComm, 15), "10");
  EXPECT_EQ(exporter.pg_desc(GroupRole::kReplica, Stream::kComm, 15), "replica_7");
  EXPECT_THROW((void)exporter.pg_name(GroupRole::kTp, Stream::kTp, 0), sim::InvariantError);
  EXPECT_THROW((void)exporter.trace(16), sim::InvariantError);
}

// ---- Round trip: export every rank, replay, compare with simulate_step ----

struct RoundTrip {
  double simulated_s = 0;
  double replayed_s = 0;
};

RoundTrip round_trip(const Cluster& cluster, const StepConfig& c) {
  std::vector<int64_t> ranks(static_cast<size_t>(c.workload.world_size));
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  ReplayOptions options;
  options.compute = c.compute;
  options.pcie_Bps = c.host.pcie_Bps;
  options.forced = c.forced;
  options.routing = c.routing;
  // The same GPUs: each rank's kernels as much slower or faster as in the step.
  options.rank_time_factors =
      gpu_time_factors(c.workload.world_size, c.compute.speed_variation, c.seed);
  RoundTrip out;
  out.simulated_s = simulate_step(cluster, h100(), c).step_time_s;
  out.replayed_s = replay_traces(cluster, h100(), e.traces, e.groups, options).step_time_s;
  return out;
}

struct Case {
  const char* name;
  int64_t nodes;
  WorkloadSpec w;
};

// Every feature the exporter maps: HSDP, CUDA graphs, offload (copies and
// the CPU optimizer), TP, accumulation with forward prefetch, the separate
// reduce stream with no_sync, full checkpointing with SHARD_GRAD_OP,
// NO_SHARD, and a launch-bound step (short kernels).
std::vector<Case> round_trip_cases() {
  std::vector<Case> cases;
  cases.push_back({"fsdp8", 1, small_spec(8, 8)});
  cases.push_back({"hsdp16", 2, small_spec(16, 8)});
  cases.push_back({"hsdp6", 1, small_spec(6, 3)});  // all-gathers with clustersim_comm_total
  WorkloadSpec g = small_spec(8, 8);
  g.cuda_graphs = true;
  cases.push_back({"graphs", 1, g});
  WorkloadSpec o = small_spec(8, 8);
  o.cpu_offload = true;
  cases.push_back({"offload", 1, o});
  WorkloadSpec t = small_spec(16, 4);
  t.tp = 2;
  t.dp_size = 8;
  t.replica_group_size = 2;
  cases.push_back({"tp", 2, t});
  WorkloadSpec a = small_spec(8, 8);
  a.grad_accum = 2;
  a.forward_prefetch = true;
  cases.push_back({"accum", 1, a});
  WorkloadSpec r = small_spec(16, 8);
  r.grad_accum = 2;
  r.separate_reduce_stream = true;
  r.no_sync = true;
  cases.push_back({"reduce", 2, r});
  WorkloadSpec sgo = small_spec(8, 8);
  sgo.strategy = ShardingStrategy::kShardGradOp;
  sgo.activation_checkpointing = ActivationCheckpointing::kFull;
  cases.push_back({"sgo_ac", 1, sgo});
  WorkloadSpec ddp = small_spec(8, 8);
  ddp.strategy = ShardingStrategy::kNoShard;
  ddp.shard_group_size = 1;
  ddp.replica_group_size = 8;
  cases.push_back({"ddp", 1, ddp});
  WorkloadSpec tiny = small_spec(8, 8);
  tiny.seq_len = 128;
  cases.push_back({"tiny", 1, tiny});
  // Pipeline stages (a graph each, sends and receives between them), also
  // with the stages interleaved in the mesh; context parallelism (the K/V
  // all-gather, or the ring of sends).
  for (const PipelineSchedule p : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B,
                                   PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZbv}) {
    WorkloadSpec pp = small_spec(8, 2);
    pp.model.layers = 8;
    pp.pp = 4;
    pp.grad_accum = 8;
    pp.pipeline_schedule = p;
    pp.virtual_stages = p == PipelineSchedule::kInterleaved1F1B || p == PipelineSchedule::kZbv ? 2 : 1;
    pp.dp_size = 2;
    pp.replica_group_size = 1;
    pp.strategy = ShardingStrategy::kFullShard;
    cases.push_back({pipeline_schedule_name(p).data(), 1, pp});
    if (p != PipelineSchedule::k1F1B) continue;
    EXPECT_EQ(parse_mesh_order("dp_shard pp dp_replicate cp tp", &pp.mesh_order), "");
    cases.push_back({"1f1b_mesh_order", 1, pp});
  }
  // Async TP (TP 4 and TP 2): its copies are sends and receives around the
  // TP ring that copy engines move (clustersim_copy_engine), so they take
  // no SMs; each starts when its input is made, beside the local chunk.
  cases.push_back({"async_tp", 1, test_support::tp_spec(8, 4, true)});
  cases.push_back({"async_tp2", 1, test_support::tp_spec(8, 2, true)});
  WorkloadSpec cp = small_spec(8, 8);
  cp.cp = 2;
  cases.push_back({"cp_allgather", 1, cp});
  cp.cp = 4;
  cp.cp_rotate = CpRotateMethod::kAllToAll;
  cases.push_back({"cp_ring", 1, cp});
  return cases;
}

StepConfig round_trip_config(const WorkloadSpec& w, double slowdown) {
  StepConfig c = config_for(w);
  c.schedule_options.separate_reduce_stream = w.separate_reduce_stream;
  c.schedule_options.no_sync = w.no_sync;
  c.compute.comm_overlap_slowdown = slowdown;
  // Without SM sharing, identical GPUs too: the round trip is then exact.
  if (slowdown == 1.0) c.compute.speed_variation = 0;
  c.host.pcie_Bps = 50e9;
  c.host.cpu_adam_params_per_s = 1e9;
  return c;
}

// Without SM sharing the replay of every rank ends at the very nanosecond
// the step simulator does: launches, host waits, segments, collectives,
// copies and the CPU optimizer all map one to one.
TEST(ChakraExportRoundTrip, ReplayEqualsTheStepSimulatorToTheNanosecond) {
  for (const Case& k : round_trip_cases()) {
    const RoundTrip rt = round_trip(hgx_h100(k.nodes), round_trip_config(k.w, 1.0));
    EXPECT_EQ(rt.replayed_s, rt.simulated_s) << k.name;
    EXPECT_GT(rt.simulated_s, 0) << k.name;
  }
}

// With SM sharing (comm_overlap_slowdown 1.1) and kernels that are not
// launch-bound, the only difference is rounding: the replay rounds each
// slowed kernel's end up to the nanosecond, the simulator each segment's.
TEST(ChakraExportRoundTrip, WithSmSharingOnlyRoundingDiffers) {
  for (const Case& k : round_trip_cases()) {
    const StepConfig c = round_trip_config(k.w, 1.1);
    const RoundTrip rt = round_trip(hgx_h100(k.nodes), c);
    const FsdpSchedule s = build_fsdp_schedule(k.w, c.schedule_options);
    const double kernels = static_cast<double>(s.count(TaskKind::kKernel));
    EXPECT_LE(std::abs(rt.replayed_s - rt.simulated_s), kernels * 1e-9) << k.name;
  }
}

// Launch-bound segments while a transfer is in flight: the replay compiles
// the launches and kernels of the graph into the simulator's own segments
// (workloads/chakra/replay_program.h), so it ends where the simulator does.
TEST(ChakraExportRoundTrip, LaunchBoundSegmentsUnderSmSharingEndAsTheSimulatorsDo) {
  WorkloadSpec w = small_spec(8, 8);
  w.grad_accum = 2;
  w.forward_prefetch = true;
  for (const int launch_us : {10, 20}) {
    StepConfig c = round_trip_config(w, 1.1);
    c.compute.speed_variation = 0;  // SM sharing alone (a spread adds rounding of its own)
    c.host.kernel_launch = sim::SimTime::us(launch_us);
    const RoundTrip rt = round_trip(hgx_h100(1), c);
    EXPECT_EQ(rt.replayed_s, rt.simulated_s) << launch_us;
    EXPECT_GT(rt.simulated_s, 0) << launch_us;
  }
}

}  // namespace
}  // namespace clustersim::workloads::chakra
