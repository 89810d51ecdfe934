#include "calibration/measurement_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/config_errors.h"
#include "tests/support/gzip_input.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::calibration {
namespace {

using ::testing::HasSubstr;

const std::string kSource = CLUSTERSIM_SOURCE_DIR;

TEST(MeasurementFiles, KindsAreRecognisedByContent) {
  const MeasurementSet set = read_measurement_files({
      kSource + "/scenarios/measurements/compute/gemm.csv",
      kSource + "/scenarios/measurements/compute/attention.csv",
      kSource + "/scenarios/measurements/dgx_h100_all_reduce_8gpu.csv",
      kSource + "/tests/calibration/data/h100_2node_all_gather_perf.txt",
      kSource + "/tests/calibration/fixtures/kineto_two_steps.json",
  });
  ASSERT_EQ(set.files.size(), 5u);
  EXPECT_EQ(set.files[0].kind, MeasurementKind::kGemm);
  EXPECT_EQ(set.files[0].rows, 53);
  EXPECT_EQ(set.files[1].kind, MeasurementKind::kAttention);
  EXPECT_EQ(set.files[1].rows, 39);
  EXPECT_EQ(set.files[2].kind, MeasurementKind::kCollective);
  EXPECT_EQ(set.files[3].kind, MeasurementKind::kCollective);  // nccl-tests output
  EXPECT_EQ(set.files[4].kind, MeasurementKind::kKinetoTrace);
  EXPECT_EQ(set.gemm.size(), 53u);
  EXPECT_EQ(set.attention.size(), 39u);
  EXPECT_EQ(set.collectives.size(), static_cast<size_t>(set.files[2].rows + set.files[3].rows));
  EXPECT_EQ(set.collectives.back().op, "all_gather");  // from the file name
  EXPECT_EQ(set.kineto_traces, std::vector<std::string>{set.files[4].path});
  EXPECT_EQ(measurement_kind_name(MeasurementKind::kKinetoTrace), "kineto trace");
}

TEST(MeasurementFiles, AGzippedFileIsRecognisedByItsDecompressedContent) {
  const test_support::ScratchDir dir;
  const auto gzipped = [&](const std::string& from, const std::string& name) {
    return dir.write(name, test_support::gzip_bytes(test_support::read_all(kSource + from)));
  };
  const std::string trace =
      gzipped("/tests/calibration/fixtures/kineto_two_steps.json", "trace_rank0.json.gz");
  // The magic bytes decide, not the name.
  const std::string unnamed = gzipped("/tests/calibration/fixtures/kineto_two_steps.json", "trace");
  const std::string gemm = gzipped("/scenarios/measurements/compute/gemm.csv", "gemm.csv.gz");
  const MeasurementSet set = read_measurement_files({trace, unnamed, gemm});
  ASSERT_EQ(set.files.size(), 3u);
  EXPECT_EQ(set.files[0].kind, MeasurementKind::kKinetoTrace);
  EXPECT_EQ(set.files[1].kind, MeasurementKind::kKinetoTrace);
  EXPECT_EQ(set.kineto_traces, (std::vector<std::string>{trace, unnamed}));
  EXPECT_EQ(set.files[2].kind, MeasurementKind::kGemm);
  EXPECT_EQ(set.files[2].rows, 53);
}

TEST(MeasurementFiles, ACorruptGzippedFileIsReportedWithTheOthers) {
  const test_support::ScratchDir dir;
  const std::string gz = test_support::gzip_bytes(
      test_support::read_all(kSource + "/tests/calibration/fixtures/kineto_two_steps.json"));
  const std::string cut = dir.write("trace.json.gz", gz.substr(0, gz.size() / 2));
  const std::string error = test_support::config_error([&] {
    read_measurement_files({cut, dir.file("missing.csv")});
  });
  EXPECT_THAT(error, HasSubstr(cut + ": error: expected a gzip stream, found a truncated one"));
  EXPECT_THAT(error, HasSubstr(dir.file("missing.csv") + ": error: cannot read the file"));
}

TEST(MeasurementFiles, EveryFilesProblemsAreReportedTogether) {
  const test_support::ScratchDir dir;
  const std::string gemm = dir.write("g.csv", "hardware,dtype,m,n,k,tflops\nH100,bf16,0,1,1,1\n");
  const std::string collective =
      dir.write("c.csv", "op,gpus,gpus_per_node,bytes,time_us\nall_reduce,8,8,-1,3\n");
  try {
    read_measurement_files({gemm, collective, dir.file("missing.csv")});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr(gemm + ":2:11: error: m: expected a positive integer"));
    EXPECT_THAT(e.what(), HasSubstr(collective + ":2:"));
    EXPECT_THAT(e.what(),
                HasSubstr(dir.file("missing.csv") + ": error: cannot read the file: no such file"));
  }
}

}  // namespace
}  // namespace clustersim::calibration
