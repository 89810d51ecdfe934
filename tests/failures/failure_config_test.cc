#include "failures/failure_config.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "failures/llama3_fit.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;

sim::ConfigSchema failure_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_failure_keys(schema);
  return schema;
}

FailureModel read(std::string_view yaml, int64_t job_gpus = 16'384) {
  return read_failure_model(sim::load_scenario_text(yaml, "s.yaml", failure_schema()),
                            llama3_fitting_cluster(), job_gpus);
}

std::string error_of(std::string_view yaml) {
  try {
    read(yaml);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

size_t index_of(std::string_view category) {
  return static_cast<size_t>(failure_category_index(category));
}

TEST(FailureConfig, KeysOnAFreshSchema) {
  const sim::ConfigSchema schema = failure_schema();
  for (const char* path : {"failures.preset", "failures.scale", "failures.job_mtbf",
                           "failures.faulty_gpu.rate_per_hour", "failures.faulty_gpu.mtbf",
                           "failures.faulty_gpu.per_1000_node_days",
                           "failures.faulty_gpu.distribution", "failures.faulty_gpu.weibull_shape",
                           "failures.spine_switch.mtbf", "failures.stragglers.rate_per_node_hour",
                           "failures.stragglers.slowdown", "failures.stragglers.detection"}) {
    EXPECT_NE(schema.find_key(path), nullptr) << path;
  }
  EXPECT_NE(schema.describe_markdown().find("148 in 54 days on 16384"), std::string::npos);
}

TEST(FailureConfig, NoneByDefault) {
  const FailureModel model = read("name: t\n");
  EXPECT_EQ(model.causes.size(), failure_categories().size());
  EXPECT_EQ(model.total_rate_per_hour(), 0.0);
  EXPECT_EQ(model.stragglers.rate_per_node_hour, 0.0);
  EXPECT_EQ(model.stragglers.slowdown, 1.2);
  EXPECT_EQ(model.stragglers.detection, SimTime::minutes(15));
}

TEST(FailureConfig, PresetAndScale) {
  const FailureModel llama = read("name: t\nfailures:\n  preset: llama3_h100\n");
  EXPECT_NEAR(llama.total_rate_per_hour() * 1'296.0, 419.0, 1e-9);
  const FailureModel doubled = read("name: t\nfailures:\n  preset: llama3_h100\n  scale: 2\n");
  EXPECT_NEAR(doubled.total_rate_per_hour() * 1'296.0, 838.0, 1e-9);
}

TEST(FailureConfig, TheThreeRateForms) {
  const FailureModel model = read(
      "name: t\nfailures:\n  preset: llama3_h100\n"
      "  faulty_gpu:\n    rate_per_hour: 2.5e-6\n"
      "  host_maintenance:\n    mtbf: 50000h\n"
      "  software_bug:\n    per_1000_node_days: 3.0\n"
      "  leaf_switch:\n    mtbf: 17520h\n",
      16'384);
  EXPECT_EQ(model.causes[index_of("faulty_gpu")].rate_per_hour, 2.5e-6);
  EXPECT_EQ(model.causes[index_of("host_maintenance")].rate_per_hour, 2e-5);
  // Per node (software_bug strikes per node): 3 / 24,000 per node-hour.
  EXPECT_DOUBLE_EQ(model.causes[index_of("software_bug")].rate_per_hour, 3.0 / 24'000.0);
  // Untouched categories keep the preset.
  EXPECT_DOUBLE_EQ(model.causes[index_of("nic")].rate_per_hour, 7.0 / (16'384.0 * 1'296.0));
}

TEST(FailureConfig, Per1000NodeDaysOfAGpuCategory) {
  // 3 GPU failures per 1,000 node-days on 2,048 nodes = 3 / (24,000 * 8)
  // per GPU-hour; on a quarter of the GPUs the per-GPU rate is the same.
  for (int64_t gpus : {16'384, 4'096}) {
    const FailureModel model =
        read("name: t\nfailures:\n  faulty_gpu:\n    per_1000_node_days: 3\n", gpus);
    EXPECT_DOUBLE_EQ(model.causes[0].rate_per_hour, 1.5625e-5);
    EXPECT_DOUBLE_EQ(model.per_1000_node_days(), 3.0);
  }
}

TEST(FailureConfig, Weibull) {
  const FailureModel model = read(
      "name: t\nfailures:\n  preset: llama3_h100\n"
      "  gpu_hbm3_memory:\n    distribution: weibull\n    weibull_shape: 0.8\n");
  const FailureCause& hbm = model.causes[index_of("gpu_hbm3_memory")];
  EXPECT_EQ(hbm.distribution, InterArrival::kWeibull);
  EXPECT_EQ(hbm.weibull_shape, 0.8);
  EXPECT_NEAR(hbm.weibull_hours().mean(), 1.0 / hbm.rate_per_hour, 1e-6 / hbm.rate_per_hour);
}

TEST(FailureConfig, JobMtbfReplacesEverything) {
  const FailureModel model = read(
      "name: t\nfailures:\n  preset: llama3_h100\n  scale: 3\n  job_mtbf: 7.9h\n"
      "  faulty_gpu:\n    rate_per_hour: 1\n  stragglers:\n    rate_per_node_hour: 1e-5\n");
  ASSERT_EQ(model.causes.size(), 1u);
  EXPECT_EQ(model.causes[0].name, "job_mtbf");
  EXPECT_EQ(model.causes[0].blast, BlastRadius::kJob);
  EXPECT_DOUBLE_EQ(model.total_rate_per_hour(), 1.0 / 7.9);
  EXPECT_EQ(model.stragglers.rate_per_node_hour, 1e-5);
  // A bare number is in hours.
  EXPECT_DOUBLE_EQ(read("name: t\nfailures:\n  job_mtbf: 2\n").total_rate_per_hour(), 0.5);
}

TEST(FailureConfig, JobMtbfStrikingOneNode) {
  // 2,048 nodes: one failure per 18 minutes of the job, 1 / (0.3 h x 2,048)
  // per node-hour, each taking out the node drawn.
  const FailureModel model =
      read("name: t\nfailures:\n  job_mtbf: 18min\n  job_mtbf_blast_radius: node\n");
  ASSERT_EQ(model.causes.size(), 1u);
  EXPECT_EQ(model.causes[0].blast, BlastRadius::kNode);
  EXPECT_EQ(model.causes[0].component, ComponentKind::kHost);
  EXPECT_EQ(model.causes[0].components, 2'048);
  EXPECT_DOUBLE_EQ(model.causes[0].rate_per_hour, 1.0 / (0.3 * 2'048));
  EXPECT_DOUBLE_EQ(model.total_rate_per_hour(), 1.0 / 0.3);
  EXPECT_EQ(read("name: t\nfailures:\n  job_mtbf: 18min\n").causes[0].blast, BlastRadius::kJob);
}

TEST(FailureConfig, ABlastRadiusReplacesTheCategorysOwn) {
  const FailureModel model = read(
      "name: t\nfailures:\n  preset: llama3_h100\n  faulty_gpu:\n    blast_radius: leaf\n"
      "  software_bug:\n    blast_radius: job\n");
  EXPECT_EQ(model.causes[index_of("faulty_gpu")].blast, BlastRadius::kLeaf);
  EXPECT_EQ(model.causes[index_of("software_bug")].blast, BlastRadius::kJob);
  // One the component cannot have is an error at the key.
  EXPECT_EQ(error_of("name: t\nfailures:\n  faulty_gpu:\n    blast_radius: degrade_bandwidth\n"),
            "s.yaml:4:19: error: failures.faulty_gpu.blast_radius: expected a blast radius a gpu "
            "can have (degrade_bandwidth needs a fabric component (spine_switch, core_switch or "
            "fabric_link)), found degrade_bandwidth");
  EXPECT_EQ(error_of("name: t\nfailures:\n  spine_switch:\n    blast_radius: node\n"),
            "s.yaml:4:19: error: failures.spine_switch.blast_radius: expected a blast radius a "
            "spine_switch can have (a spine, core or switch-to-switch link takes out no node), "
            "found node");
  EXPECT_NE(error_of("name: t\nfailures:\n  job_mtbf: 1h\n  job_mtbf_blast_radius: "
                     "degrade_bandwidth\n")
                .find("failures.job_mtbf_blast_radius: expected one of process, node, leaf, job"),
            std::string::npos);
}

TEST(FailureConfig, Stragglers) {
  const FailureModel model = read(
      "name: t\nfailures:\n  stragglers:\n    rate_per_node_hour: 2e-5\n    slowdown: 1.5\n"
      "    detection: 5min\n");
  EXPECT_EQ(model.stragglers.rate_per_node_hour, 2e-5);
  EXPECT_EQ(model.stragglers.slowdown, 1.5);
  EXPECT_EQ(model.stragglers.detection, SimTime::minutes(5));
}

TEST(FailureConfig, BadValuesNameFileAndLine) {
  EXPECT_EQ(error_of("name: t\nfailures:\n  faulty_gpu:\n    rate_per_hour: -1e-6\n"),
            "s.yaml:4:20: error: failures.faulty_gpu.rate_per_hour: expected a non-negative "
            "finite number, found '-1e-6'");
  EXPECT_EQ(error_of("name: t\nfailures:\n  nic:\n    mtbf: 0h\n"),
            "s.yaml:4:11: error: failures.nic.mtbf: expected a positive duration such as "
            "'10min', found '0h'");
  EXPECT_EQ(error_of("name: t\nfailures:\n  nic:\n    distribution: weibull\n"
                     "    weibull_shape: 0\n"),
            "s.yaml:5:20: error: failures.nic.weibull_shape: expected a positive finite number, "
            "found '0'");
  EXPECT_EQ(error_of("name: t\nfailures:\n  job_mtbf: 0s\n"),
            "s.yaml:3:13: error: failures.job_mtbf: expected a positive duration such as "
            "'10min', found '0s'");
  EXPECT_EQ(error_of("name: t\nfailures:\n  stragglers:\n    slowdown: 0.5\n"),
            "s.yaml:4:15: error: failures.stragglers.slowdown: expected a number >= 1, found "
            "'0.5'");
}

TEST(FailureConfig, EveryProblemAtOnce) {
  const std::string error = error_of(
      "name: t\nfailures:\n"
      "  faulty_gpu:\n    rate_per_hour: 1e-6\n    mtbf: 1000h\n"
      "  nic:\n    weibull_shape: 1.5\n"
      "  cpu:\n    distribution: weibull\n"
      "  core_switch:\n    per_1000_node_days: 1\n");
  EXPECT_EQ(error,
            "s.yaml:5:11: error: failures.faulty_gpu.mtbf: expected one rate per category, found "
            "failures.faulty_gpu.rate_per_hour (at s.yaml:4:20) as well\n"
            "s.yaml:7:20: error: failures.nic.weibull_shape: expected "
            "failures.nic.distribution: weibull for a Weibull shape, found exponential (the "
            "default)\n"
            "s.yaml:9:19: error: failures.cpu.distribution: expected "
            "failures.cpu.weibull_shape with distribution weibull, found none\n"
            "s.yaml:11:25: error: failures.core_switch.per_1000_node_days: expected a category "
            "whose core_switch the job has, found none on this cluster (use rate_per_hour)");
}

}  // namespace
}  // namespace clustersim::failures
