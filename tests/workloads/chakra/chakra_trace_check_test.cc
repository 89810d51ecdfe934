#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "tests/support/scratch_dir.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {
namespace {

using test_support::ScratchDir;

Node comp(uint64_t id, std::vector<uint64_t> data_deps = {}) {
  Node n;
  n.id = id;
  n.type = static_cast<int32_t>(NodeType::kComp);
  n.data_deps = std::move(data_deps);
  n.num_ops = 1000;
  return n;
}

Node collective(uint64_t id, CommType type, int64_t bytes, std::string pg_name = "") {
  Node n;
  n.id = id;
  n.type = static_cast<int32_t>(NodeType::kCommColl);
  n.comm_type = static_cast<int64_t>(type);
  n.comm_size = bytes;
  if (!pg_name.empty()) n.pg_name = std::move(pg_name);
  return n;
}

Trace trace(std::string file, std::vector<Node> nodes) {
  Trace t;
  t.file = std::move(file);
  t.version = "0.0.4";
  t.nodes = std::move(nodes);
  return t;
}

std::string error_of(const std::vector<Trace>& ranks, const CommGroups& groups = {}) {
  try {
    check_traces(ranks, groups);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Two ranks that all-reduce in "dp" after a GEMM, then exchange a message.
std::vector<Trace> good_ranks() {
  std::vector<Trace> ranks;
  for (int64_t r = 0; r < 2; ++r) {
    Node ar = collective(2, CommType::kAllReduce, 1 << 20, "dp");
    ar.data_deps = {1};
    Node p2p;
    p2p.id = 3;
    p2p.type = static_cast<int32_t>(r == 0 ? NodeType::kCommSend : NodeType::kCommRecv);
    p2p.comm_src = 0;
    p2p.comm_dst = 1;
    p2p.comm_size = 4096;
    p2p.ctrl_deps = {2};
    Node meta;
    meta.id = 4;
    meta.type = static_cast<int32_t>(NodeType::kMetadata);
    ranks.push_back(trace("t." + std::to_string(r) + ".et", {comp(1), ar, p2p, meta}));
  }
  return ranks;
}

TEST(ChakraTraceCheck, GoodGraphsPass) {
  EXPECT_EQ(error_of(good_ranks(), {{"dp", {0, 1}}}), "no error");
  EXPECT_EQ(error_of(good_ranks()), "no error");  // no groups: pg_name not checked
  EXPECT_EQ(error_of({}), "no error");
}

TEST(ChakraTraceCheck, DanglingDependencies) {
  std::vector<Trace> ranks = good_ranks();
  ranks[1].nodes.push_back(comp(17, {1, 99}));
  ranks[1].nodes.back().ctrl_deps = {98};
  EXPECT_EQ(error_of(ranks),
            "t.1.et: error: node 17: control dependency on node 98, which is not in the graph\n"
            "t.1.et: error: node 17: data dependency on node 99, which is not in the graph");
}

TEST(ChakraTraceCheck, DuplicateIds) {
  std::vector<Trace> ranks = good_ranks();
  ranks[0].nodes.push_back(comp(2));
  EXPECT_EQ(error_of(ranks),
            "t.0.et: error: node 2: id used by more than one node (messages 2 and 5)");
}

TEST(ChakraTraceCheck, CyclesNameOneNodeEach) {
  // 10 -> 11 -> 12 -> 10 (each waits for the next), 20 waits for itself,
  // 30 waits for the first cycle without being in it; 40 <-> 41 through a
  // control dependency.
  std::vector<Trace> ranks = {
      trace("t.0.et", {comp(11, {12}), comp(12, {10}), comp(10, {11}), comp(20, {20}),
                       comp(30, {10}), comp(41, {}), comp(40, {41})})};
  ranks[0].nodes[5].ctrl_deps = {40};
  EXPECT_EQ(error_of(ranks),
            "t.0.et: error: node 10: dependency cycle 10 -> 11 -> 12 -> 10 (each node waits for "
            "the next)\n"
            "t.0.et: error: node 20: dependency cycle 20 -> 20 (each node waits for the next)\n"
            "t.0.et: error: node 40: dependency cycle 40 -> 41 -> 40 (each node waits for the "
            "next)");
}

TEST(ChakraTraceCheck, LongCycleIsShortenedAndDeepChainsDoNotOverflow) {
  // A chain of 200000 nodes, each waiting for the previous, closed into a
  // cycle: recursion would overflow the stack.
  const uint64_t n = 200000;
  std::vector<Node> nodes;
  nodes.reserve(n);
  for (uint64_t i = 0; i < n; ++i) nodes.push_back(comp(i, {i == 0 ? n - 1 : i - 1}));
  EXPECT_EQ(error_of({trace("t.0.et", std::move(nodes))}),
            "t.0.et: error: node 0: dependency cycle 0 -> 199999 -> 199998 -> 199997 -> 199996 "
            "-> ... -> 5 -> 4 -> 3 -> 2 -> 1 -> 0 (200000 nodes) (each node waits for the next)");

  std::vector<Node> chain;
  for (uint64_t i = 0; i < n; ++i)
    chain.push_back(comp(i, i == 0 ? std::vector<uint64_t>{} : std::vector<uint64_t>{i - 1}));
  EXPECT_EQ(error_of({trace("t.0.et", std::move(chain))}), "no error");
}

TEST(ChakraTraceCheck, NodeTypes) {
  std::vector<Trace> ranks = good_ranks();
  Node bad = comp(5);
  bad.type = 42;
  Node invalid = comp(6);
  invalid.type = static_cast<int32_t>(NodeType::kInvalid);
  Node storage = comp(7);
  storage.type = static_cast<int32_t>(NodeType::kStorage);
  Node negative = comp(8);
  negative.type = -1;
  ranks[0].nodes.insert(ranks[0].nodes.end(), {bad, invalid, storage, negative});
  EXPECT_EQ(error_of(ranks),
            "t.0.et: error: node 5: node type 42 is not a Chakra NodeType (0 to 10)\n"
            "t.0.et: error: node 6: INVALID_NODE cannot be replayed (expected COMP_NODE, "
            "COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE or "
            "METADATA_NODE)\n"
            "t.0.et: error: node 7: STORAGE_NODE cannot be replayed (expected COMP_NODE, "
            "COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE or "
            "METADATA_NODE)\n"
            "t.0.et: error: node 8: node type -1 is not a Chakra NodeType (0 to 10)");
}

TEST(ChakraTraceCheck, CollectiveAttributes) {
  std::vector<Trace> ranks = good_ranks();
  Node no_type = collective(10, CommType::kAllGather, 8);
  no_type.comm_type.reset();
  Node unknown_type = collective(11, CommType::kAllGather, 8);
  unknown_type.comm_type = 12;
  Node no_size = collective(12, CommType::kReduceScatter, 0);
  no_size.comm_size.reset();
  Node negative_size = collective(13, CommType::kBroadcast, -5);
  ranks[1].nodes.insert(ranks[1].nodes.end(), {no_type, unknown_type, no_size, negative_size});
  EXPECT_EQ(error_of(ranks),
            "t.1.et: error: node 10: collective without comm_type\n"
            "t.1.et: error: node 11: comm_type 12 is not a Chakra CollectiveCommType (0 to 9)\n"
            "t.1.et: error: node 12: collective without comm_size\n"
            "t.1.et: error: node 13: comm_size -5 is negative");
}

TEST(ChakraTraceCheck, ProcessGroups) {
  std::vector<Trace> ranks = good_ranks();
  ranks[0].nodes.push_back(collective(10, CommType::kAllGather, 8, "tp"));
  ranks[1].nodes.push_back(collective(10, CommType::kAllGather, 8, "pp"));
  const CommGroups groups = {{"dp", {0, 1}}, {"pp", {0, 2, 4}}};
  EXPECT_EQ(error_of(ranks, groups),
            "t.0.et: error: node 10: pg_name \"tp\" is not one of the 2 communicator groups\n"
            "t.1.et: error: node 10: pg_name \"pp\" names a group without rank 1 (its ranks: 0, "
            "2, 4)");
}

// Six files, each with a collective on a group the groups file lacks (as
// when it comes from another export): the first four files' problems are
// listed, the rest counted in one line at the first file left out.
TEST(ChakraTraceCheck, ProblemsOfManyFilesListTheFirstFourAndCountTheRest) {
  std::vector<Trace> ranks;
  CommGroups groups = {{"dp", {}}};
  for (int64_t r = 0; r < 6; ++r) {
    ranks.push_back(trace("t." + std::to_string(r) + ".et",
                          {comp(1), collective(2, CommType::kAllGather, 8, "old")}));
    groups["dp"].push_back(r);
  }
  std::string want;
  for (int r = 0; r < 4; ++r) {
    want += "t." + std::to_string(r) +
            ".et: error: node 2: pg_name \"old\" is not one of the 1 communicator groups\n";
  }
  want +=
      "t.4.et: error: and problems in 2 more trace files from this one on (those of the "
      "first 4 are listed above)";
  EXPECT_EQ(error_of(ranks, groups), want);
}

TEST(ChakraTraceCheck, SendRecvPeers) {
  std::vector<Trace> ranks = good_ranks();
  ranks[0].nodes[2].comm_dst.reset();  // send without its destination
  ranks[1].nodes[2].comm_src = 2;      // only ranks 0 and 1 exist
  ranks[1].nodes[2].comm_size.reset();
  EXPECT_EQ(error_of(ranks),
            "t.0.et: error: node 3: send without comm_dst\n"
            "t.1.et: error: node 3: comm_src 2 is not a rank (expected 0 to 1)\n"
            "t.1.et: error: node 3: recv without comm_size");
}

TEST(ChakraTraceCheck, EveryProblemOfEveryRankAtOnceAndMemoryTracesNamedByRank) {
  std::vector<Trace> ranks = good_ranks();
  ranks[0].file.clear();
  ranks[0].nodes.push_back(comp(9, {77}));
  ranks[1].nodes.push_back(comp(9, {9}));
  EXPECT_EQ(error_of(ranks),
            "rank 0: error: node 9: data dependency on node 77, which is not in the graph\n"
            "t.1.et: error: node 9: dependency cycle 9 -> 9 (each node waits for the next)");
}

TEST(ChakraTraceCheck, AFileWithManyProblemsIsCut) {
  std::vector<Node> nodes;
  for (uint64_t i = 0; i < 150; ++i) nodes.push_back(comp(i, {1000 + i}));
  try {
    check_traces({trace("t.0.et", std::move(nodes))}, {});
    FAIL() << "no error";
  } catch (const sim::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 101u);
    EXPECT_EQ(e.diagnostics().back().message, "50 more problems in this file");
  }
}

// ---- Communicator groups.

std::string groups_error(const ScratchDir& dir, const std::string& json) {
  const std::string path = dir.write("groups.json", json);
  try {
    read_comm_groups(path);
  } catch (const sim::ConfigError& e) {
    std::string text = e.what();
    // Messages start with the path: keep them short.
    for (size_t at = text.find(path); at != std::string::npos; at = text.find(path)) {
      text.replace(at, path.size(), "groups.json");
    }
    return text;
  }
  return "no error";
}

TEST(ChakraCommGroups, ReadsAndWritesSorted) {
  ScratchDir dir;
  const std::string path = dir.write("groups.json", R"({"tp.1": [2, 3], "dp": [0, 2], "0": [1]})");
  const CommGroups groups = read_comm_groups(path);
  EXPECT_EQ(groups, (CommGroups{{"0", {1}}, {"dp", {0, 2}}, {"tp.1", {2, 3}}}));
  EXPECT_EQ(comm_groups_json(groups),
            "{\n"
            "  \"0\": [1],\n"
            "  \"dp\": [0, 2],\n"
            "  \"tp.1\": [2, 3]\n"
            "}\n");
  EXPECT_EQ(comm_groups_json({}), "{}\n");
  // What it writes, it reads.
  EXPECT_EQ(read_comm_groups(dir.write("again.json", comm_groups_json(groups))), groups);
}

TEST(ChakraCommGroups, ErrorsNameFileLineAndColumn) {
  ScratchDir dir;
  EXPECT_EQ(groups_error(dir, "[1, 2]"),
            "groups.json:1:1: error: expected an object of process group name -> array of "
            "ranks, found an array");
  EXPECT_EQ(groups_error(dir,
                         "{\n"
                         "  \"dp\": [0, -1, 2.5, \"3\", 0],\n"
                         "  \"tp\": [],\n"
                         "  \"pp\": 4\n"
                         "}\n"),
            "groups.json:2:13: error: dp[1]: expected a rank (a non-negative integer), found -1\n"
            "groups.json:2:17: error: dp[2]: expected a rank (a non-negative integer), found "
            "2.5\n"
            "groups.json:2:22: error: dp[3]: expected a rank (a non-negative integer), found "
            "\"3\"\n"
            "groups.json:2:27: error: dp[4]: expected each rank once in a group, found rank 0 "
            "again (first at dp[0])\n"
            "groups.json:3:9: error: tp: expected at least one rank, found an empty array\n"
            "groups.json:4:9: error: pp: expected an array of ranks, found 4");
  // Syntax errors come from the JSON reader, with their place.
  EXPECT_EQ(groups_error(dir, "{\"dp\": [0, 1,]}"),
            "groups.json:1:14: error: expected a value after ',', found ']'");
  try {
    read_comm_groups(dir.file("missing.json"));
    FAIL() << "no error";
  } catch (const sim::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: error: cannot read the file: no such file"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clustersim::workloads::chakra
