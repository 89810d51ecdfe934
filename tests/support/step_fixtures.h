// Fixtures of the tests that simulate steps: HGX H100 nodes on a
// non-blocking rail-optimised fabric with fixed switch latencies, the
// shipped H100 profile, and a small Llama-style workload whose step takes
// milliseconds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hardware/hardware_profile.h"
#include "workloads/model/workload_config.h"
#include "sim/sim_time.h"
#include "topology/cluster.h"
#include "tests/support/cluster_fixtures.h"
#include "topology/cluster_config.h"

namespace clustersim::test_support {

// `nodes` HGX H100 nodes; switch latencies 100 / 200 / 500 ns by tier.
inline topology::Cluster hgx_h100(int64_t nodes) {
  topology::ClusterSpec spec = hgx_h100_spec(nodes);
  spec.latency = {sim::SimTime::ns(100), sim::SimTime::ns(200), sim::SimTime::ns(500)};
  return topology::build_cluster(spec);
}

// scenarios/hardware/h100.yaml, loaded once.
inline const collectives::HardwareProfile& h100() {
  static const collectives::HardwareProfile p = collectives::load_hardware_profile(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/hardware/h100.yaml");
  return p;
}

// Hidden 2048, 16 heads of 128, 8 KV heads, FFN 5632, vocab 32000, 4 blocks,
// seq 2048, local batch 1; FULL_SHARD when shard == world, else HYBRID_SHARD.
// No gradient clipping (its own tests in fsdp_schedule_test.cc): the tests
// built on this count the schedule's other tasks.
inline workloads::WorkloadSpec small_spec(int64_t world, int64_t shard) {
  workloads::WorkloadSpec w;
  w.model.name = "custom";
  w.model.layers = 4;
  w.model.hidden = 2048;
  w.model.heads = 16;
  w.model.kv_heads = 8;
  w.model.ffn_hidden = 5632;
  w.model.vocab = 32000;
  w.seq_len = 2048;
  w.local_batch = 1;
  w.world_size = world;
  w.dp_size = world;
  w.shard_group_size = shard;
  w.replica_group_size = world / shard;
  w.strategy = shard == world ? workloads::ShardingStrategy::kFullShard
                              : workloads::ShardingStrategy::kHybridShard;
  w.grad_clip = false;
  return w;
}

// small_spec(world, world / tp) as TP tp x FSDP world / tp, compiled
// (async TP is an Inductor pass), with async TP on or off.
inline workloads::WorkloadSpec tp_spec(int64_t world, int64_t tp, bool async_tp) {
  workloads::WorkloadSpec w = small_spec(world, world / tp);
  w.tp = tp;
  w.dp_size = world / tp;
  w.replica_group_size = 1;
  w.strategy = workloads::ShardingStrategy::kFullShard;
  w.torch_compile = true;
  w.async_tp = async_tp;
  return w;
}

}  // namespace clustersim::test_support
