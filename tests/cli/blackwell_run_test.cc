// Blackwell parts end to end: the precisions each part runs, each refused
// one an error at its key with the profile named, NVLink domains of 72 GPUs
// (a TP group no larger than the domain), part of a domain
// (cluster.gpus_used_per_node), and NCCL_NVLS_ENABLE (collectives.nvls).
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/support/json_value.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim {
namespace {

using test_support::JsonValue;
using test_support::Outcome;
using test_support::parse_json;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

constexpr const char* kHardware = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/";

// Llama3-8B with FSDP on `part`'s node; lines 1-10 are fixed so that tests
// can name them (`extra` from line 11).
std::string scenario(std::string_view part, std::string_view node, std::string_view extra = "") {
  return "name: blackwell_run\n"
         "description: a Blackwell part\n"
         "hardware: " +
         std::string(kHardware) + std::string(part) +
         ".yaml\n"
         "cluster:\n"
         "  nodes: 1\n"
         "  node: " +
         std::string(node) +
         "\n"
         "workload:\n"
         "  model: llama3-8b\n"
         "  local_batch: 1\n"
         "  seq_len: 1024\n" +
         std::string(extra);
}

double tokens_per_s(const std::string& json_path) {
  const JsonValue doc = parse_json(read_all(json_path));
  return doc["tokens_per_s_per_gpu"].number;
}

TEST(BlackwellRun, Mxfp8OnAnH100IsAnErrorAtTheRecipeNamingTheProfile) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", scenario("h100", "hgx_h100", "  float8:\n    recipe: mxfp8\n"));
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, path +
                       ":12:13: error: workload.float8.recipe: expected none, tensorwise, "
                       "rowwise, delayed, current or blockwise on hardware profile h100 (" +
                       kHardware +
                       "h100.yaml), which has no tensor cores that apply block scales "
                       "(gpu.block_scaled_mma false: MXFP8 and NVFP4 need Blackwell's "
                       "block-scaled MMA), found mxfp8\n");
  // `check` refuses it the same way.
  EXPECT_EQ(run({"check", path}).err, r.err);
}

TEST(BlackwellRun, Nvfp4OnAPartWithoutFp4IsAnErrorAtTheRecipe) {
  const ScratchDir dir;
  // A block-scaled part whose FP4 tensor cores are taken away.
  const std::string part =
      dir.write("no_fp4.yaml", "extends: " + std::string(kHardware) +
                                   "b200.yaml\nname: no_fp4\ngpu:\n  peak_fp4_tflops: 0\n");
  std::string text = scenario("b200", "hgx_b200", "  float8:\n    recipe: nvfp4\n");
  text.replace(text.find(std::string(kHardware) + "b200.yaml"), std::string(kHardware).size() + 9,
               part);
  const std::string path = dir.write("s.yaml", text);
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, path +
                       ":12:13: error: workload.float8.recipe: expected none, tensorwise, "
                       "rowwise, delayed, current, blockwise or mxfp8 on hardware profile "
                       "no_fp4 (" +
                       part +
                       "), which has no FP4 tensor cores (gpu.peak_fp4_tflops 0), found nvfp4\n");
  // On an H100 the missing FP4 is named first.
  const std::string h100 =
      dir.write("h100.yaml", scenario("h100", "hgx_h100", "  float8:\n    recipe: nvfp4\n"));
  EXPECT_NE(run({"run", h100})
                .err.find("which has no FP4 tensor cores (gpu.peak_fp4_tflops 0), "
                          "found nvfp4"),
            std::string::npos);
}

TEST(BlackwellRun, EachPrecisionRunsOnB200AndLowerOnesAreFaster) {
  const ScratchDir dir;
  double previous = 0;
  // MXFP8 writes both layouts of every tensor with scales, from bf16 (the
  // weight's too): a little slower than delayed per-tensor FP8; NVFP4's
  // GEMMs at the FP4 peak are the fastest.
  for (const char* recipe : {"none", "mxfp8", "delayed", "nvfp4"}) {
    const std::string path = dir.write(
        std::string(recipe) + ".yaml",
        scenario("b200", "hgx_b200", "  float8:\n    recipe: " + std::string(recipe) + "\n"));
    const std::string json = dir.path() + "/" + recipe + ".json";
    const Outcome r = run({"run", path, "--json", json});
    ASSERT_EQ(r.code, 0) << recipe << ": " << r.err;
    const double tokens = tokens_per_s(json);
    EXPECT_GT(tokens, previous) << recipe;
    previous = tokens;
  }
}

TEST(BlackwellRun, ATensorParallelGroupLargerThanTheNvlinkDomainIsAnError) {
  const ScratchDir dir;
  const std::string b200 =
      dir.write("b200.yaml", scenario("b200", "hgx_b200", "  parallelism:\n    tp: 16\n"));
  const Outcome r = run({"run", b200});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, b200 +
                       ":12:9: error: workload.parallelism.tp: expected a divisor of the GPUs "
                       "per node (8; tensor parallelism stays inside a node's NVLink domain), "
                       "found 16\n");
  // One NVL72 rack is one domain of 72: TP 8 and TP 72 fit, TP 144 does not.
  std::string rack = scenario("gb200", "gb200_nvl72", "  parallelism:\n    tp: 144\n");
  rack.replace(rack.find("  local_batch: 1"), 16, "  local_batch: 2");
  const std::string nvl72 = dir.write("nvl72.yaml", rack);
  EXPECT_NE(run({"check", nvl72}).err.find("expected a divisor of the GPUs per node (72;"),
            std::string::npos);
  const std::string tp8 =
      dir.write("tp8.yaml", scenario("gb200", "gb200_nvl72", "  parallelism:\n    tp: 8\n"));
  EXPECT_EQ(run({"check", tp8}).code, 0) << run({"check", tp8}).err;
}

