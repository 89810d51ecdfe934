#include "cli/scenario_schema.h"

#include "sim/scenario_loader.h"

namespace clustersim::cli {

sim::ConfigSchema build_scenario_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  return schema;
}

}  // namespace clustersim::cli
