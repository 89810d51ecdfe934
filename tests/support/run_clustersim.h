// Test support: the whole clustersim command run in-process, with what it
// printed and its exit code.
#pragma once

#include <gtest/gtest.h>

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

// `clustersim run SCENARIO --set O ...`, which must fail with exit code 1
// (a test failure otherwise); what it printed on stderr.
inline std::string rejected_run(const std::string& scenario,
                                const std::vector<std::string>& overrides) {
  std::vector<std::string> args = {"run", scenario};
  for (const std::string& o : overrides) {
    args.emplace_back("--set");
    args.push_back(o);
  }
  const Outcome r = run(args);
  EXPECT_EQ(r.code, 1) << r.out;
  return r.err;
}

}  // namespace clustersim::test_support
