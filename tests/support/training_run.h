// Test support: a training run built in code rather than read from a runs
// file (scenario/training_runs.h), measured at 1 token/s per GPU until a test
// sets what it needs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "scenario/training_runs.h"

namespace clustersim::test_support {

inline cli::TrainingRun training_run(const std::string& id, const std::string& scenario,
                                     std::vector<std::string> overrides = {}) {
  cli::TrainingRun made;
  made.id = id;
  made.scenario = scenario;
  made.overrides = std::move(overrides);
  made.tokens_per_s_per_gpu = 1;
  return made;
}

}  // namespace clustersim::test_support
