// Collective predictions at the largest scale: one all_reduce over all
// 131,072 GPUs of a rail-optimised HGX H100 cluster (geometry + tuner), and
// 8,192 concurrent 16-GPU groups (one GPU per node, stride 8) whose links are
// shared by max-min fairness. The cluster is built once, outside the timing.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/group_collectives.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"
#include "topology/cluster_config.h"

namespace {

using clustersim::collectives::CollectiveOp;

const clustersim::topology::Cluster& cluster_131k() {
  static const clustersim::topology::Cluster cluster = [] {
    clustersim::topology::ClusterSpec spec;
    spec.nodes = 16384;
    clustersim::topology::node_preset("hgx_h100", spec.node);
    return clustersim::topology::build_cluster(spec);
  }();
  return cluster;
}

const clustersim::collectives::HardwareProfile& h100_profile() {
  static const clustersim::collectives::HardwareProfile profile =
      clustersim::collectives::load_hardware_profile(std::string(CLUSTERSIM_SOURCE_DIR) +
                                                     "/scenarios/hardware/h100.yaml");
  return profile;
}

void BM_AllReduceAll131072Gpus(benchmark::State& state) {
  const auto& cluster = cluster_131k();
  std::vector<std::vector<int64_t>> groups(1);
  for (int64_t g = 0; g < cluster.gpu_count(); ++g) groups[0].push_back(g);
  for (auto _ : state) {
    auto prediction = clustersim::collectives::predict_concurrent(
        h100_profile(), cluster, groups, CollectiveOp::kAllReduce, int64_t{1} << 30);
    benchmark::DoNotOptimize(prediction);
  }
}
BENCHMARK(BM_AllReduceAll131072Gpus)->Unit(benchmark::kMillisecond);

void BM_ConcurrentGroups(benchmark::State& state) {
  const auto& cluster = cluster_131k();
  const int64_t stride = 8;
  const int64_t members = 16;
  const int64_t count = state.range(0);
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    const int64_t start = (j / stride) * members * stride + j % stride;
    for (int64_t i = 0; i < members; ++i)
      groups[static_cast<size_t>(j)].push_back(start + i * stride);
  }
  for (auto _ : state) {
    auto prediction = clustersim::collectives::predict_concurrent(
        h100_profile(), cluster, groups, CollectiveOp::kAllReduce, int64_t{1} << 30);
    benchmark::DoNotOptimize(prediction);
  }
  state.counters["groups"] = static_cast<double>(count);
}
BENCHMARK(BM_ConcurrentGroups)->Arg(64)->Arg(8192)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
