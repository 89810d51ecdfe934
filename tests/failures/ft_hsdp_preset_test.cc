// The ft_hsdp_100k preset against the paper's figures: the growth law is
// fitted to its two anchor points (so reproducing them is a fit staying
// fitted, not agreement), the shares of the root-cause table, and the blast
// radii FT-HSDP gives them.
#include "failures/ft_hsdp_preset.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/failure_fixtures.h"

namespace clustersim::failures {
namespace {

using test_support::h100_job;

TEST(FtHsdpPreset, FittedLawPassesThroughThePapersTwoPoints) {
  // One failure per 18 min on 12,288 nodes: 80 a day, 6.5104 per 1,000
  // node-days; 2.3 at 4,096 nodes. a = ln(6.5104 / 2.3) / ln 3 = 0.94710.
  EXPECT_NEAR(ft_hsdp_growth_exponent(), std::log(80.0 / 12.288 / 2.3) / std::log(3.0), 1e-12);
  EXPECT_NEAR(ft_hsdp_growth_exponent(), 0.94710, 1e-5);
  EXPECT_NEAR(ft_hsdp_per_1000_node_days(4'096), 2.3, 1e-12);
  EXPECT_NEAR(ft_hsdp_per_1000_node_days(12'288), 80.0 / 12.288, 1e-9);
  // Between them the per-node rate grows: 2,048 nodes (16k GPUs) below 2.3.
  EXPECT_NEAR(ft_hsdp_per_1000_node_days(2'048), 2.3 * std::pow(0.5, 0.94710), 1e-4);
}

TEST(FtHsdpPreset, FittedRateIsOneFailureEvery18MinutesAt98kGpus) {
  const FailureModel model = ft_hsdp_100k_model(h100_job(12'288));
  EXPECT_NEAR(model.total_rate_per_hour(), 60.0 / 18.0, 1e-9);
  EXPECT_NEAR(model.per_1000_node_days(), 80.0 / 12.288, 1e-9);
  // HBM3 is 22.9% of it, spread over the 98,304 HBM stacks.
  const FailureCause& hbm =
      model.causes[static_cast<size_t>(failure_category_index("gpu_hbm3_memory"))];
  EXPECT_NEAR(hbm.aggregate_rate_per_hour(), 0.229 * 60.0 / 18.0, 1e-9);
  EXPECT_EQ(hbm.components, 98'304);
  EXPECT_EQ(hbm.blast, BlastRadius::kProcess);
  // Under FT-HSDP NCCL timeouts stay in their group; software bugs and the
  // unknown rest restart the job (14.3% of the failures).
  EXPECT_EQ(
      model.causes[static_cast<size_t>(failure_category_index("nccl_watchdog_timeout"))].blast,
      BlastRadius::kProcess);
  double job_share = 0;
  double sum = 0;
  for (const FtHsdpShare& s : ft_hsdp_100k_shares()) {
    sum += s.percent;
    if (s.blast == BlastRadius::kJob) job_share += s.percent;
    EXPECT_FALSE(s.why.empty());
  }
  EXPECT_NEAR(sum, 100.0, 1e-9);
  EXPECT_NEAR(job_share, 14.3, 1e-9);
  // Causes the table does not have stay at 0: the fabric's.
  EXPECT_EQ(model.causes[static_cast<size_t>(failure_category_index("spine_switch"))].rate_per_hour,
            0.0);
}

}  // namespace
}  // namespace clustersim::failures
