#include "calibration/collective_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "topology/cluster.h"
#include "topology/cluster_config.h"

namespace clustersim::calibration {
namespace {

using collectives::HardwareProfile;
using collectives::Protocol;
using ::testing::HasSubstr;

const std::string kDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";

topology::Cluster cluster_of(const char* node, int64_t nodes) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset(node, spec.node));
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return topology::build_cluster(spec);
}

// Measurement rows whose times the model with `truth` predicts exactly.
std::vector<CollectiveMeasurement> synthetic_rows(const HardwareProfile& truth,
                                                  const topology::Cluster& cluster) {
  std::vector<CollectiveMeasurement> rows;
  int line = 2;
  for (const char* op : {"all_reduce", "all_gather"}) {
    for (int gpus : {2, 4, 8}) {
      for (int64_t bytes = 4096; bytes <= (int64_t{1} << 32); bytes *= 4) {
        CollectiveMeasurement row;
        row.op = op;
        row.gpus = gpus;
        row.gpus_per_node = gpus;
        row.bytes = bytes;
        row.where = {"synthetic.csv", line++, 1};
        row.time_us = 1.0;
        const std::vector<CollectiveCase> one =
            collective_cases(std::span(&row, 1), cluster, {}, 0);
        row.time_us = predict_case(truth, cluster, one.front()).seconds * 1e6;
        rows.push_back(row);
      }
    }
  }
  return rows;
}

TEST(CollectiveFit, RecoversTheConstantsThatMadeTheData) {
  const topology::Cluster cluster = cluster_of("hgx_h100", 1);
  const HardwareProfile base = collectives::load_hardware_profile(kDir + "hardware/h100.yaml");
  HardwareProfile truth = base;
  truth.nvlink_ring_efficiency = 0.75;
  truth.protocol(Protocol::kLL).max_busbw_Bps = 120e9;
  truth.protocol(Protocol::kLL).ring.base_us = 8.0;
  truth.protocol(Protocol::kLL).ring.nvlink_hop_us = 0.9;
  truth.protocol(Protocol::kSimple).ring.base_us = 10.0;
  truth.protocol(Protocol::kSimple).ring.nvlink_hop_us = 2.5;
  truth.nvls_busbw_efficiency = 1.0;
  truth.nvls_latency_us = 30;

  const std::vector<CollectiveMeasurement> rows = synthetic_rows(truth, cluster);
  const std::vector<CollectiveCase> cases = collective_cases(rows, cluster, {}, 0);
  const CollectiveFit fit = fit_collectives(cases, cluster, base);
  const HardwareProfile& got = fit.profile;
  EXPECT_NEAR(got.nvlink_ring_efficiency, 0.75, 1e-6);
  EXPECT_NEAR(got.protocol(Protocol::kLL).max_busbw_Bps / 120e9, 1, 1e-6);
  EXPECT_NEAR(got.protocol(Protocol::kLL).ring.base_us, 8.0, 1e-6);
  EXPECT_NEAR(got.protocol(Protocol::kLL).ring.nvlink_hop_us, 0.9, 1e-6);
  EXPECT_NEAR(got.nvls_busbw_efficiency, 1.0, 1e-6);
  EXPECT_NEAR(got.nvls_latency_us, 30, 1e-6);
  // Every case predicted back to within rounding.
  for (const CollectiveCase& c : cases) {
    EXPECT_NEAR(predict_case(got, cluster, c).seconds / c.measured_s, 1, 1e-6)
        << c.row.where.to_string();
  }
  for (const FitGroupReport& g : fit.groups) EXPECT_TRUE(g.outliers.empty()) << g.name;
  EXPECT_THAT(fit.key_notes.at("nvlink.ring_efficiency"), HasSubstr("fitted to"));
}

// Several nodes: the network scope's efficiency and per-hop latencies come
// back from cases on 2, 4 and 8 nodes (ring all_gather; tree all_reduce).
TEST(CollectiveFit, RecoversNetworkConstantsFromSeveralNodeCounts) {
  const topology::Cluster cluster = cluster_of("hgx_h100", 8);
  const HardwareProfile base = collectives::load_hardware_profile(kDir + "hardware/h100.yaml");
  HardwareProfile truth = base;
  truth.network_efficiency = 0.85;
  truth.protocol(Protocol::kSimple).ring.network_hop_us = 9.0;
  truth.protocol(Protocol::kSimple).ring.base_us = 12.0;
  std::vector<CollectiveMeasurement> rows;
  int line = 2;
  for (int nodes : {2, 4, 8}) {
    for (int per_node : {1, 8}) {
      for (int64_t bytes = int64_t{1} << 20; bytes <= (int64_t{1} << 34); bytes *= 8) {
        CollectiveMeasurement row;
        row.op = "all_gather";
        row.gpus = nodes * per_node;
        row.gpus_per_node = per_node;
        row.bytes = bytes;
        row.algo = "Ring";
        row.where = {"net.csv", line++, 1};
        row.time_us = 1.0;
        const std::vector<CollectiveCase> one =
            collective_cases(std::span(&row, 1), cluster, {}, 0);
        collectives::ForcedChoice simple = one.front().forced;
        simple.protocol = Protocol::kSimple;
        CollectiveCase c = one.front();
        c.forced = simple;
        row.time_us = predict_case(truth, cluster, c).seconds * 1e6;
        rows.push_back(row);
      }
    }
  }
  collectives::ForcedChoice simple;
  simple.protocol = Protocol::kSimple;
  const std::vector<CollectiveCase> cases = collective_cases(rows, cluster, simple, 0);
  const CollectiveFit fit = fit_collectives(cases, cluster, base);
  EXPECT_NEAR(fit.profile.network_efficiency, 0.85, 1e-6);
  EXPECT_NEAR(fit.profile.protocol(Protocol::kSimple).ring.network_hop_us, 9.0, 1e-6);
  EXPECT_NEAR(fit.profile.protocol(Protocol::kSimple).ring.base_us, 12.0, 1e-6);
  EXPECT_THAT(fit.key_notes.at("network.efficiency"), HasSubstr("all_gather ring Simple network"));
  for (const CollectiveCase& c : cases) {
    EXPECT_NEAR(predict_case(fit.profile, cluster, c).seconds / c.measured_s, 1, 1e-6)
        << c.row.where.to_string();
  }
}