TEST(BlackwellRun, AJobUsesPartOfEachNvlinkDomain) {
  const ScratchDir dir;
  std::string text = scenario("gb200", "gb200_nvl72");
  text.replace(text.find("  node: gb200_nvl72\n"), 20,
               "  node: gb200_nvl72\n  gpus_used_per_node: 64\n");
  const std::string path = dir.write("s.yaml", text);
  const Outcome r = run({"run", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPUs                      64 (1 node x 64, gb200_nvl72)"),
            std::string::npos)
      << r.out;
  std::string over = text;
  over.replace(over.find("gpus_used_per_node: 64"), 22, "gpus_used_per_node: 96");
  const std::string bad = dir.write("bad.yaml", over);
  const Outcome b = run({"check", bad});
  EXPECT_EQ(b.code, 1);
  EXPECT_EQ(b.err, bad +
                       ":7:23: error: cluster.gpus_used_per_node: expected at most the node's "
                       "72 GPUs, found 96\n");
}

TEST(BlackwellRun, NvlsOffKeepsCollectivesOffNvls) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("b200", "hgx_b200"));
  const Outcome on = run({"collective", path, "--op", "all_reduce", "--gpus", "8", "--min-bytes",
                          "1GiB", "--max-bytes", "1GiB"});
  ASSERT_EQ(on.code, 0) << on.err;
  EXPECT_NE(on.out.find("nvls"), std::string::npos) << on.out;
  const Outcome off = run({"collective", path, "--op", "all_reduce", "--gpus", "8", "--min-bytes",
                           "1GiB", "--max-bytes", "1GiB", "--set", "collectives.nvls=false"});
  ASSERT_EQ(off.code, 0) << off.err;
  EXPECT_EQ(off.out.find("nvls"), std::string::npos) << off.out;
  // Forcing NVLS with it off is a contradiction at the forced key.
  const Outcome both = run(
      {"check", path, "--set", "collectives.nvls=false", "--set", "collectives.algorithm=nvls"});
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.err.find("error: collectives.algorithm: expected auto, ring or tree with "
                          "collectives.nvls false (NVLS is off), found nvls"),
            std::string::npos)
      << both.err;
}

// A scenario that names no node runs on its part's (the profile's `node`);
// with cluster.gpus the job keeps its size on each, so a sweep of the
// hardware key compares parts. Tokens per joule are tokens/s per GPU over
// the profile's powers.
TEST(BlackwellRun, ASweepOfTheHardwareKeyRunsEachPartOnItsOwnNode) {
  const ScratchDir dir;
  std::string text = scenario("b200", "hgx_b200");
  const std::string node = "  nodes: 1\n  node: hgx_b200\n";
  text.replace(text.find(node), node.size(), "  gpus: 16\n");
  const std::string path = dir.write("s.yaml", text);
  const Outcome one = run({"run", path, "--set", "hardware=gb200"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.out.find("GPUs                      16 (1 node x 16, gb200_nvl72)"),
            std::string::npos)
      << one.out;
  const std::string csv = dir.file("parts.csv");
  const Outcome sweep = run({"sweep", path, "--grid", "hardware=b200,gb200", "-o", csv});
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const std::string rows = read_all(csv);
  for (const char* part : {"b200", "gb200"}) {
    const std::string json = dir.file(std::string(part) + ".json");
    ASSERT_EQ(run({"run", path, "--set", "hardware=" + std::string(part), "--json", json}).code, 0);
    const JsonValue doc = parse_json(read_all(json));
    const double tokens = doc["tokens_per_s_per_gpu"].number;
    const double power = std::string_view(part) == "b200" ? 1000 : 1200;
    const double system = std::string_view(part) == "b200" ? 1787.5 : 1667;
    EXPECT_DOUBLE_EQ(doc["tokens_per_joule_gpu"].number, tokens / power) << part;
    EXPECT_DOUBLE_EQ(doc["tokens_per_joule_system"].number, tokens / system) << part;
    // The sweep's row is the run's.
    const size_t at = rows.find("\n" + std::string(part) + ",ok,");
    ASSERT_NE(at, std::string::npos) << rows;
    std::vector<std::string> fields(1);
    for (size_t i = at + 1; i < rows.size() && rows[i] != '\n'; ++i) {
      if (rows[i] == ',') {
        fields.emplace_back();
      } else {
        fields.back() += rows[i];
      }
    }
    ASSERT_GT(fields.size(), 4u);
    EXPECT_EQ(std::stod(fields[4]), tokens) << part;  // hardware, status, reason, step, tokens
  }
}

}  // namespace
}  // namespace clustersim
