#include "failures/llama3_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/text_fields.h"
#include "failures/failure_sampler.h"

namespace clustersim::failures {
namespace {

constexpr double kHours = 54.0 * 24.0;

TEST(Llama3Fit, TableMatchesTheRepositoryCopy) {
  const std::string path =
      CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/failures/llama3_54day_interruptions.csv";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const std::string contents = text.str();
  std::vector<std::vector<std::string>> rows;
  for (const sim::TextLine& line : sim::split_lines(contents)) {
    if (line.text.empty() || line.text.front() == '#') continue;
    std::vector<std::string> fields;
    for (const sim::TextField& f : sim::split_commas(line.text)) fields.emplace_back(f.text);
    rows.push_back(fields);
  }
  ASSERT_EQ(rows.size(), 19u);
  EXPECT_EQ(rows[0][0], "category");
  EXPECT_EQ(rows[0][2], "count");
  const auto counts = llama3_54day_counts();
  const auto categories = failure_categories();
  ASSERT_EQ(counts.size(), 18u);
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(rows[i + 1][0], counts[i].category);
    EXPECT_EQ(rows[i + 1][1], categories[i].group) << counts[i].category;
    EXPECT_EQ(sim::parse_number<int64_t>(rows[i + 1][2]), counts[i].count);
  }
}

TEST(Llama3Fit, ReproducesEveryCount) {
  const FailureFit fit = llama3_h100_fit();
  ASSERT_EQ(fit.rows.size(), 18u);
  EXPECT_EQ(fit.total_count, 419);
  EXPECT_EQ(fit.node_hours, 2'048.0 * kHours);
  for (const FitRow& row : fit.rows) {
    // Exposure = components of the fitting job x 1,296 h; the fitted rate
    // times the exposure is the table's count.
    EXPECT_EQ(row.exposure_component_hours, static_cast<double>(row.components) * kHours);
    EXPECT_DOUBLE_EQ(row.rate_per_hour, static_cast<double>(row.count) /
                                            (static_cast<double>(row.components) * kHours));
    EXPECT_DOUBLE_EQ(row.expected_count, static_cast<double>(row.count)) << row.category;
    EXPECT_EQ(std::llround(row.expected_count), row.count) << row.category;
  }
  EXPECT_DOUBLE_EQ(fit.expected_total, 419.0);
  // Hand-computed rates: faulty GPU 148 / (16,384 x 1,296) per GPU-hour; host
  // maintenance 32 / (2,048 x 1,296) per node-hour; network switch/cable 35 /
  // (16,384 x 1,296) per NIC cable-hour; dependency 2 / 1,296 per job-hour.
  EXPECT_DOUBLE_EQ(fit.rows[0].rate_per_hour, 148.0 / (16'384.0 * 1'296.0));
  EXPECT_EQ(fit.rows[0].components, 16'384);
  EXPECT_DOUBLE_EQ(fit.rows[4].rate_per_hour, 32.0 / (2'048.0 * 1'296.0));
  EXPECT_EQ(fit.rows[3].components, 16'384);
  EXPECT_DOUBLE_EQ(fit.rows[3].rate_per_hour, 35.0 / (16'384.0 * 1'296.0));
  EXPECT_EQ(fit.rows[15].components, 1);
  EXPECT_DOUBLE_EQ(fit.rows[15].rate_per_hour, 2.0 / 1'296.0);
  // 419 / (2,048 x 54) x 1,000 = 3.7887 per 1,000 node-days, between Kokolis
  // et al.'s 2.34 and 6.50; one interruption every 1,296 / 419 = 3.093 h.
  EXPECT_DOUBLE_EQ(fit.per_1000_node_days, 419'000.0 / (2'048.0 * 54.0));
  EXPECT_NEAR(fit.per_1000_node_days, 3.7887, 1e-4);
  EXPECT_DOUBLE_EQ(fit.job_mtbf_hours, 1'296.0 / 419.0);
  double shares = 0;
  for (const FitRow& row : fit.rows) shares += row.per_1000_node_days;
  EXPECT_NEAR(shares, fit.per_1000_node_days, 1e-12);
}

TEST(Llama3Fit, ModelOnTheFittingJobGivesBackTheTotal) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const FailureModel model = llama3_h100_model(job);
  ASSERT_EQ(model.causes.size(), failure_categories().size());
  EXPECT_NEAR(model.total_rate_per_hour() * kHours, 419.0, 1e-9);
  EXPECT_NEAR(model.per_1000_node_days(), 3.7887, 1e-4);
  for (size_t i = 18; i < model.causes.size(); ++i) EXPECT_EQ(model.causes[i].rate_per_hour, 0);
  // Half the job: the per-component rates stay, so half the failures.
  const FailureModel half = llama3_h100_model(JobComponents(llama3_fitting_cluster(), 8'192));
  EXPECT_NEAR(half.total_rate_per_hour() * kHours, (419.0 - 2.0) / 2.0 + 2.0, 1e-9);
}

TEST(Llama3Fit, FormattedTable) {
  const std::string table = format_fit(llama3_h100_fit());
  EXPECT_NE(table.find("faulty_gpu"), std::string::npos);
  EXPECT_NE(table.find("system_memory"), std::string::npos);
  EXPECT_NE(table.find("total: 419 interruptions (expected 419.000)"), std::string::npos) << table;
  EXPECT_NE(table.find("3.7887 per 1,000 node-days"), std::string::npos) << table;
}

// Monte Carlo: 200 trials of 54 days on the fitting job. Each trial's count is
// Poisson with mean 419 (standard deviation sqrt(419) = 20.5), so the mean of
// 200 trials has a standard deviation of 20.5 / sqrt(200) = 1.45; 3% of 419 is
// 12.6, i.e. 8.7 standard deviations: the test cannot fail by chance, and the
// seeds are fixed anyway. Per category, the mean count is checked within 5
// standard deviations (sqrt(count / 200)).
TEST(Llama3Fit, MonteCarloCountOver54Days) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const FailureModel model = llama3_h100_model(job);
  const int trials = 200;
  std::vector<double> per_category(model.causes.size(), 0.0);
  double total = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const std::vector<Failure> failures =
        draw_failures(model, 2024, static_cast<uint64_t>(trial), sim::SimTime::days(54));
    total += static_cast<double>(failures.size());
    for (const Failure& f : failures) per_category[static_cast<size_t>(f.cause)] += 1.0;
  }
  const double mean = total / trials;
  EXPECT_NEAR(mean, 419.0, 0.03 * 419.0);
  const auto counts = llama3_54day_counts();
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = static_cast<double>(counts[i].count);
    EXPECT_NEAR(per_category[i] / trials, expected, 5.0 * std::sqrt(expected / trials))
        << counts[i].category;
  }
}

}  // namespace
}  // namespace clustersim::failures
