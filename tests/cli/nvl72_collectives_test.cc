// All-reduce on GB200 NVL72 racks against CoreWeave's published nccl-tests
// (scenarios/measurements/gb200_nvl72_all_reduce.csv): one rack of 72 GPUs
// is what gb200.yaml's NVLS constants were fitted to; two racks are not
// fitted. docs/network.md tells the twenty-rack rows, which the model does
// not yet meet.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

using test_support::Outcome;
using test_support::run;

const std::string kSource = CLUSTERSIM_SOURCE_DIR;

struct Row {
  int gpus = 0;
  double bytes = 0;
  double error = 0;  // predicted / measured time - 1
  std::string algorithm;
};

// The rows of `validate`'s collective table.
std::vector<Row> validated_rows() {
  const Outcome r = run({"validate", kSource + "/scenarios/gb200_nvl72.yaml",
                         kSource + "/scenarios/measurements/gb200_nvl72_all_reduce.csv"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<Row> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string op;
    Row row;
    double per_node = 0, measured = 0, predicted = 0;
    std::string error;
    if (!(fields >> op >> row.gpus >> per_node >> row.bytes >> measured >> predicted >> error >>
          row.algorithm) ||
        op != "all_reduce") {
      continue;
    }
    row.error = std::stod(error.substr(0, error.size() - 1)) / 100;
    rows.push_back(row);
  }
  return rows;
}

TEST(Nvl72Collectives, OneRackIsFittedAndTwoRacksArePredictedWithinThirteenPercent) {
  const std::vector<Row> rows = validated_rows();
  ASSERT_EQ(rows.size(), 17u);
  int one_rack = 0, two_racks = 0;
  for (const Row& row : rows) {
    if (row.gpus == 72 && row.bytes >= 1073741824) {
      // Fitted: NVLS inside the rack, 1 GiB to 8 GiB (512 MiB was the fit's
      // outlier and runs as a ring).
      EXPECT_EQ(row.algorithm, "nvls") << row.bytes;
      EXPECT_LT(std::abs(row.error), 0.10) << row.bytes;
      ++one_rack;
    }
    if (row.gpus == 144) {
      EXPECT_LT(std::abs(row.error), 0.13) << row.bytes;
      ++two_racks;
    }
  }
  EXPECT_EQ(one_rack, 4);
  EXPECT_EQ(two_racks, 6);
}

}  // namespace
}  // namespace clustersim
