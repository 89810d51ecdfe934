#include "calibration/collective_measurements.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace clustersim::calibration {
namespace {

const std::string kData = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibration/data/";

std::string error_of(const auto& fn) {
  try {
    fn();
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CollectiveCsv, ReadsRowsWithTimeOrBusbw) {
  const auto rows = parse_collective_csv(
      "# comment\n"
      "op,gpus,gpus_per_node,bytes,time_us,algbw_GBps,busbw_GBps\n"
      "all_reduce,8,8,65536,46.80,1.40,2.45\n"
      "all_gather,16,8,1048576,,,15.5\n",
      "m.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].op, "all_reduce");
  EXPECT_EQ(rows[0].gpus, 8);
  EXPECT_EQ(rows[0].gpus_per_node, 8);
  EXPECT_EQ(rows[0].bytes, 65536);
  EXPECT_DOUBLE_EQ(*rows[0].time_us, 46.80);
  EXPECT_DOUBLE_EQ(*rows[0].busbw_GBps, 2.45);
  EXPECT_EQ(rows[0].where.to_string(), "m.csv:3:1");
  EXPECT_FALSE(rows[1].time_us.has_value());
  EXPECT_DOUBLE_EQ(*rows[1].busbw_GBps, 15.5);
}

TEST(CollectiveCsv, ReportsEveryBadFieldWithLineAndColumn) {
  const std::string message = error_of([] {
    parse_collective_csv(
        "op,gpus,gpus_per_node,bytes,time_us\n"
        "all_reduse,8,8,64,1.0\n"
        "all_reduce,eight,8,64,1.0\n"
        "all_reduce,8,8,64,-3\n"
        "all_reduce,8,16,64,1.0\n",
        "m.csv");
  });
  EXPECT_EQ(message,
            "m.csv:2:1: error: op: expected one of all_reduce, all_gather, reduce_scatter, "
            "broadcast, found 'all_reduse'\n"
            "m.csv:3:12: error: gpus: expected a positive integer, found 'eight'\n"
            "m.csv:4:19: error: time_us: expected a positive number, found '-3'\n"
            "m.csv:5:14: error: gpus_per_node: expected at most gpus (8), found 16");
}

TEST(CollectiveCsv, RejectsAHeaderWithoutRequiredColumns) {
  EXPECT_EQ(error_of([] { parse_collective_csv("op,gpus,bytes,time_us\n", "m.csv"); }),
            "m.csv:1:1: error: expected a header with the column 'gpus_per_node' "
            "(op,gpus,gpus_per_node,bytes,time_us...), found 'op,gpus,bytes,time_us'");
  EXPECT_EQ(error_of([] { parse_collective_csv("# only a comment\n", "m.csv"); }),
            "m.csv:1:1: error: expected a CSV header and rows, found no data");
}

// Found by tests/fuzz/measurements_fuzz: a column named twice, then a row
// as long as the distinct names, was read past its end.
TEST(CollectiveCsv, AColumnNamedTwiceIsAnError) {
  EXPECT_EQ(error_of([] {
              parse_collective_csv(
                  "op,op,gpus,gpus_per_node,bytes,time_us\nall_reduce,8,8,1024,5\n", "m.csv");
            }),
            "m.csv:1:4: error: expected each column once in the header, found 'op' again");
}

// Found by tests/fuzz/measurements_fuzz: a header with time after busbw, and
// a row that ends between them, was read past its end.
TEST(NcclTestsOutput, ARowShorterThanItsTimeColumnIsAnError) {
  const std::string text =
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x0] GPU\n"
      "#       size         count      type   redop    root   algbw   busbw  time #wrong\n"
      "        1024           256     float     sum      -1    0.10    0.10\n";
  EXPECT_EQ(error_of([&] { parse_nccl_tests_output(text, "ar.txt", "all_reduce"); }),
            "ar.txt:3:1: error: expected at least 8 columns (size, time and busbw), found 7");
}

TEST(NcclTestsOutput, ReadsTwoNodeAllGatherAsPrinted) {
  const auto rows = read_collective_measurements(kData + "h100_2node_all_gather_perf.txt");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].op, "all_gather");  // from the file name
  EXPECT_EQ(rows[0].gpus, 16);
  EXPECT_EQ(rows[0].gpus_per_node, 8);
  EXPECT_EQ(rows[0].bytes, 1048576);
  EXPECT_DOUBLE_EQ(*rows[0].time_us, 61.52);  // out-of-place, not in-place
  EXPECT_DOUBLE_EQ(*rows[0].busbw_GBps, 15.98);
  EXPECT_EQ(rows[2].bytes, 4194304);
  EXPECT_DOUBLE_EQ(*rows[2].time_us, 140.2);
}

