#include "scenario/scenario_schema.h"

#include "collectives/tuner.h"
#include "config/scenario_loader.h"
#include "failures/campaign_config.h"
#include "failures/failure_config.h"
#include "failures/recovery_policy.h"
#include "hardware/hardware_profile.h"
#include "scenario/stack_profile.h"
#include "scenario/sweep_grid.h"
#include "topology/cluster_config.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/straggler_config.h"

namespace clustersim::cli {

sim::ConfigSchema build_scenario_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  topology::add_cluster_keys(schema);
  collectives::add_hardware_keys(schema);
  add_stack_keys(schema);
  collectives::add_collective_keys(schema);
  workloads::add_workload_keys(schema);
  workloads::add_straggler_keys(schema);
  failures::add_failure_keys(schema);
  failures::add_recovery_keys(schema);
  failures::add_campaign_keys(schema);
  add_sweep_keys(schema);
  return schema;
}

}  // namespace clustersim::cli
