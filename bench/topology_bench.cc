// Topology: building the 131,072-GPU rail-optimised cluster (16,384 HGX H100
// nodes, radix-64 switches, 3 tiers per rail) and routing on it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "topology/cluster.h"
#include "topology/cluster_config.h"
#include "topology/routing.h"

namespace {

using clustersim::topology::ClusterSpec;

ClusterSpec h100_cluster(int64_t nodes) {
  ClusterSpec spec;
  spec.nodes = nodes;
  clustersim::topology::node_preset("hgx_h100", spec.node);
  return spec;
}

void BM_BuildRailOptimized(benchmark::State& state) {
  const ClusterSpec spec = h100_cluster(state.range(0));
  size_t bytes = 0;
  for (auto _ : state) {
    const clustersim::topology::Cluster c = clustersim::topology::build_cluster(spec);
    bytes = c.memory_bytes();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["gpus"] = static_cast<double>(state.range(0) * 8);
  state.counters["MiB"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_BuildRailOptimized)->Arg(2)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

void BM_Route(benchmark::State& state) {
  const clustersim::topology::Cluster c = clustersim::topology::build_cluster(h100_cluster(16384));
  std::vector<clustersim::topology::EdgeId> path;
  int64_t src = 0;
  for (auto _ : state) {
    const int64_t dst = (src * 7919 + 12345) % c.gpu_count();
    clustersim::topology::route(c, src, dst, path);
    benchmark::DoNotOptimize(path.data());
    src = (src + 1) % c.gpu_count();
  }
}
BENCHMARK(BM_Route);

}  // namespace

BENCHMARK_MAIN();