TEST(NcclTestsOutput, ReadsTheOldLayoutWithoutRootAndGroup) {
  const auto rows = read_collective_measurements(kData + "v100_2node_allreduce_old_format.txt");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op, "all_reduce");
  EXPECT_EQ(rows[0].gpus, 2);
  EXPECT_EQ(rows[0].gpus_per_node, 1);
  EXPECT_DOUBLE_EQ(*rows[0].time_us, 1.2e6);
  EXPECT_DOUBLE_EQ(*rows[0].busbw_GBps, 1.09);
}

TEST(NcclTestsOutput, NeedsToKnowTheCollective) {
  const std::string text =
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x0] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.10      0\n";
  EXPECT_EQ(error_of([&] { parse_nccl_tests_output(text, "run.txt", ""); }),
            "run.txt: error: cannot tell which collective this nccl-tests output measured "
            "(nccl-tests does not print it); expected one of all_reduce, all_gather, "
            "reduce_scatter, broadcast in the file name or given explicitly, found ''");
  EXPECT_EQ(parse_nccl_tests_output(text, "run.txt", "reduce_scatter").at(0).op, "reduce_scatter");
}

TEST(CollectiveMeasurements, AFileOfNeitherLayoutIsNamedAsNotAMeasurementFile) {
  // Not "cannot tell which collective": a text file is not nccl-tests output.
  const std::string expected =
      "notes.txt: error: expected a measurement file: a GEMM, attention or collective CSV (a "
      "header line naming its columns), nccl-tests output (its table header '#  size  count  "
      "type ...  time  algbw  busbw') or a Kineto trace (JSON), found none of these";
  EXPECT_EQ(error_of([] { parse_collective_measurements("hosts\n# a comment\n", "notes.txt"); }),
            expected);
  EXPECT_EQ(error_of([] { parse_collective_measurements("", "notes.txt"); }), expected);
  // With its table header the same file is nccl-tests output, read as such.
  EXPECT_TRUE(error_of([] {
                parse_collective_measurements("#  size count type redop root time algbw busbw\n",
                                              "notes.txt");
              }).starts_with("notes.txt: error: cannot tell which collective"));
}

TEST(NcclTestsOutput, MalformedRowsNameLineAndColumn) {
  const std::string text =
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x0] GPU\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    fast    0.10    0.10      0\n"
      "        2048           512     float     sum\n";
  EXPECT_EQ(error_of([&] { parse_nccl_tests_output(text, "ar.txt", "all_reduce"); }),
            "ar.txt:3:57: error: time: expected a positive time in us, found 'fast'\n"
            "ar.txt:4:1: error: expected at least 8 columns (size, time and busbw), found 4");
}

TEST(NcclTestsOutput, NeedsTheRankLines) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.10      0\n";
  EXPECT_EQ(error_of([&] { parse_nccl_tests_output(text, "ar.txt", "all_reduce"); }),
            "ar.txt:1:1: error: expected the '#  Rank N Group G Pid P on HOST device D' lines "
            "nccl-tests prints, found none: cannot tell how many GPUs ran");
}

TEST(CollectiveMeasurements, MissingFileAndDirectory) {
  EXPECT_EQ(error_of([] { read_collective_measurements("/nonexistent/m.csv"); }),
            "/nonexistent/m.csv: error: cannot read the file: no such file");
  EXPECT_EQ(error_of([] { read_collective_measurements(kData); }),
            kData + ": error: cannot read the file: is a directory");
}

TEST(CollectiveMeasurements, ReadsTheReferenceData) {
  const std::string path =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/measurements/dgx_h100_all_reduce_8gpu.csv";
  const auto rows = read_collective_measurements(path);
  ASSERT_GE(rows.size(), 20u);
  EXPECT_EQ(rows.front().bytes, 8);
  EXPECT_DOUBLE_EQ(*rows.front().time_us, 13.67);
  EXPECT_EQ(rows.front().gpus, 8);
}

}  // namespace
}  // namespace clustersim::calibration
