// The full scenario schema: every layer's section, composed in one place.
// A layer that adds a scenario section registers it here, so that
// `check`, `describe-config` and every command see the same keys.
#pragma once

#include "config/config_schema.h"

namespace clustersim::cli {

sim::ConfigSchema build_scenario_schema();

}  // namespace clustersim::cli
