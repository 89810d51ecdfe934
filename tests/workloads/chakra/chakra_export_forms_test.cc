// The standard form of export_step's traces (workloads/chakra/chakra_trace.h
// TraceForm): all-gather sizes by hand, the exact total when the group does
// not divide the unit, traces without host nodes (--no-host-nodes), and the
// same export rewritten in the older named form replaying to the same step.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/support/step_fixtures.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/model/compute_model.h"

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

std::vector<int64_t> every_rank(const StepConfig& c) {
  std::vector<int64_t> ranks(static_cast<size_t>(c.workload.world_size));
  for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
  return ranks;
}

ReplayOptions options_for(const StepConfig& c) {
  ReplayOptions options;
  options.compute = c.compute;
  options.pcie_Bps = c.host.pcie_Bps;
  return options;
}

// 8 GPUs, FULL_SHARD: every all-gather's comm_size is the unit's bytes / 8
// (block 94,380,032 / 8 = 11,797,504; root 262,148,096 / 8 = 32,768,512),
// with the separate reduce stream the reduce-scatters on a communicator of
// their own: "0" the world's main one, "1" its reduce-stream twin.
TEST(ChakraExport, AllGatherSizesOnEightGpusByHand) {
  const Cluster cluster = hgx_h100(1);
  StepConfig c = config_for(small_spec(8, 8));
  c.schedule_options.separate_reduce_stream = true;
  const std::vector<int64_t> ranks = {5};
  const ExportedStep e = export_step(cluster, h100(), c, ranks);
  std::map<int64_t, int> gathers;  // comm_size -> count
  int64_t reductions = 0;
  for (const Node& n : e.traces[0].nodes) {
    if (n.comm_type == static_cast<int64_t>(CommType::kAllGather)) {
      ++gathers[*n.comm_size];
      EXPECT_EQ(n.pg_name, "0");
    } else if (n.comm_type == static_cast<int64_t>(CommType::kReduceScatter)) {
      ++reductions;
      EXPECT_EQ(n.pg_name, "1");
      EXPECT_EQ(n.pg_desc, "world.reduce");
      EXPECT_TRUE(n.comm_size == 94380032 || n.comm_size == 262148096) << *n.comm_size;
    }
  }
  // 5 units: forward 5 all-gathers, backward blocks 0-3 again.
  EXPECT_EQ(gathers, (std::map<int64_t, int>{{11797504, 8}, {32768512, 1}}));
  EXPECT_EQ(reductions, 5);
  const std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(e.groups, (CommGroups{{"0", all}, {"1", all}}));
}

// A shard group of 3 does not divide the unit: comm_size is the padded
// shard (94,380,032 / 3 = 31,460,010.67 -> 31,460,011; root 262,148,096 / 3
// -> 87,382,699) and clustersim_comm_total keeps the exact total.
TEST(ChakraExport, AnUndividedAllGatherKeepsItsTotal) {
  const Cluster cluster = hgx_h100(1);
  const std::vector<int64_t> ranks = {4};
  const ExportedStep e = export_step(cluster, h100(), config_for(small_spec(6, 3)), ranks);
  int64_t gathers = 0;
  for (const Node& n : e.traces[0].nodes) {
    if (n.comm_type != static_cast<int64_t>(CommType::kAllGather)) continue;
    ++gathers;
    ASSERT_TRUE(n.comm_total.has_value());
    const bool root = *n.comm_total == 262148096;
    EXPECT_EQ(n.comm_size, root ? 87382699 : 31460011);
    EXPECT_EQ(n.comm_total, root ? 262148096 : 94380032);
  }
  EXPECT_EQ(gathers, 9);
}

// ---- Without host nodes ----

