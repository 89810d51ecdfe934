// The two trace forms (workloads/chakra/chakra_trace.h TraceForm): the rule that
// tells them apart, the all-gather sizes each means, on hand-built graphs
// whose replay time is the tuner's for hand-computed bytes, with and
// without --scale-to; group names in messages; the groups file's order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/group_collectives.h"
#include "collectives/tuner.h"
#include "config/config_error.h"
#include "tests/support/config_errors.h"
#include "tests/support/step_fixtures.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/chakra/chakra_scale.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {
namespace {

using collectives::CollectiveOp;
using test_support::hgx_h100;
using topology::Cluster;

const collectives::HardwareProfile& profile() { return test_support::h100(); }

Node coll(uint64_t id, CommType type, int64_t bytes, std::string pg,
          std::vector<uint64_t> deps = {}) {
  Node n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = static_cast<int32_t>(NodeType::kCommColl);
  n.comm_type = static_cast<int64_t>(type);
  n.comm_size = bytes;
  if (!pg.empty()) n.pg_name = std::move(pg);
  n.data_deps = std::move(deps);
  return n;
}

Trace trace_of(std::vector<Node> nodes, std::string file = "", std::string form = "") {
  Trace t;
  t.file = std::move(file);
  t.nodes = std::move(nodes);
  if (!form.empty()) t.metadata.push_back(string_attribute("clustersim_trace_form", form));
  return t;
}

// One collective alone on idle links: the tuner's latency, then the bytes
// at its uncontended rate (ceil to the ns, as CollectiveFlows runs a flow).
int64_t collective_ns(const Cluster& cluster, const std::vector<int64_t>& gpus, CollectiveOp op,
                      int64_t bytes) {
  const collectives::TunedCollective t =
      collectives::tune_collective(profile(), collectives::geometry_of(cluster, gpus), op, bytes);
  const int64_t latency = sim::SimTime::from_seconds_rounded(t.cost.latency_s).count_ns();
  const double rate = static_cast<double>(bytes) / t.cost.transfer_s;
  return latency + static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / rate * 1e9));
}

int64_t ns(double seconds) { return std::llround(seconds * 1e9); }

using test_support::config_error;
using test_support::contains;

std::vector<Trace> two_ranks(CommType type, int64_t bytes, const std::string& pg,
                             const std::string& form = "") {
  return {trace_of({coll(3, type, bytes, pg)}, "t.0.et", form),
          trace_of({coll(3, type, bytes, pg)}, "t.1.et", form)};
}

// ---- The rule ----

TEST(ChakraForms, NumericProcessGroupNamesAreDigitsOnly) {
  for (const char* yes : {"0", "7", "17", "0123"}) EXPECT_TRUE(is_numeric_pg_name(yes)) << yes;
  for (const char* no : {"", "-1", "+1", " 1", "1a", "shard_0", "world", "1.5"}) {
    EXPECT_FALSE(is_numeric_pg_name(no)) << no;
  }
}

TEST(ChakraForms, UnmarkedTracesAreDecidedByTheirNames) {
  const CommGroups ids = {{"0", {0, 1}}, {"1", {0, 1}}};
  FormDecision d = detect_trace_form(two_ranks(CommType::kAllGather, 64, "1"), ids);
  EXPECT_EQ(d.form, TraceForm::kStandard);
  EXPECT_EQ(d.why, "every pg_name and comm-group key is a number, or there are none");
  d = detect_trace_form(two_ranks(CommType::kAllGather, 64, "shard_0"), {{"shard_0", {0, 1}}});
  EXPECT_EQ(d.form, TraceForm::kNamed);
  EXPECT_EQ(d.why, "pg_name 'shard_0' (t.0.et node 3) is not a number");
  // No pg_name at all: the comm-group file's keys decide, and without one
  // the traces are standard (what PyTorch's converter writes for the world).
  d = detect_trace_form(two_ranks(CommType::kAllGather, 64, ""), {{"world", {0, 1}}});
  EXPECT_EQ(d.form, TraceForm::kNamed);
  EXPECT_EQ(d.why, "comm-group key 'world' is not a number");
  EXPECT_EQ(detect_trace_form(two_ranks(CommType::kAllGather, 64, ""), {}).form,
            TraceForm::kStandard);
  EXPECT_STREQ(trace_form_name(TraceForm::kNamed), "named");
  EXPECT_STREQ(trace_form_name(TraceForm::kStandard), "standard");
}

