// The sweep's rows for points that could not be simulated: a failed point
// (clustersim's own error) is a row like a skipped one, with its reason and
// no figures.
#include "sweep/sweep_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace clustersim::cli {
namespace {

TEST(SweepRows, FailedAndSkippedRowsKeepTheReasonAndLeaveTheFiguresEmpty) {
  const SweepPoint point{{"8", "a,b"}, ""};
  EXPECT_EQ(failed_row(point, "internal error: invariant 'x' failed", false),
            "8,\"a,b\",failed,internal error: invariant 'x' failed,,,,,,,,,,,,,,,,,,");
  EXPECT_EQ(skipped_row(point, "tp: expected \"2\"", true),
            "8,\"a,b\",skipped,\"tp: expected \"\"2\"\"\",,,,,,,,,,,,,,,,,,,,");
  const std::vector<std::string> fields = csv_split(failed_row(point, "why, exactly", false));
  ASSERT_EQ(fields.size(), 2 + kFigureColumns.size());
  EXPECT_EQ(fields[1], "a,b");
  EXPECT_EQ(fields[2 + kStatus], "failed");
  EXPECT_EQ(fields[2 + kReason], "why, exactly");
  EXPECT_FALSE(simulated_status("failed"));
  EXPECT_FALSE(simulated_status("skipped"));
  EXPECT_TRUE(simulated_status("out_of_memory"));
}

}  // namespace
}  // namespace clustersim::cli
