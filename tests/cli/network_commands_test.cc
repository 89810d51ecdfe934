// The network commands end to end (run_clustersim in-process): `collective`
// on the DGX H100 scenario, its bad input, and `validate` against the
// public nccl-tests runs shipped in scenarios/measurements/.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

constexpr const char* kSource = CLUSTERSIM_SOURCE_DIR;
constexpr const char* kDgxH100 = CLUSTERSIM_SOURCE_DIR "/scenarios/dgx_h100.yaml";
constexpr const char* kDgxA100 = CLUSTERSIM_SOURCE_DIR "/scenarios/dgx_a100.yaml";
constexpr const char* kData = CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line, char separator = ' ') {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, separator);) {
    if (!field.empty() || separator != ' ') fields.push_back(field);
  }
  return fields;
}

// Table rows (not comments) of `collective` output.
std::vector<std::string> data_rows(const std::string& out) {
  std::vector<std::string> rows;
  for (const std::string& line : lines_of(out)) {
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  }
  return rows;
}

// ---- collective ----

// 16 GPUs on 2 DGX H100 nodes, 1 GiB all_reduce, ring Simple, 32 channels:
//  * busbw of the links: min(NVLink 450 x 0.8222 = 369.99, 8 NICs x 50 x 0.94
//    = 376) = 369.99 GB/s, i.e. NVLink-bound just under the NICs;
//  * latency: 8.4 + (2 x 15 - 2) x 3.4 + 2 x 14 = 131.6 us;
//  * transfer: 2^30 x 2 x 15/16 / 369.99e9 = 5441.40 us; total 5573.00 us;
//  * busbw = 2^30 x 1.875 / 5573.00 us = 361.25 GB/s.
TEST(CollectiveCommand, SixteenH100sAtOneGiB) {
  const Outcome r =
      run({"collective", kDgxH100, "--gpus", "16", "--min-bytes", "1GiB", "--max-bytes", "1GiB"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> rows = data_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  const std::vector<std::string> f = fields_of(rows[0]);
  ASSERT_EQ(f.size(), 9u) << rows[0];
  EXPECT_EQ(f[0], "1073741824");
  EXPECT_EQ(f[1], "268435456");
  EXPECT_EQ(f[2], "float");
  const double time_us = std::stod(f[3]);
  const double algbw = std::stod(f[4]);
  const double busbw = std::stod(f[5]);
  EXPECT_NEAR(time_us, 5573.0, 0.1);
  EXPECT_NEAR(busbw, 361.25, 0.01);
  EXPECT_NEAR(algbw, busbw * 16 / 30, 0.01);
  EXPECT_GE(busbw, 300);
  EXPECT_LE(busbw, 380);
  EXPECT_EQ(f[6], "ring");
  EXPECT_EQ(f[7], "Simple");
  EXPECT_EQ(f[8], "32");
  EXPECT_NE(r.out.find("on 16 GPUs (2 node(s) x 8)"), std::string::npos) << r.out;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines.back().starts_with("# Avg bus bandwidth")) << lines.back();
  EXPECT_TRUE(lines.back().ends_with("361.253")) << lines.back();
}

TEST(CollectiveCommand, TimesGrowWithSizeAndBusbwStaysUnderTheLinks) {
  const Outcome r =
      run({"collective", kDgxH100, "--gpus", "16", "--min-bytes", "8", "--max-bytes", "8GiB"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> rows = data_rows(r.out);
  ASSERT_EQ(rows.size(), 31u);  // 2^3 .. 2^33
  double previous_us = 0;
  for (const std::string& row : rows) {
    const std::vector<std::string> f = fields_of(row);
    ASSERT_EQ(f.size(), 9u) << row;
    const double us = std::stod(f[3]);
    EXPECT_GE(us, previous_us) << row;
    EXPECT_LE(std::stod(f[5]), 370.0) << row;  // the NVLink ring ceiling
    previous_us = us;
  }
}

TEST(CollectiveCommand, CsvHasTheHeaderAndOneLinePerRow) {
  const ScratchDir dir;
  const std::string csv = dir.file("out.csv");
  const Outcome r = run({"collective", kDgxH100, "--gpus", "16", "--min-bytes", "1MiB",
                         "--max-bytes", "4MiB", "--csv", csv});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> lines = lines_of(read_all(csv));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "bytes,elements,type,time_us,algbw_GBps,busbw_GBps,algo,proto,channels");
  const int64_t sizes[] = {1 << 20, 2 << 20, 4 << 20};
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> f = fields_of(lines[i], ',');
    ASSERT_EQ(f.size(), 9u) << lines[i];
    EXPECT_EQ(f[0], std::to_string(sizes[i - 1]));
    EXPECT_EQ(f[1], std::to_string(sizes[i - 1] / 4));
    EXPECT_EQ(f[2], "float");
    EXPECT_GT(std::stod(f[3]), 0);
  }
  // The CSV and the table agree on the rows.
  const std::vector<std::string> rows = data_rows(r.out);
  ASSERT_EQ(rows.size(), 3u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string> table = fields_of(rows[i]);
    const std::vector<std::string> f = fields_of(lines[i + 1], ',');
    EXPECT_NEAR(std::stod(f[3]), std::stod(table[3]), 0.006);
    EXPECT_NEAR(std::stod(f[5]), std::stod(table[5]), 0.006);
    EXPECT_EQ(f[6], table[6]);
    EXPECT_EQ(f[7], table[7]);
    EXPECT_EQ(f[8], table[8]);
  }
}

// An all_gather of 16 ranks of float needs 64 bytes (one element a rank):
// 8, 16 and 32 bytes round up to it, which is one row, not four.
TEST(CollectiveCommand, SizesThatRoundUpToTheSameBufferAreOneRow) {
  const Outcome r = run({"collective", kDgxH100, "--op", "all_gather", "--gpus", "16",
                         "--min-bytes", "8", "--max-bytes", "256"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::vector<std::string> sizes;
  for (const std::string& row : data_rows(r.out)) sizes.push_back(fields_of(row)[0]);
  EXPECT_EQ(sizes, (std::vector<std::string>{"64", "128", "256"})) << r.out;
}

TEST(CollectiveCommand, MoreGpusThanTheClusterIsAnInputError) {
  const Outcome r = run({"collective", kDgxH100, "--gpus", "9000"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--gpus 9000"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has 8192 GPUs"), std::string::npos) << r.err;
}

TEST(CollectiveCommand, MisspeltOpIsAUsageErrorWithASuggestion) {
  const Outcome r = run({"collective", kDgxH100, "--op", "all_reduse"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("found 'all_reduse'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'all_reduce'"), std::string::npos) << r.err;
}

TEST(CollectiveCommand, NvlsAcrossNodesIsAnInputErrorWithTheReason) {
  const Outcome r = run({"collective", kDgxH100, "--algo", "nvls", "--gpus", "16"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("nvls needs one node (group spans 2)"), std::string::npos) << r.err;
}

TEST(CollectiveCommand, UnevenGroupIsAnInputError) {
  const Outcome r = run({"collective", kDgxH100, "--gpus", "12"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find("--gpus 12"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("uneven"), std::string::npos) << r.err;
}

TEST(CollectiveCommand, ScenarioWithoutHardwareNamesTheKey) {
  const std::string scenario = std::string(kSource) + "/scenarios/examples/cluster_small.yaml";
  const Outcome r = run({"collective", scenario});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_NE(r.err.find(scenario + ":1:1: error: hardware: missing"), std::string::npos) << r.err;
}

// One GPU moves nothing: time 0, bandwidths 0, not a crash on 0 s.
TEST(CollectiveCommand, OneGpuReportsZeroBandwidth) {
  const Outcome r =
      run({"collective", kDgxH100, "--gpus", "1", "--min-bytes", "1MiB", "--max-bytes", "1MiB"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> rows = data_rows(r.out);
  ASSERT_EQ(rows.size(), 1u);
  const std::vector<std::string> f = fields_of(rows[0]);
  ASSERT_EQ(f.size(), 9u);
  EXPECT_EQ(f[4], "0.00");
  EXPECT_EQ(f[5], "0.00");
}

// Concurrent groups on a non-blocking fabric, one per node: no contention,
// so the same table as one group.
TEST(CollectiveCommand, ConcurrentGroupsOnSeparateNodesMatchOneGroup) {
  const std::vector<std::string> base{"collective", kDgxH100,      "--min-bytes",
                                      "64MiB",      "--max-bytes", "1GiB"};
  std::vector<std::string> concurrent = base;
  concurrent.insert(concurrent.end(), {"--concurrent", "4"});
  const Outcome one = run(base);
  const Outcome four = run(concurrent);
  ASSERT_EQ(one.code, kExitOk) << one.err;
  ASSERT_EQ(four.code, kExitOk) << four.err;
  EXPECT_EQ(data_rows(one.out), data_rows(four.out));
}

// ---- validate ----

struct Summary {
  int cases = 0;
  double median = 0;
  double max = 0;
};

// The number after `key` in `line`, e.g. "median_abs_error=" in the summary.
double number_after(const std::string& line, const std::string& key) {
  const size_t at = line.find(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no '" << key << "' in: " << line;
    return -1;
  }
  return std::stod(line.substr(at + key.size()));
}

// The last line: "cases=19 median_abs_error=2.23% max_abs_error=13.97%".
Summary summary_of(const std::string& out) {
  const std::vector<std::string> lines = lines_of(out);
  if (lines.empty() || !lines.back().starts_with("cases=")) {
    ADD_FAILURE() << "no summary line in:\n" << out;
    return {};
  }
  const std::string& last = lines.back();
  return Summary{static_cast<int>(number_after(last, "cases=")),
                 number_after(last, " median_abs_error="), number_after(last, " max_abs_error=")};
}

void expect_validates(const std::string& scenario, const std::string& csv) {
  const std::string path = kData + csv;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const Outcome r = run({"validate", scenario, path, "--min-bytes", "65536"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const Summary s = summary_of(r.out);
  EXPECT_EQ(s.cases, 19);
  EXPECT_LE(s.median, 7.0);
  EXPECT_LE(s.max, 20.0);
}

TEST(ValidateCommand, DgxH100WithinTheAcceptanceFigures) {
  expect_validates(kDgxH100, "dgx_h100_all_reduce_8gpu.csv");
}

TEST(ValidateCommand, DgxA100WithinTheAcceptanceFigures) {
  expect_validates(kDgxA100, "dgx_a100_all_reduce_8gpu.csv");
}

TEST(ValidateCommand, MalformedCsvNamesFileAndLine) {
  const ScratchDir dir;
  const std::string csv =
      dir.write("bad.csv",
                "op,gpus,gpus_per_node,bytes,time_us\nall_reduce,8,8,1048576,30.5\n"
                "all_reduce,8,8,abc,12\n");
  const Outcome r = run({"validate", kDgxH100, csv});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(csv + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'abc'"), std::string::npos) << r.err;
}

TEST(ValidateCommand, RowWithMoreGpusThanTheScenarioIsAnInputError) {
  const ScratchDir dir;
  const std::string scenario =
      dir.write("one_node.yaml", "name: one_node\nhardware: " + std::string(kSource) +
                                     "/scenarios/hardware/h100.yaml\ncluster:\n  nodes: 1\n"
                                     "  node: hgx_h100\n  fabric:\n    type: rail_optimized\n");
  const std::string csv =
      dir.write("rows.csv",
                "op,gpus,gpus_per_node,bytes,time_us\nall_reduce,8,8,1048576,30.5\n"
                "all_reduce,16,8,1048576,60.0\n");
  const Outcome r = run({"validate", scenario, dir.file("rows.csv"), "--min-bytes", "1"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(csv + ":3:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected at most the scenario's 8 GPUs, found 16"), std::string::npos)
      << r.err;
}

// A forced choice the tuner cannot run: at the scenario key when the
// scenario forced it (once, naming the first row), at the row's algo column
// when the row did.
TEST(ValidateCommand, ForcedChoiceThatCannotRunNamesWhoForcedIt) {
  const ScratchDir dir;
  const std::string scenario =
      dir.write("tree.yaml", "name: tree\nhardware: " + std::string(kSource) +
                                 "/scenarios/hardware/h100.yaml\ncluster:\n  nodes: 2\n"
                                 "  node: hgx_h100\ncollectives:\n  algorithm: tree\n");
  const std::string gathers = dir.write("ag.csv",
                                        "op,gpus,gpus_per_node,bytes,time_us\n"
                                        "all_gather,16,8,1048576,60.0\n"
                                        "all_gather,16,8,2097152,90.0\n");
  const Outcome r = run({"validate", scenario, gathers, "--min-bytes", "1"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, scenario +
                       ":7:14: error: collectives.algorithm: no valid way to run all_gather on 16 "
                       "ranks (2 nodes) with algorithm tree: tree runs only all_reduce (not "
                       "all_gather) (for the row at " +
                       gathers + ":2:1)\n");

  const std::string plain = dir.write(
      "plain.yaml", "name: plain\nhardware: " + std::string(kSource) +
                        "/scenarios/hardware/h100.yaml\ncluster:\n  nodes: 2\n  node: hgx_h100\n");
  const std::string nvls = dir.write("nvls.csv",
                                     "op,gpus,gpus_per_node,bytes,time_us,algo\n"
                                     "all_reduce,8,8,1048576,30.0,NVLS\n"
                                     "all_reduce,16,8,1048576,60.0,NVLS\n");
  const Outcome row = run({"validate", plain, nvls, "--min-bytes", "1"});
  EXPECT_EQ(row.code, kExitError);
  EXPECT_EQ(row.err, nvls +
                         ":3:1: error: algo: no valid way to run all_reduce on 16 ranks (2 nodes) "
                         "with algorithm nvls: nvls needs one node (group spans 2)\n");
}

}  // namespace
}  // namespace clustersim::cli
