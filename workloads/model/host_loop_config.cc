#include "workloads/model/host_loop_config.h"

#include "sim/sim_time.h"

namespace clustersim::workloads {

void add_host_loop_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section("workload.host",
                     "The training loop's own host work, beyond kernel launches (the stack's).");
  schema
      .add_key("workload.host.per_step", ValueType::kDuration,
               "Host time between steps that no kernel launch accounts for: data loading, "
               "logging, zero_grad and the loop's Python. Every GPU waits for it whole at the "
               "step's start (run's \"launch-bound\"); it does not shrink with the batch per GPU. "
               "Measure it as the GPU's idle gap between two steps of a profile.")
      .default_to(sim::SimTime::zero())
      .non_negative()
      .in_unit("ms");
  schema
      .add_key("workload.host.per_step_jitter", ValueType::kDuration,
               "Spread of that host work between ranks (garbage collection, the OS, data "
               "loading): each rank's is per_step + |N(0, this)|, drawn per rank from the "
               "scenario's seed. The step's first synchronising collective waits for the "
               "slowest rank (run's \"sync wait\"), so it costs more the more ranks there "
               "are: 1.8 times this on 8 ranks, 2.6 on 64, 3.6 on 2,048 (the expected largest of N "
               "|N(0, 1)|).")
      .default_to(sim::SimTime::zero())
      .non_negative()
      .in_unit("ms");
  schema
      .add_key("workload.host.per_micro_batch", ValueType::kDuration,
               "Host time the training loop spends before each micro-batch's forward (a pipeline "
               "chunk's forward, each): fetching the batch, the schedule's Python. It delays "
               "every launch after it; the GPU waits for it only when it has run out of "
               "issued work (run's \"launch-bound\"). Measure it as the host time between two "
               "micro-batches' first launches in a profile, less their launches.")
      .default_to(sim::SimTime::zero())
      .non_negative()
      .in_unit("us");
  schema
      .add_key("workload.host.per_layer", ValueType::kDuration,
               "Host time before each transformer layer's forward and backward beyond its "
               "kernel launches: the modules' Python, FSDP's and autograd's hooks. Not spent "
               "with cuda_graphs (the graph replays the layers). Measure it as a layer's host "
               "time in a profile less its launches.")
      .default_to(sim::SimTime::zero())
      .non_negative()
      .in_unit("us");
}

void read_host_loop_keys(const sim::ConfigValues& values, WorkloadSpec& w) {
  w.host_per_step_ns = values.get_duration("workload.host.per_step").count_ns();
  w.host_per_step_jitter_ns = values.get_duration("workload.host.per_step_jitter").count_ns();
  w.host_per_micro_batch_ns = values.get_duration("workload.host.per_micro_batch").count_ns();
  w.host_per_layer_ns = values.get_duration("workload.host.per_layer").count_ns();
}

}  // namespace clustersim::workloads
