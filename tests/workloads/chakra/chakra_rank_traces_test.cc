// read_rank_traces (workloads/chakra/chakra_rank_traces.cc): per-rank files that hold
// the same graph are parsed and compiled once, a rank whose graph differs
// keeps its own, the replay and every error are those of one Trace per rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config_error.h"
#include "tests/support/config_errors.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/step_fixtures.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/chakra_scale.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {
namespace {

using test_support::config_error;
using test_support::h100;
using test_support::ScratchDir;

Node comp(uint64_t id, int64_t ns, std::vector<uint64_t> deps = {}) {
  Node n;
  n.id = id;
  n.name = "kernel" + std::to_string(id);
  n.type = static_cast<int32_t>(NodeType::kComp);
  n.duration_ns = ns;
  n.num_ops = 1'000'000'000;
  n.ctrl_deps = std::move(deps);
  return n;
}

Node all_reduce(uint64_t id, int64_t bytes, std::vector<uint64_t> deps) {
  Node n;
  n.id = id;
  n.name = "ar" + std::to_string(id);
  n.type = static_cast<int32_t>(NodeType::kCommColl);
  n.comm_type = static_cast<int64_t>(CommType::kAllReduce);
  n.comm_size = bytes;
  n.pg_name = "0";
  n.data_deps = std::move(deps);
  return n;
}

// A kernel of `first_ns`, an all-reduce of group "0", a kernel; the
// GlobalMetadata names the rank, as export-chakra's does.
Trace rank_trace(int64_t rank, int64_t first_ns, const std::string& form = "standard") {
  Trace t;
  t.metadata.push_back(int64_attribute("clustersim_rank", rank));
  if (!form.empty()) t.metadata.push_back(string_attribute("clustersim_trace_form", form));
  t.nodes = {comp(0, first_ns), all_reduce(1, 64 << 20, {0}), comp(2, 50'000, {1})};
  return t;
}

// Writes ranks 0..n-1 with first_ns[r]; returns the prefix.
std::string write_ranks(const ScratchDir& dir, const std::vector<int64_t>& first_ns) {
  const std::string prefix = dir.file("t");
  for (size_t r = 0; r < first_ns.size(); ++r) {
    write_trace_file(rank_trace_path(prefix, static_cast<int64_t>(r)),
                     rank_trace(static_cast<int64_t>(r), first_ns[r]));
  }
  return prefix;
}

// One Trace per rank, as before deduplication.
std::vector<Trace> read_each(const std::string& prefix, int64_t ranks) {
  std::vector<Trace> traces;
  for (int64_t r = 0; r < ranks; ++r) traces.push_back(read_trace_file(rank_trace_path(prefix, r)));
  return traces;
}

TEST(ChakraRankTraces, IdenticalGraphsAreParsedAndCompiledOnce) {
  ScratchDir dir;
  const std::string prefix = write_ranks(dir, std::vector<int64_t>(8, 100'000));
  const RankTraces traces = read_rank_traces(prefix, 8);
  ASSERT_EQ(traces.graphs.size(), 1u);
  EXPECT_EQ(traces.graph_of, std::vector<int32_t>(8, 0));
  ASSERT_EQ(traces.files.size(), 8u);
  EXPECT_EQ(traces.files[5], rank_trace_path(prefix, 5));
  EXPECT_EQ(traces.graphs[0].file, rank_trace_path(prefix, 0));
  EXPECT_EQ(traces.graphs[0].nodes.size(), 3u);

  const ReplayJob job = build_replay_job(traces.view(), {{"0", {0, 1, 2, 3, 4, 5, 6, 7}}}, 16);
  EXPECT_EQ(job.templates.size(), 1u);
  EXPECT_EQ(job.template_rank, std::vector<int64_t>{0});
  EXPECT_EQ(job.template_of, std::vector<int32_t>(16, 0));
  EXPECT_EQ(job.traced_ranks, 8);
  EXPECT_EQ(rank_location(job, 13), rank_trace_path(prefix, 5));
}

TEST(ChakraRankTraces, ARankWhoseGraphDiffersKeepsItsOwn) {
  ScratchDir dir;
  const std::string prefix = write_ranks(dir, {100'000, 100'000, 300'000, 100'000, 300'000});
  const RankTraces traces = read_rank_traces(prefix, 5);
  ASSERT_EQ(traces.graphs.size(), 2u);
  EXPECT_EQ(traces.graph_of, (std::vector<int32_t>{0, 0, 1, 0, 1}));
  EXPECT_EQ(traces.graphs[1].file, rank_trace_path(prefix, 2));
  EXPECT_EQ(traces.graphs[1].nodes[0].duration_ns, 300'000);
  const ReplayJob job = build_replay_job(traces.view(), {{"0", {0, 1, 2, 3, 4}}}, 5);
  EXPECT_EQ(job.template_rank, (std::vector<int64_t>{0, 2}));
}

TEST(ChakraRankTraces, SameNodesInAnotherTraceFormAreNotShared) {
  ScratchDir dir;
  const std::string prefix = dir.file("t");
  write_trace_file(rank_trace_path(prefix, 0), rank_trace(0, 100'000, "standard"));
  write_trace_file(rank_trace_path(prefix, 1), rank_trace(1, 100'000, "named"));
  const RankTraces traces = read_rank_traces(prefix, 2);
  EXPECT_EQ(traces.graphs.size(), 2u);
  const std::string expected = config_error(
      [&] { (void)detect_trace_form(std::span<const Trace>(read_each(prefix, 2)), {}); });
  EXPECT_NE(expected.find("t.1.et"), std::string::npos) << expected;
  EXPECT_EQ(config_error([&] { (void)detect_trace_form(traces.view(), {}); }), expected);
}

TEST(ChakraRankTraces, TheReplayEqualsOneTracePerRank) {
  ScratchDir dir;
  // Rank 3 waits longer before the all-reduce: the others sync-wait for it.
  const std::string prefix = write_ranks(dir, {100'000, 100'000, 100'000, 400'000});
  const topology::Cluster cluster = test_support::hgx_h100(1);
  const CommGroups groups = {{"0", {0, 1, 2, 3}}};
  const RankTraces shared = read_rank_traces(prefix, 4);
  ASSERT_EQ(shared.graphs.size(), 2u);
  const std::vector<Trace> each = read_each(prefix, 4);
  for (const int64_t ranks : {4, 8}) {
    const StepResult a =
        replay_job(cluster, h100(), build_replay_job(shared.view(), groups, ranks), {});
    const StepResult b = replay_job(cluster, h100(), build_replay_job(each, groups, ranks), {});
    EXPECT_GT(a.step_time_s, 450e-6);
    EXPECT_EQ(a.step_time_s, b.step_time_s);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.collectives, b.collectives);
    EXPECT_EQ(a.slowest_rank, b.slowest_rank);
    EXPECT_EQ(a.breakdown.compute_s, b.breakdown.compute_s);
    EXPECT_EQ(a.breakdown.sync_wait_s, b.breakdown.sync_wait_s);
    EXPECT_GT(a.breakdown.sync_wait_s, 0);
  }
}

TEST(ChakraRankTraces, ErrorsInDuplicatedFilesNameEachFile) {
  ScratchDir dir;
  const std::string prefix = dir.file("t");
  for (int64_t r = 0; r < 4; ++r) {
    Trace t = rank_trace(r, 100'000);
    t.nodes[2].ctrl_deps.push_back(99);  // dangling
    write_trace_file(rank_trace_path(prefix, r), t);
  }
  const RankTraces traces = read_rank_traces(prefix, 4);
  ASSERT_EQ(traces.graphs.size(), 1u);
  // Rank 3 is not in group "0": a per-rank problem of the shared graph.
  const CommGroups groups = {{"0", {0, 1, 2}}};
  const std::string expected = config_error([&] { check_traces(read_each(prefix, 4), groups); });
  for (const char* file : {"t.0.et", "t.3.et", "without rank 3"}) {
    EXPECT_NE(expected.find(file), std::string::npos) << file << " in " << expected;
  }
  EXPECT_EQ(config_error([&] { check_traces(traces.view(), groups); }), expected);
}

TEST(ChakraRankTraces, MembershipOfASharedCleanGraphIsCheckedPerRank) {
  ScratchDir dir;
  const std::string prefix = write_ranks(dir, std::vector<int64_t>(4, 100'000));
  const RankTraces traces = read_rank_traces(prefix, 4);
  const CommGroups groups = {{"0", {0, 2}}};
  const std::string expected = config_error([&] { check_traces(read_each(prefix, 4), groups); });
  EXPECT_NE(expected.find("t.1.et: error: node 1: pg_name \"0\" names a group without rank 1"),
            std::string::npos)
      << expected;
  EXPECT_NE(expected.find("t.3.et"), std::string::npos) << expected;
  EXPECT_EQ(config_error([&] { check_traces(traces.view(), groups); }), expected);
  check_traces(traces.view(), {{"0", {0, 1, 2, 3}}});  // no error
}

TEST(ChakraRankTraces, CompileErrorsOfASharedGraphNameEveryFile) {
  ScratchDir dir;
  const std::string prefix = dir.file("t");
  for (int64_t r = 0; r < 3; ++r) {
    Trace t = rank_trace(r, 100'000);
    t.nodes[0].duration_ns = -5;
    write_trace_file(rank_trace_path(prefix, r), t);
  }
  const topology::Cluster cluster = test_support::hgx_h100(1);
  const CommGroups groups = {{"0", {0, 1, 2}}};
  const RankTraces traces = read_rank_traces(prefix, 3);
  ASSERT_EQ(traces.graphs.size(), 1u);
  const std::vector<Trace> each = read_each(prefix, 3);
  const std::string expected = config_error(
      [&] { (void)replay_job(cluster, h100(), build_replay_job(each, groups, 3), {}); });
  EXPECT_NE(expected.find("t.2.et: error: node 0: duration must be >= 0"), std::string::npos)
      << expected;
  EXPECT_EQ(config_error([&] {
              (void)replay_job(cluster, h100(), build_replay_job(traces.view(), groups, 3), {});
            }),
            expected);
}

TEST(ChakraRankTraces, ABrokenFileAfterADuplicateIsReportedAsReadTraceFileDoes) {
  ScratchDir dir;
  const std::string prefix = write_ranks(dir, std::vector<int64_t>(3, 100'000));
  // Rank 2: same node bytes, a GlobalMetadata that is not one.
  std::string bytes = serialize_trace(rank_trace(2, 100'000));
  ASSERT_GT(bytes.size(), 3u);
  bytes[1] = '\xff';
  bytes[2] = '\xff';
  dir.write("t.2.et", bytes);
  const std::string expected =
      config_error([&] { (void)read_trace_file(rank_trace_path(prefix, 2)); });
  EXPECT_NE(expected.find("t.2.et"), std::string::npos) << expected;
  EXPECT_EQ(config_error([&] { (void)read_rank_traces(prefix, 3); }), expected);
  EXPECT_EQ(config_error([&] { (void)read_rank_traces(dir.file("missing"), 1); }),
            config_error([&] { (void)read_trace_file(dir.file("missing.0.et")); }));
}

}  // namespace
}  // namespace clustersim::workloads::chakra
