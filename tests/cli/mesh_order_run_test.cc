// `clustersim run` with workload.parallelism.mesh_order: a bad order and an
// order whose groups straddle nodes unevenly are errors at the key; moving
// TP off the node moves its collectives onto the network.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::rejected_run;
using test_support::run;

const std::string k8b = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";
const std::string k70b = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_70b_fsdp_tp_64xh100.yaml";
const char* const kOrder = "workload.parallelism.mesh_order=";

TEST(MeshOrderRun, AnOrderThatIsNotEachDimOnceIsAnErrorAtTheKey) {
  const std::string err = rejected_run(k8b, {std::string(kOrder) + "pp dp_shard cp tp"});
  EXPECT_TRUE(contains(err, "workload.parallelism.mesh_order: expected each of pp, dp_replicate, "
                            "dp_shard, cp, tp once, slowest first"))
      << err;
  EXPECT_TRUE(contains(err, "found 'pp dp_shard cp tp'")) << err;
}

TEST(MeshOrderRun, GroupsUnevenOverNodesAreAnErrorAtTheKey) {
  // 24 GPUs, tp 8 strided by cp 3: the first TP group is ranks 0, 3, ..., 21,
  // 3 + 3 + 2 over three nodes.
  const std::string err = rejected_run(
      k8b, {"cluster.nodes=3", "workload.parallelism.tp=8", "workload.parallelism.cp=3",
            "workload.seq_len=6144", std::string(kOrder) + "pp dp_replicate dp_shard tp cp"});
  EXPECT_TRUE(contains(err, "workload.parallelism.mesh_order: expected an order that puts as many "
                            "members of each group on every node it uses"))
      << err;
  EXPECT_TRUE(contains(err, "tp group of rank 0 (ranks 0, 3, 6, 9, ...)")) << err;
}

double seconds_on(const std::string& report, const std::string& line) {
  const size_t at = report.find(line);
  EXPECT_NE(at, std::string::npos) << report;
  return at == std::string::npos ? 0 : std::stod(report.substr(at + line.size()));
}

TEST(MeshOrderRun, TensorParallelismAcrossNodesRunsOnTheNetwork) {
  // 70B, TP 8 x FSDP 8 on 8 nodes. With tp outside dp_shard each TP group
  // holds one GPU per node (its collectives cross the network) and each
  // shard group is one node (FSDP's on NVLink).
  const auto in_node = run({"run", k70b, "--no-wall-time"});
  const auto across =
      run({"run", k70b, "--no-wall-time", "--set", std::string(kOrder) + "pp dp_replicate tp "
                                                                         "dp_shard cp"});
  ASSERT_EQ(in_node.code, 0) << in_node.err;
  ASSERT_EQ(across.code, 0) << across.err;
  // As docs/run.md reports them: 2.59 s -> 6.42 s, exposed TP 0.587 -> 4.49 s.
  EXPECT_NEAR(seconds_on(in_node.out, "step time"), 2.590, 0.01);
  EXPECT_NEAR(seconds_on(across.out, "step time"), 6.416, 0.02);
  EXPECT_NEAR(seconds_on(in_node.out, "exposed TP"), 0.587, 0.01);
  EXPECT_NEAR(seconds_on(across.out, "exposed TP"), 4.491, 0.02);
  EXPECT_LT(seconds_on(across.out, "exposed all-gather"),
            seconds_on(in_node.out, "exposed all-gather"));
}

}  // namespace
}  // namespace clustersim
