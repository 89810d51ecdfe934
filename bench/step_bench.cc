// Step simulation at scale: one Llama-3-405B HSDP step (shard groups of 2,048
// GPUs, full checkpointing) with every rank explicit, on growing H100
// clusters; reports engine events and ranks per second of wall time. The
// 98,304-GPU scenario itself is timed end to end by scripts/bench.
#include <benchmark/benchmark.h>

#include "hardware/hardware_profile.h"
#include "topology/cluster_config.h"
#include "workloads/model/model_spec.h"
#include "workloads/schedules/step_simulator.h"

namespace {

using namespace clustersim;

topology::Cluster h100_cluster(int64_t nodes) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  topology::node_preset("hgx_h100", spec.node);
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  spec.latency = {sim::SimTime::ns(100), sim::SimTime::ns(200), sim::SimTime::ns(500)};
  return topology::build_cluster(spec);
}

void BM_Llama405bHsdpStep(benchmark::State& state) {
  const int64_t gpus = state.range(0);
  const topology::Cluster cluster = h100_cluster(gpus / 8);
  const collectives::HardwareProfile profile =
      collectives::load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml");
  workloads::StepConfig config;
  workloads::WorkloadSpec& w = config.workload;
  w.model = *workloads::model_preset("llama3-405b");
  w.seq_len = 8192;
  w.local_batch = 1;
  w.activation_checkpointing = workloads::ActivationCheckpointing::kFull;
  w.torch_compile = true;
  w.world_size = gpus;
  w.dp_size = gpus;
  w.shard_group_size = 2048;
  w.replica_group_size = gpus / 2048;
  w.strategy = w.replica_group_size > 1 ? workloads::ShardingStrategy::kHybridShard
                                        : workloads::ShardingStrategy::kFullShard;
  config.compute = workloads::compute_spec_from_profile(profile);
  uint64_t events = 0;
  for (auto _ : state) {
    const workloads::StepResult r = workloads::simulate_step(cluster, profile, config);
    events += r.events;
    benchmark::DoNotOptimize(r.step_time_s);
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["ranks_per_s"] =
      benchmark::Counter(static_cast<double>(gpus) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Llama405bHsdpStep)
    ->Arg(2048)
    ->Arg(8192)
    ->Arg(32768)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
