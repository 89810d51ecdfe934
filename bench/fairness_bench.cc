// Contention benchmark: the cost of one collective starting and one ending.
//
// 16,384 concurrent flows (ring all-reduces, coefficient 2(n-1)/n = 1.75 for
// n = 8), each loading 7 links of its own plus one spine link shared by
// `flows_per_spine` flows. flows_per_spine = 1 is the rail-optimised fabric
// (one switch tree per rail): every flow is its own component of 8 links.
// 128 puts 128 flows on each spine link, so every start or end re-solves 128 flows and
// 128 * 7 + 1 links. Own-link capacities are drawn so that some flows are
// bottlenecked on their own links and others on the spine (several levels).
//
// One iteration removes a flow and adds it back with the same footprint;
// items_per_second counts those pairs. solved_flows is the re-solve size.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "collectives/max_min_fairness.h"
#include "sim/random_stream.h"

namespace {

using clustersim::collectives::FlowId;
using clustersim::collectives::LinkId;
using clustersim::collectives::LinkLoad;
using clustersim::collectives::MaxMinFairness;
using clustersim::sim::RandomStream;

constexpr int kFlows = 16384;
constexpr int kOwnLinks = 7;
constexpr double kRingCoefficient = 2.0 * 7.0 / 8.0;

void BM_AddRemove(benchmark::State& state) {
  const auto flows_per_spine = static_cast<int>(state.range(0));
  RandomStream rng(1, "bench.fairness", 0);
  MaxMinFairness mmf;
  std::vector<std::vector<LinkLoad>> footprints(kFlows);
  std::vector<FlowId> ids(kFlows);
  LinkId spine{};
  for (int f = 0; f < kFlows; ++f) {
    if (f % flows_per_spine == 0) spine = mmf.add_link(400e9);
    auto& loads = footprints[static_cast<std::size_t>(f)];
    for (int l = 0; l < kOwnLinks; ++l) {
      loads.push_back({mmf.add_link(4e9 + 4e9 * rng.next_unit()), kRingCoefficient});
    }
    loads.push_back({spine, kRingCoefficient});
    ids[static_cast<std::size_t>(f)] = mmf.add_flow(loads);
  }

  std::size_t next = 0;
  std::size_t solved = 0;
  for (auto _ : state) {
    mmf.remove_flow(ids[next]);
    solved += mmf.last_solved_flows();
    ids[next] = mmf.add_flow(footprints[next]);
    solved += mmf.last_solved_flows();
    benchmark::DoNotOptimize(mmf.last_changed().data());
    next = (next + 1) % kFlows;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["solved_flows"] =
      static_cast<double>(solved) / (2.0 * static_cast<double>(state.iterations()));
}
BENCHMARK(BM_AddRemove)->ArgName("flows_per_spine")->Arg(1)->Arg(128);

}  // namespace

BENCHMARK_MAIN();
