// Test support: the whole clustersim command run in-process, with what it
// printed and its exit code.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace clustersim::test_support {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline Outcome run(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  Outcome outcome;
  outcome.code = cli::run_clustersim(args, out, err);
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

}  // namespace clustersim::test_support
