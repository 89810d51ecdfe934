// The sweep's stdout for points that could not be simulated: a failed point
// (clustersim's own error) is listed and counted apart from the skipped
// ones, and never ranked.
#include "cli/sweep_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sweep/sweep_rows.h"

namespace clustersim::cli {
namespace {

TEST(SweepReport, FailedPointsAreCountedListedAndNotRanked) {
  const std::vector<SweepAxis> axes = {{"workload.parallelism.tp", {"1", "2", "4"}, false}};
  const std::vector<SweepPoint> points = {{{"1"}, ""}, {{"2"}, ""}, {{"4"}, ""}};
  const std::vector<std::string> rows = {
      "1,ok,,0.5,1000,100,0.25,1073741824,true,0.01",
      failed_row(points[1], "internal error: invariant 'flows' failed", false),
      skipped_row(points[2], "workload.parallelism.tp: expected a divisor", false)};
  const std::string report = sweep_report({"s.yaml", axes, points, rows, 0, "", 10, false});
  EXPECT_EQ(report,
            "# clustersim sweep: s.yaml\n"
            "points: 3 (1 ok, 0 out of memory, 1 skipped, 1 failed)\n"
            "skipped:\n"
            "  workload.parallelism.tp=4: workload.parallelism.tp: expected a divisor\n"
            "failed:\n"
            "  workload.parallelism.tp=2: internal error: invariant 'flows' failed\n"
            "\n"
            "best by tokens/s per GPU (fitting in memory first):\n"
            "#  tp  step s  tokens/s/GPU    MFU  peak GiB  fits\n"
            "1   1  0.5000        1000.0  25.0%      1.00   yes\n");
}

TEST(SweepReport, WithoutFailuresTheCountsSayNothingOfThem) {
  const std::vector<SweepAxis> axes = {{"workload.local_batch", {"1"}, false}};
  const std::vector<SweepPoint> points = {{{"1"}, ""}};
  const std::vector<std::string> rows = {skipped_row(points[0], "no", false)};
  const std::string report =
      sweep_report({"s.yaml", axes, points, rows, 1, "o.csv.partial", 10, false});
  EXPECT_EQ(report,
            "# clustersim sweep: s.yaml\n"
            "points: 1 (0 ok, 0 out of memory, 1 skipped; 1 resumed from o.csv.partial)\n"
            "skipped:\n"
            "  workload.local_batch=1: no\n"
            "\n"
            "best by tokens/s per GPU (fitting in memory first):\n"
            "no point could be simulated\n");
}

}  // namespace
}  // namespace clustersim::cli