TEST(ChakraForms, TheMetadataMarkWinsOverTheNames) {
  FormDecision d =
      detect_trace_form(two_ranks(CommType::kAllGather, 64, "1", "named"), {{"1", {0, 1}}});
  EXPECT_EQ(d.form, TraceForm::kNamed);
  EXPECT_EQ(d.why, "clustersim_trace_form \"named\" in the GlobalMetadata");
  d = detect_trace_form(two_ranks(CommType::kAllGather, 64, "shard_0", "standard"),
                        {{"shard_0", {0, 1}}});
  EXPECT_EQ(d.form, TraceForm::kStandard);
}

TEST(ChakraForms, BadOrInconsistentMarksAreErrorsNamingTheFile) {
  std::string what = config_error(
      [] { detect_trace_form(two_ranks(CommType::kAllGather, 64, "1", "nccl-tests"), {}); });
  EXPECT_TRUE(contains(what,
                       "t.0.et: error: GlobalMetadata clustersim_trace_form: expected "
                       "\"standard\" or \"named\", found \"nccl-tests\""))
      << what;
  std::vector<Trace> mixed = two_ranks(CommType::kAllGather, 64, "1");
  mixed[1].metadata.push_back(string_attribute("clustersim_trace_form", "standard"));
  what = config_error([&] { detect_trace_form(mixed, {}); });
  EXPECT_TRUE(contains(what,
                       "t.0.et: error: GlobalMetadata clustersim_trace_form: expected "
                       "\"standard\" as in t.1.et (every trace of a job in one form), found no "
                       "such attribute"))
      << what;
  mixed[0].metadata.push_back(string_attribute("clustersim_trace_form", "named"));
  what = config_error([&] { detect_trace_form(mixed, {}); });
  EXPECT_TRUE(contains(what,
                       "t.1.et: error: GlobalMetadata clustersim_trace_form: expected "
                       "\"named\" as in t.0.et (every trace of a job in one form), found "
                       "\"standard\""))
      << what;
  std::vector<Trace> number = two_ranks(CommType::kAllGather, 64, "1");
  number[0].metadata.push_back(int64_attribute("clustersim_trace_form", 1));
  what = config_error([&] { detect_trace_form(number, {}); });
  EXPECT_TRUE(contains(what,
                       "t.0.et: error: GlobalMetadata clustersim_trace_form: expected a string, "
                       "\"standard\" or \"named\", found an integer"))
      << what;
}

TEST(ChakraForms, AllGatherTotals) {
  Node n = coll(9, CommType::kAllGather, 1000, "1");
  std::string problem;
  EXPECT_EQ(all_gather_total(n, 1000, 8, problem), 8000);
  n.comm_total = 7993;  // 8 x 1000 less a padding of 7
  EXPECT_EQ(all_gather_total(n, 1000, 8, problem), 7993);
  n.comm_total = 7000;  // 7 shards: not 8 inputs of 1000
  EXPECT_EQ(all_gather_total(n, 1000, 8, problem), std::nullopt);
  EXPECT_EQ(problem,
            "clustersim_comm_total 7000 is not the output of an all_gather of 8 inputs of "
            "comm_size 1000 bytes (expected more than 7000 and at most 8000)");
  n.comm_total.reset();
  EXPECT_EQ(all_gather_total(n, std::numeric_limits<int64_t>::max() / 2, 3, problem), std::nullopt);
  EXPECT_TRUE(contains(problem, "overflows 64 bits")) << problem;
  EXPECT_EQ(all_gather_total(n, -1, 8, problem), std::nullopt);
  EXPECT_EQ(problem, "comm_size must be >= 0, found -1");
  n.comm_total = 0;
  EXPECT_EQ(all_gather_total(n, 0, 8, problem), 0);
}

