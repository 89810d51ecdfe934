// What the config-import fuzz targets (torchtitan_config_fuzz,
// nemo_config_fuzz) hold an imported config to, beyond fuzz_support.h's
// properties for a rejected one: the scenario `import` writes for an
// accepted config is read back by the scenario loader without a problem
// (what import writes, check reads), and names each scenario key once.
// Thread safety: libFuzzer runs one input at a time.
#pragma once

#include <set>
#include <string>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "scenario/imported_scenario.h"
#include "scenario/scenario_schema.h"
#include "tests/fuzz/fuzz_support.h"

namespace clustersim::fuzz {

inline void check_written_scenario(const cli::ImportedScenario& scenario) {
  std::set<std::string> keys;
  for (const cli::ImportedKey& k : scenario.keys) {
    if (!keys.insert(k.key).second) finding("a scenario key written twice", k.key);
  }
  const std::string yaml = cli::scenario_yaml(scenario);
  try {
    sim::load_scenario_text(yaml, "imported.yaml", cli::build_scenario_schema());
  } catch (const sim::ConfigError& e) {
    finding("the written scenario does not load", std::string(e.what()) + "\n" + yaml);
  }
}

}  // namespace clustersim::fuzz