// With CPU offload (copies and the CPU optimizer): only GPU, communication
// and memory nodes remain, ids still positions, each node's dependencies
// exactly its task's schedule dependencies (stream order and host waits
// included), the CPU optimizer's time reported as left out.
TEST(ChakraExportNoHost, OnlyGpuCommunicationAndMemoryNodesWithTheScheduleDeps) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.cpu_offload = true;
  StepConfig c = config_for(w);
  c.host.cpu_adam_params_per_s = 1e9;
  ExportOptions options;
  options.host_nodes = false;
  const StepExporter exporter(cluster, h100(), c, options);
  const FsdpSchedule& s = exporter.schedule();
  const Trace t = exporter.trace(2);
  ASSERT_EQ(s.count(TaskKind::kCpuOptimizer), 1);
  EXPECT_EQ(exporter.launches_per_rank(), 0);
  EXPECT_EQ(static_cast<int64_t>(t.nodes.size()), s.size() - 1);
  EXPECT_EQ(exporter.host_work_left_out_ns(),
            std::llround(static_cast<double>(s.local_params) / 1e9 * 1e9));
  int64_t memory = 0;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    EXPECT_EQ(n.id, i);
    EXPECT_FALSE(n.is_cpu_op) << n.name;
    EXPECT_NE(n.kernel_class, "launch");
    if (n.type == static_cast<int32_t>(NodeType::kMemLoad) ||
        n.type == static_cast<int32_t>(NodeType::kMemStore)) {
      ++memory;
    }
  }
  EXPECT_EQ(memory, s.count(TaskKind::kCopyToDevice) + s.count(TaskKind::kCopyToHost));
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& task = s.tasks[static_cast<size_t>(i)];
    const uint64_t id = exporter.task_node(i);
    if (task.kind == TaskKind::kCpuOptimizer) {
      EXPECT_EQ(id, kNoNode);
      continue;
    }
    std::vector<uint64_t> ctrl;
    std::vector<uint64_t> data;
    for (const int32_t d : s.deps_of(i)) {
      ASSERT_NE(exporter.task_node(d), kNoNode) << "a task after the CPU optimizer";
      (s.tasks[static_cast<size_t>(d)].stream == task.stream ? ctrl : data)
          .push_back(exporter.task_node(d));
    }
    EXPECT_EQ(t.nodes[id].ctrl_deps, ctrl) << t.nodes[id].name;
    EXPECT_EQ(t.nodes[id].data_deps, data) << t.nodes[id].name;
  }
}

// Launches that cost nothing and no host waits (limit_all_gathers off): the
// host adds nothing, so the traces without host nodes replay to the step
// simulator's time exactly, as the full ones do.
TEST(ChakraExportNoHost, WithAFreeHostTheStepIsRunsToTheNanosecond) {
  for (const int64_t world : {8, 16}) {
    const Cluster cluster = hgx_h100(world / 8);
    WorkloadSpec w = small_spec(world, 8);
    w.limit_all_gathers = false;
    StepConfig c = config_for(w);
    c.host.kernel_launch = sim::SimTime::zero();
    c.host.graph_launch = sim::SimTime::zero();
    c.compute.comm_overlap_slowdown = 1.0;
    c.compute.speed_variation = 0;  // identical GPUs: nothing to round
    ExportOptions bare;
    bare.host_nodes = false;
    const ExportedStep e = export_step(cluster, h100(), c, every_rank(c), bare);
    const double simulated = simulate_step(cluster, h100(), c).step_time_s;
    const double replayed =
        replay_traces(cluster, h100(), e.traces, e.groups, options_for(c)).step_time_s;
    EXPECT_GT(simulated, 0);
    EXPECT_EQ(replayed, simulated) << world;
  }
}

// A launch-bound step (short kernels, 20 us launches): without the host the
// kernels no longer wait for their launches, so the step is shorter.
TEST(ChakraExportNoHost, ALaunchBoundStepIsShorterWithoutTheHost) {
  const Cluster cluster = hgx_h100(1);
  WorkloadSpec w = small_spec(8, 8);
  w.seq_len = 128;
  StepConfig c = config_for(w);
  c.host.kernel_launch = sim::SimTime::us(20);
  ExportOptions bare;
  bare.host_nodes = false;
  const ExportedStep full = export_step(cluster, h100(), c, every_rank(c));
  const ExportedStep gpu = export_step(cluster, h100(), c, every_rank(c), bare);
  const StepResult a = replay_traces(cluster, h100(), full.traces, full.groups, options_for(c));
  const StepResult b = replay_traces(cluster, h100(), gpu.traces, gpu.groups, options_for(c));
  EXPECT_GT(a.breakdown.launch_bound_s, 0);
  EXPECT_EQ(b.breakdown.launch_bound_s, 0);
  EXPECT_LT(b.step_time_s, 0.8 * a.step_time_s);
  EXPECT_EQ(b.collectives, a.collectives);
}