// ---- What the sizes mean in a replay ----

// comm_size 16 MiB on two ranks: the standard form gathers 2 x 16 MiB, the
// named form 16 MiB in all.
TEST(ChakraForms, AStandardAllGatherMovesGroupSizeTimesItsInput) {
  const Cluster cluster = hgx_h100(1);
  const int64_t input = 16 << 20;
  const StepResult standard = replay_traces(
      cluster, profile(), two_ranks(CommType::kAllGather, input, "1"), {{"1", {0, 1}}}, {});
  EXPECT_EQ(ns(standard.step_time_s),
            collective_ns(cluster, {0, 1}, CollectiveOp::kAllGather, 2 * input));
  const StepResult named = replay_traces(
      cluster, profile(), two_ranks(CommType::kAllGather, input, "g"), {{"g", {0, 1}}}, {});
  EXPECT_EQ(ns(named.step_time_s), collective_ns(cluster, {0, 1}, CollectiveOp::kAllGather, input));
  // Reduce-scatter: comm_size is each rank's whole input in both forms.
  const StepResult rs = replay_traces(
      cluster, profile(), two_ranks(CommType::kReduceScatter, input, "1"), {{"1", {0, 1}}}, {});
  EXPECT_EQ(ns(rs.step_time_s),
            collective_ns(cluster, {0, 1}, CollectiveOp::kReduceScatter, input));
  // Without pg_name or groups: the world of 4 traced ranks.
  std::vector<Trace> world;
  for (int r = 0; r < 4; ++r) world.push_back(trace_of({coll(0, CommType::kAllGather, input, "")}));
  const StepResult w = replay_traces(cluster, profile(), world, {}, {});
  EXPECT_EQ(ns(w.step_time_s),
            collective_ns(cluster, {0, 1, 2, 3}, CollectiveOp::kAllGather, 4 * input));
}

TEST(ChakraForms, ClustersimCommTotalIsTheOutputAndMustFitTheInput) {
  const Cluster cluster = hgx_h100(1);
  std::vector<Trace> ranks = two_ranks(CommType::kAllGather, 1000001, "1");
  for (Trace& t : ranks) t.nodes[0].comm_total = 2000001;
  const StepResult r = replay_traces(cluster, profile(), ranks, {{"1", {0, 1}}}, {});
  EXPECT_EQ(ns(r.step_time_s), collective_ns(cluster, {0, 1}, CollectiveOp::kAllGather, 2000001));
  ranks[1].nodes[0].comm_total = 3000000;
  const std::string what = config_error([&] {
    replay_traces(cluster, profile(), ranks, {{"1", {0, 1}}}, {});
  });
  EXPECT_TRUE(contains(what,
                       "t.1.et: error: node 3: clustersim_comm_total 3000000 is not the output "
                       "of an all_gather of 2 inputs of comm_size 1000001 bytes"))
      << what;
}