TEST(CollectiveFit, OutliersDoNotMoveTheFit) {
  const topology::Cluster cluster = cluster_of("hgx_h100", 1);
  const HardwareProfile base = collectives::load_hardware_profile(kDir + "hardware/h100.yaml");
  HardwareProfile truth = base;
  truth.nvlink_ring_efficiency = 0.78;
  std::vector<CollectiveMeasurement> rows = synthetic_rows(truth, cluster);
  const CollectiveFit clean =
      fit_collectives(collective_cases(rows, cluster, {}, 0), cluster, base);
  // Two runs disturbed by another job: 2.5x slower.
  *rows[10].time_us *= 2.5;
  *rows[30].time_us *= 2.5;
  const CollectiveFit noisy =
      fit_collectives(collective_cases(rows, cluster, {}, 0), cluster, base);
  EXPECT_NEAR(noisy.profile.nvlink_ring_efficiency, clean.profile.nvlink_ring_efficiency, 1e-9);
  EXPECT_NEAR(noisy.profile.nvls_busbw_efficiency, clean.profile.nvls_busbw_efficiency, 1e-9);
  int outliers = 0;
  for (const FitGroupReport& g : noisy.groups) outliers += static_cast<int>(g.outliers.size());
  EXPECT_EQ(outliers, 2);
}

TEST(CollectiveFit, RowsThatDoNotFitTheClusterAreErrors) {
  const topology::Cluster cluster = cluster_of("hgx_h100", 1);
  CollectiveMeasurement too_many;
  too_many.op = "all_reduce";
  too_many.gpus = 16;
  too_many.gpus_per_node = 8;
  too_many.bytes = 1024;
  too_many.time_us = 10;
  too_many.where = {"m.csv", 3, 1};
  CollectiveMeasurement bad_algo = too_many;
  bad_algo.gpus = 8;
  bad_algo.algo = "CollNet";
  bad_algo.where = {"m.csv", 4, 1};
  const std::vector<CollectiveMeasurement> rows = {too_many, bad_algo};
  try {
    collective_cases(rows, cluster, {}, 0);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("m.csv:3:1: error: gpus: expected at most the scenario's 8"));
    EXPECT_THAT(e.what(), HasSubstr("m.csv:4:1: error: algo: expected Ring, Tree or NVLS"));
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Issue 7's bar on the reference data (copies in scenarios/measurements):
// median |error| <= 7% for messages >= 64 KiB, in sample.
TEST(CollectiveFit, ReferenceDataFitsWithinSevenPercent) {
  // calibrate's default: below 64 KiB NCCL's time grows with size inside the
  // latency-bound range, which one latency per (algorithm, protocol) does
  // not describe.
  const int64_t kMinBytes = 65536;
  struct Part {
    const char* node;
    const char* profile;
    std::vector<const char*> files;
  };
  for (const Part& part :
       {Part{
            "hgx_h100", "h100", {"dgx_h100_all_reduce_8gpu.csv", "hopper_nvlink_busbw_points.csv"}},
        Part{"hgx_a100", "a100", {"dgx_a100_all_reduce_8gpu.csv"}}}) {
    const topology::Cluster cluster = cluster_of(part.node, 1);
    const HardwareProfile base =
        collectives::load_hardware_profile(kDir + "hardware/" + part.profile + ".yaml");
    std::vector<CollectiveMeasurement> rows;
    for (const char* file : part.files) {
      for (CollectiveMeasurement& row :
           read_collective_measurements(kDir + "measurements/" + file)) {
        rows.push_back(row);
      }
    }
    const std::vector<CollectiveCase> cases = collective_cases(rows, cluster, {}, kMinBytes);
    const CollectiveFit fit = fit_collectives(cases, cluster, base);
    std::vector<double> errors;
    for (const CollectiveCase& c : cases) {
      const double e = predict_case(fit.profile, cluster, c).seconds / c.measured_s - 1;
      errors.push_back(std::fabs(e));
    }
    std::printf("%s: %zu cases >= 64 KiB, median %.2f%%, ring eff %.4f, nvls eff %.4f, rounds %d\n",
                part.profile, errors.size(), 100 * median(errors),
                fit.profile.nvlink_ring_efficiency, fit.profile.nvls_busbw_efficiency, fit.rounds);
    for (const FitGroupReport& g : fit.groups) {
      std::printf("  %s: %d cases, rms %.2f%%\n", g.name.c_str(), g.cases,
                  100 * g.rms_relative_error);
      for (const std::string& note : g.notes) std::printf("    %s\n", note.c_str());
    }
    EXPECT_LE(median(errors), 0.07) << part.profile;
  }
}

}  // namespace
}  // namespace clustersim::calibration
