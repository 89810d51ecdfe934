#include "failures/failure_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "failures/llama3_fit.h"
#include "sim/check.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;

TEST(FailureUnits, MtbfAndRate) {
  EXPECT_EQ(hours_of(SimTime::minutes(90)), 1.5);
  EXPECT_EQ(rate_from_mtbf(SimTime::hours(1000)), 0.001);
  EXPECT_EQ(rate_from_mtbf(SimTime::minutes(30)), 2.0);
  EXPECT_EQ(mtbf_from_rate(0.5), SimTime::hours(2));
  EXPECT_EQ(mtbf_from_rate(rate_from_mtbf(SimTime::hours(7))), SimTime::hours(7));
  EXPECT_THROW(rate_from_mtbf(SimTime::zero()), sim::InvariantError);
}

TEST(FailureUnits, Per1000NodeDays) {
  // Kokolis et al.'s RSC-1: 6.50 failures per 1,000 node-days. Per node and
  // per node-hour that is 6.5 / 24,000.
  EXPECT_DOUBLE_EQ(rate_from_per_1000_node_days(6.5, 1, 1), 6.5 / 24'000.0);
  EXPECT_DOUBLE_EQ(rate_from_per_1000_node_days(6.5, 100, 100), 6.5 / 24'000.0);
  // The same figure for a GPU cause on 2,048 nodes of 8 GPUs: per GPU-hour
  // it is 3 / (24,000 * 8) = 1.5625e-5.
  EXPECT_DOUBLE_EQ(rate_from_per_1000_node_days(3.0, 2'048, 16'384), 1.5625e-5);
  // A per-job cause on 500 nodes: 2.34 * 500 / 24,000 per job-hour.
  EXPECT_DOUBLE_EQ(rate_from_per_1000_node_days(2.34, 500, 1), 2.34 * 500 / 24'000.0);
  // And back.
  EXPECT_DOUBLE_EQ(per_1000_node_days_from_rate(1.5625e-5, 16'384, 2'048), 3.0);
  EXPECT_DOUBLE_EQ(per_1000_node_days_from_rate(rate_from_per_1000_node_days(2.34, 500, 1), 1, 500),
                   2.34);
  // 1 failure per node-day is 1,000 per 1,000 node-days.
  EXPECT_DOUBLE_EQ(per_1000_node_days_from_rate(1.0 / 24.0, 7, 7), 1'000.0);
}

TEST(FailureCategories, TableOrderAndNames) {
  const auto categories = failure_categories();
  ASSERT_EQ(categories.size(), 27u);
  std::set<std::string_view> names;
  for (const FailureCategory& c : categories) names.insert(c.name);
  EXPECT_EQ(names.size(), categories.size());
  EXPECT_EQ(failure_category_index("faulty_gpu"), 0);
  EXPECT_EQ(failure_category_index("system_memory"), 17);
  EXPECT_EQ(failure_category_index("spine_switch"), 20);
  EXPECT_EQ(failure_category_index("nope"), -1);
  EXPECT_EQ(categories[0].blast, BlastRadius::kProcess);
  EXPECT_EQ(categories[2].component, ComponentKind::kNodeSoftware);
  EXPECT_EQ(categories[2].blast, BlastRadius::kJob);
  EXPECT_EQ(categories[15].component, ComponentKind::kJobSoftware);
  EXPECT_EQ(categories[19].blast, BlastRadius::kLeaf);
  EXPECT_EQ(categories[20].blast, BlastRadius::kDegradeBandwidth);
  EXPECT_EQ(blast_radius_name(BlastRadius::kDegradeBandwidth), "degrade_bandwidth");
  EXPECT_EQ(inter_arrival_name(InterArrival::kWeibull), "weibull");
}

TEST(FailureCause, WeibullMeanIsTheRate) {
  for (double shape : {0.5, 0.7, 1.0, 1.5, 3.0}) {
    FailureCause cause;
    cause.rate_per_hour = 1.0 / 5'000.0;
    cause.distribution = InterArrival::kWeibull;
    cause.weibull_shape = shape;
    const sim::Weibull w = cause.weibull_hours();
    EXPECT_EQ(w.shape(), shape);
    EXPECT_NEAR(w.mean(), 5'000.0, 5'000.0 * 1e-12) << "shape " << shape;
  }
  // Shape 1 is the exponential: scale = mean.
  FailureCause one;
  one.rate_per_hour = 0.25;
  EXPECT_DOUBLE_EQ(one.weibull_hours().scale(), 4.0);
}

TEST(FailureModel, EmptyAndJobMtbf) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const FailureModel empty = empty_failure_model(job);
  ASSERT_EQ(empty.causes.size(), failure_categories().size());
  EXPECT_EQ(empty.total_rate_per_hour(), 0.0);
  EXPECT_EQ(empty.causes[0].components, 16'384);
  EXPECT_EQ(empty.causes[4].components, 2'048);

  const FailureModel mtbf = job_mtbf_failure_model(job, SimTime::hours(4));
  ASSERT_EQ(mtbf.causes.size(), 1u);
  EXPECT_EQ(mtbf.causes[0].name, "job_mtbf");
  EXPECT_EQ(mtbf.causes[0].blast, BlastRadius::kJob);
  EXPECT_EQ(mtbf.total_rate_per_hour(), 0.25);
  // 0.25 per hour on 2,048 nodes: 6 per day, 6,000 / 2,048 per 1,000 node-days.
  EXPECT_DOUBLE_EQ(mtbf.per_1000_node_days(), 6'000.0 / 2'048.0);
}

}  // namespace
}  // namespace clustersim::failures