// --scale-to keeps the traced tensor: 2 traced ranks gathering 2 x 8 MiB
// on "0" become one all-gather of 16 MiB over all 16 ranks, as the named
// form's 16 MiB does.
TEST(ChakraForms, ScaleToKeepsTheTracedOutputOfAStandardAllGather) {
  const Cluster cluster = hgx_h100(2);
  const int64_t input = 8 << 20;
  const std::vector<Trace> standard = two_ranks(CommType::kAllGather, input, "0");
  const ReplayJob job = build_replay_job(standard, {{"0", {0, 1}}}, 16);
  EXPECT_EQ(job.form.form, TraceForm::kStandard);
  ASSERT_EQ(job.gather_members.size(), 2u);
  EXPECT_EQ(job.gather_members[1], std::vector<int64_t>{2});
  const StepResult a = replay_job(cluster, profile(), job, {});
  const std::vector<Trace> named = two_ranks(CommType::kAllGather, 2 * input, "w");
  const StepResult b =
      replay_job(cluster, profile(), build_replay_job(named, {{"w", {0, 1}}}, 16), {});
  std::vector<int64_t> all(16);
  for (int64_t i = 0; i < 16; ++i) all[static_cast<size_t>(i)] = i;
  EXPECT_EQ(ns(a.step_time_s), collective_ns(cluster, all, CollectiveOp::kAllGather, 2 * input));
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  // Groups that are repeated, not widened (HSDP shard groups of 2 out of
  // 4): each copy gathers 2 x the input too.
  std::vector<Trace> hsdp;
  for (int r = 0; r < 4; ++r) {
    hsdp.push_back(trace_of({coll(0, CommType::kAllGather, input, r < 2 ? "1" : "2")}));
  }
  const StepResult c =
      replay_job(cluster, profile(), build_replay_job(hsdp, {{"1", {0, 1}}, {"2", {2, 3}}}, 8), {});
  EXPECT_EQ(ns(c.step_time_s), collective_ns(cluster, {0, 1}, CollectiveOp::kAllGather, 2 * input));
}

// ---- Names ----

TEST(ChakraForms, MessagesShowAGroupsIdWithItsName) {
  std::vector<Trace> ranks = {
      trace_of(
          {coll(1, CommType::kAllReduce, 1024, "1"), coll(2, CommType::kAllReduce, 1024, "2", {1})},
          "t.0.et"),
      trace_of(
          {coll(1, CommType::kAllReduce, 1024, "2"), coll(2, CommType::kAllReduce, 1024, "1", {1})},
          "t.1.et"),
  };
  for (Trace& t : ranks) {
    for (Node& n : t.nodes) n.pg_desc = *n.pg_name == "1" ? "shard_0" : "shard_0.reduce";
  }
  const CommGroups groups = {{"1", {0, 1}}, {"2", {0, 1}}};
  const std::string what =
      config_error([&] { replay_traces(hgx_h100(1), profile(), ranks, groups, {}); });
  EXPECT_TRUE(contains(what,
                       "t.0.et: error: node 1 (rank 0): ALL_REDUCE #0 of process group "
                       "'1 (shard_0)' waits for rank(s) 1"))
      << what;
  // Repeated by --scale-to: the copy is named too.
  std::vector<Trace> solo = {trace_of({coll(0, CommType::kAllReduce, 64, "1")}),
                             trace_of({coll(0, CommType::kAllReduce, 64, "2")})};
  solo[0].nodes[0].pg_desc = "tp_0";
  solo[1].nodes[0].pg_desc = "tp_1";
  const ReplayJob scaled = build_replay_job(solo, {{"1", {0}}, {"2", {1}}}, 4);
  ASSERT_EQ(scaled.groups.size(), 4u);
  EXPECT_EQ(scaled.groups[0].name, "1 (tp_0, copy 0)");
  EXPECT_EQ(scaled.groups[1].name, "1 (tp_0, copy 1)");
  EXPECT_EQ(scaled.groups[3].name, "2 (tp_1, copy 1)");
  EXPECT_EQ(scaled.groups[3].ranks, std::vector<int64_t>{3});
}

TEST(ChakraForms, TheGroupsFileListsNumericIdsInNumericOrder) {
  EXPECT_EQ(comm_groups_json({{"10", {1}}, {"2", {0}}, {"0", {0, 1}}}),
            "{\n  \"0\": [0, 1],\n  \"2\": [0],\n  \"10\": [1]\n}\n");
  EXPECT_EQ(comm_groups_json({{"b", {1}}, {"10", {0}}, {"a", {0}}}),
            "{\n  \"10\": [0],\n  \"a\": [0],\n  \"b\": [1]\n}\n");
}

}  // namespace
}  // namespace clustersim::workloads::chakra
