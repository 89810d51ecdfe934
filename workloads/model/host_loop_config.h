// The training loop's own host work (section `workload.host`, a stack's
// keys): per step between steps, its spread between ranks, per micro-batch
// and per transformer layer pass, beyond the kernel launches the hardware
// profile's host costs price. Where each is spent: WorkloadSpec's
// host_per_* fields (workload_config.h), the engine's host lead
// (exec/engine.h) and the step program's host issue times
// (workloads/schedules/step_program.h).
//
// Units: durations in the keys, ns in WorkloadSpec. Thread safety: pure functions.
#pragma once

#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

// Declares section `workload.host` (per_step, per_step_jitter, per_micro_batch, per_layer).
void add_host_loop_keys(sim::ConfigSchema& schema);

// Sets w.host_per_step_ns, host_per_step_jitter_ns, host_per_micro_batch_ns
// and host_per_layer_ns (the schema checks each is >= 0).
void read_host_loop_keys(const sim::ConfigValues& values, WorkloadSpec& w);

}  // namespace clustersim::workloads
