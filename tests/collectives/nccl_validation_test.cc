// The tuner's predictions against nccl-tests all_reduce on one DGX H100
// (NVLS on) and one DGX A100, shipped in scenarios/measurements/ (copies of
// the public runs, sources inside). Rows >= 64 KiB: median absolute relative
// error <= 7%, max <= 20%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "collectives/tuner.h"

namespace clustersim::collectives {
namespace {

struct Row {
  int64_t bytes = 0;
  double time_us = 0;
};

std::vector<Row> read_csv(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("op,", 0) == 0) continue;
    std::stringstream ss(line);
    std::string field;
    std::vector<std::string> f;
    while (std::getline(ss, field, ',')) f.push_back(field);
    if (f.size() < 5 || f[0] != "all_reduce") continue;
    rows.push_back(Row{std::stoll(f[3]), std::stod(f[4])});
  }
  return rows;
}

void validate(const std::string& csv, const std::string& profile_file,
              const GroupGeometry& geometry) {
  const std::string path = CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/" + csv;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const HardwareProfile profile =
      load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/" + profile_file);
  std::vector<double> errors;
  std::printf("%s vs %s\n%14s %11s %11s %8s  %s\n", csv.c_str(), profile_file.c_str(), "bytes",
              "meas us", "pred us", "error", "choice");
  for (const Row& row : read_csv(path)) {
    if (row.bytes < 65536) continue;
    const TunedCollective t =
        tune_collective(profile, geometry, CollectiveOp::kAllReduce, row.bytes);
    const double pred_us = t.cost.seconds() * 1e6;
    const double err = (pred_us - row.time_us) / row.time_us;
    errors.push_back(std::abs(err));
    std::printf("%14lld %11.1f %11.1f %+7.1f%%  %s/%s/%d\n", static_cast<long long>(row.bytes),
                row.time_us, pred_us, err * 100, to_string(t.choice.algorithm),
                to_string(t.choice.protocol), t.choice.channels);
  }
  ASSERT_GE(errors.size(), 10u);
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  const double median = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  std::printf("cases %zu, median |error| %.2f%%, max |error| %.2f%%\n", n, median * 100,
              errors.back() * 100);
  EXPECT_LE(median, 0.07);
  EXPECT_LE(errors.back(), 0.20);
}

TEST(NcclValidation, DgxH100AllReduceNvls) {
  validate("dgx_h100_all_reduce_8gpu.csv", "h100.yaml", GroupGeometry{8, 1, 8, 450e9, 50e9, true});
}

TEST(NcclValidation, DgxA100AllReduce) {
  validate("dgx_a100_all_reduce_8gpu.csv", "a100.yaml", GroupGeometry{8, 1, 8, 300e9, 25e9, false});
}

}  // namespace
}  // namespace clustersim::collectives
