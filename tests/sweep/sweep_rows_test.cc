// The sweep's rows for points that could not be simulated: a failed point
// (clustersim's own error) is a row like a skipped one, with its reason and
// no figures.
#include "sweep/sweep_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config_error.h"

namespace clustersim::cli {
namespace {

TEST(SweepRows, FailedAndSkippedRowsKeepTheReasonAndLeaveTheFiguresEmpty) {
  const SweepPoint point{{"8", "a,b"}, ""};
  EXPECT_EQ(failed_row(point, "internal error: invariant 'x' failed", false),
            "8,\"a,b\",failed,internal error: invariant 'x' failed,,,,,,,,,,,,,,,,,,,,");
  EXPECT_EQ(skipped_row(point, "tp: expected \"2\"", true),
            "8,\"a,b\",skipped,\"tp: expected \"\"2\"\"\",,,,,,,,,,,,,,,,,,,,,,");
  const std::vector<std::string> fields = csv_split(failed_row(point, "why, exactly", false));
  ASSERT_EQ(fields.size(), 2 + kFigureColumns.size());
  EXPECT_EQ(fields[1], "a,b");
  EXPECT_EQ(fields[2 + kStatus], "failed");
  EXPECT_EQ(fields[2 + kReason], "why, exactly");
  // The offsets name the columns they read.
  EXPECT_EQ(kFigureColumns[kTokens], "tokens_per_s_per_gpu");
  EXPECT_EQ(kFigureColumns[kFits], "fits_in_memory");
  EXPECT_EQ(kFigureColumns[kTokensPerJouleGpu], "tokens_per_joule_gpu");
  EXPECT_EQ(kFigureColumns[kTokensPerJouleSystem], "tokens_per_joule_system");
  EXPECT_EQ(kFigureColumns.size(), kEttr);
  EXPECT_EQ(kCampaignColumns[kTimeToTrain - kEttr], "time_to_train_days");
  EXPECT_FALSE(simulated_status("failed"));
  EXPECT_FALSE(simulated_status("skipped"));
  EXPECT_TRUE(simulated_status("out_of_memory"));
}

// A point's reason is its diagnostics without their places, one after
// another, each saying when the value it rejects is the key's default.
TEST(SweepRows, AReasonSaysWhenTheRejectedValueIsTheDefault) {
  sim::Diagnostic defaulted;
  defaulted.where = sim::SourceLocation{"s.yaml", 3, 3, true};
  defaulted.key_path = "workload.pipeline.virtual_stages";
  defaulted.message = "expected 2 with schedule zbv, found 1";
  sim::Diagnostic given = defaulted;
  given.where = sim::SourceLocation{"--set workload.parallelism.cp=3", 0, 0};
  given.key_path = "workload.parallelism.cp";
  given.message = "expected 1";
  sim::Diagnostic keyless = given;
  keyless.key_path.clear();
  keyless.message = "expected a mapping";
  const sim::ConfigError e({defaulted, given, keyless});
  EXPECT_EQ(reason_of(e),
            "workload.pipeline.virtual_stages (not set: its default): expected 2 with schedule "
            "zbv, found 1; workload.parallelism.cp: expected 1; expected a mapping");
}

}  // namespace
}  // namespace clustersim::cli