// ---- The named form: the same step, rewritten as clustersim wrote it before ----

// pg_name the group's name, every all-gather's comm_size its total output,
// no clustersim_trace_form: what older exports hold.
void rewrite_named(ExportedStep& e) {
  CommGroups named;
  for (const auto& [id, members] : e.groups) named[e.descs.at(id)] = members;
  for (Trace& t : e.traces) {
    std::erase_if(t.metadata,
                  [](const RawAttribute& a) { return a.name == "clustersim_trace_form"; });
    for (Node& n : t.nodes) {
      if (n.type != static_cast<int32_t>(NodeType::kCommColl)) continue;
      const auto members = static_cast<int64_t>(e.groups.at(*n.pg_name).size());
      if (n.comm_type == static_cast<int64_t>(CommType::kAllGather)) {
        n.comm_size = n.comm_total ? *n.comm_total : *n.comm_size * members;
      }
      n.pg_name = n.pg_desc;
      n.pg_desc.reset();
      n.comm_total.reset();
    }
  }
  e.groups = named;
}

TEST(ChakraExportForms, TheNamedFormOfAnExportReplaysToTheSameStep) {
  struct Case {
    int64_t world, shard, nodes;
  };
  for (const Case k : {Case{8, 8, 1}, Case{16, 8, 2}, Case{6, 3, 1}}) {
    const Cluster cluster = hgx_h100(k.nodes);
    StepConfig c = config_for(small_spec(k.world, k.shard));
    c.compute.comm_overlap_slowdown = 1.1;
    const ExportedStep standard = export_step(cluster, h100(), c, every_rank(c));
    ExportedStep named = standard;
    rewrite_named(named);
    EXPECT_EQ(detect_trace_form(standard.traces, standard.groups).form, TraceForm::kStandard);
    EXPECT_EQ(detect_trace_form(named.traces, named.groups).form, TraceForm::kNamed);
    const StepResult a =
        replay_traces(cluster, h100(), standard.traces, standard.groups, options_for(c));
    const StepResult b = replay_traces(cluster, h100(), named.traces, named.groups, options_for(c));
    EXPECT_EQ(a.step_time_s, b.step_time_s) << k.world;
    EXPECT_EQ(a.events, b.events) << k.world;
    EXPECT_EQ(a.breakdown.exposed_all_gather_s, b.breakdown.exposed_all_gather_s) << k.world;
    EXPECT_EQ(a.breakdown.sync_wait_s, b.breakdown.sync_wait_s) << k.world;
  }
}

// Read as the named form, the standard export's all-gathers would move 1 /
// group size of their bytes: the rule is what keeps the step.
TEST(ChakraExportForms, ReadingTheStandardFormAsNamedWouldShrinkTheAllGathers) {
  const Cluster cluster = hgx_h100(1);
  const StepConfig c = config_for(small_spec(8, 8));
  ExportedStep e = export_step(cluster, h100(), c, every_rank(c));
  ReplayOptions options = options_for(c);
  options.trace_ranks = {0};
  const StepResult standard = replay_traces(cluster, h100(), e.traces, e.groups, options);
  for (Trace& t : e.traces) {
    std::erase_if(t.metadata,
                  [](const RawAttribute& a) { return a.name == "clustersim_trace_form"; });
    t.metadata.push_back(string_attribute("clustersim_trace_form", "named"));
  }
  const StepResult named = replay_traces(cluster, h100(), e.traces, e.groups, options);
  EXPECT_GT(standard.breakdown.exposed_all_gather_s, named.breakdown.exposed_all_gather_s);
  int64_t checked = 0;
  for (size_t i = 0; i < standard.trace.size(); ++i) {
    if (standard.trace[i].category != "all_gather") continue;
    ++checked;
    EXPECT_TRUE(standard.trace[i].bytes == 94380032 || standard.trace[i].bytes == 262148096)
        << standard.trace[i].bytes;
  }
  EXPECT_EQ(checked, 9);
}

}  // namespace
}  // namespace clustersim::workloads::chakra
