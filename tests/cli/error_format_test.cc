// Every command ends its bad-input paths in one format (README, "Bad
// input"): a mistake on the command line is `clustersim COMMAND: error: ...`
// and exit 2; a bad file is `FILE:LINE:COL: error: KEY: ...` (or `FILE:
// error: ...` when no line is to blame) and exit 1; a bad --set is located at
// the override. These tests walk the command table, so a command added later
// is held to the same rules without a test of its own.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::run;
using test_support::ScratchDir;

// A small scenario every scenario command accepts: one HGX H100 node.
const std::string kScenario =
    "name: tiny\n"
    "hardware: " CLUSTERSIM_SOURCE_DIR
    "/scenarios/hardware/h100.yaml\n"
    "cluster:\n"
    "  nodes: 1\n"
    "  node: hgx_h100\n"
    "workload:\n"
    "  model: llama3-8b\n"
    "  seq_len: 1024\n"
    "  local_batch: 1\n";

bool takes_a_scenario(const CommandSpec& spec) {
  return !spec.positionals.empty() && spec.positionals[0].starts_with("SCENARIO");
}

// The command with valid arguments around `scenario` (which the command
// reads first), so that it gets as far as reading it.
std::vector<std::string> valid_arguments(const CommandSpec& spec, const std::string& scenario) {
  const std::string measurements =
      CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/dgx_h100_all_reduce_8gpu.csv";
  if (spec.name == "calibrate") {
    return {spec.name, measurements,
            "--base",  CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml",
            "-o",      ::testing::TempDir() + "error_format_profile.yaml"};
  }
  if (spec.positionals.empty()) return {spec.name};
  if (spec.name == "import") return {spec.name, "torchtitan", scenario, "--hardware", "h100"};
  std::vector<std::string> args = {spec.name, scenario};
  if (spec.name == "replay") args.insert(args.end(), {"--trace", "absent-prefix"});
  if (spec.name == "export-chakra") {
    args.insert(args.end(), {"-o", ::testing::TempDir() + "error_format_export"});
  }
  if (spec.name == "validate") args.push_back(measurements);
  return args;
}

// Every line of `err` (a diagnostic per line) starts with `prefix`.
::testing::AssertionResult every_line_starts_with(const std::string& err,
                                                  const std::string& prefix) {
  if (err.empty() || err.back() != '\n') {
    return ::testing::AssertionFailure() << "not whole lines: '" << err << "'";
  }
  size_t begin = 0;
  while (begin < err.size()) {
    const size_t end = err.find('\n', begin);
    const std::string line = err.substr(begin, end - begin);
    if (!line.starts_with(prefix)) {
      return ::testing::AssertionFailure()
             << "line '" << line << "' does not start with '" << prefix << "'";
    }
    begin = end + 1;
  }
  return ::testing::AssertionSuccess();
}

TEST(ErrorFormat, TheCommandTableListsEveryCommand) {
  std::vector<std::string> names;
  for (const CommandSpec& spec : command_specs()) names.push_back(spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"check", "describe-config", "run", "import",
                                             "campaign", "sweep", "topo", "collective", "validate",
                                             "calibrate", "kernels", "export-chakra", "replay"}));
}

TEST(ErrorFormat, AnUnknownOptionIsAUsageErrorOfItsCommand) {
  for (const CommandSpec& spec : command_specs()) {
    SCOPED_TRACE(spec.name);
    const Outcome r = run({spec.name, "--no-such-option"});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(
        r.err.starts_with("clustersim " + spec.name + ": error: unknown option '--no-such-option'"))
        << r.err;
    EXPECT_TRUE(r.err.ends_with("Try 'clustersim " + spec.name + " --help'.\n")) << r.err;
  }
}

TEST(ErrorFormat, AMissingArgumentIsAUsageErrorOfItsCommand) {
  for (const CommandSpec& spec : command_specs()) {
    if (spec.positionals.empty() || spec.positionals[0].starts_with("[")) continue;
    SCOPED_TRACE(spec.name);
    const Outcome r = run({spec.name});
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_TRUE(r.err.starts_with("clustersim " + spec.name + ": error: expected " +
                                  spec.positionals[0] + ", found the end of the command line\n"))
        << r.err;
  }
}

TEST(ErrorFormat, AMisspeltScenarioKeyIsLocatedInTheFileByEveryCommand) {
  const ScratchDir dir;
  const std::string path = dir.write("bad.yaml", kScenario + "seeed: 3\n");
  for (const CommandSpec& spec : command_specs()) {
    if (!takes_a_scenario(spec)) continue;
    SCOPED_TRACE(spec.name);
    const Outcome r = run(valid_arguments(spec, path));
    EXPECT_EQ(r.code, kExitError);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(r.err.starts_with(path + ":10:1: error: seeed: unknown key (did you mean "))
        << r.err;
    EXPECT_TRUE(every_line_starts_with(r.err, path + ":"));
  }
}

TEST(ErrorFormat, ABadOverrideIsLocatedAtTheOverrideByEveryCommand) {
  const ScratchDir dir;
  const std::string path = dir.write("ok.yaml", kScenario);
  for (const CommandSpec& spec : command_specs()) {
    if (!takes_a_scenario(spec)) continue;
    SCOPED_TRACE(spec.name);
    std::vector<std::string> args = valid_arguments(spec, path);
    args.insert(args.end(), {"--set", "seed=-1"});
    const Outcome r = run(args);
    EXPECT_EQ(r.code, kExitError);
    EXPECT_EQ(r.err, "--set seed=-1: error: seed: expected a non-negative integer, found '-1'\n");
  }
}

TEST(ErrorFormat, AMissingScenarioIsNamedByEveryCommand) {
  const ScratchDir dir;
  const std::string path = dir.file("absent.yaml");
  for (const CommandSpec& spec : command_specs()) {
    if (!takes_a_scenario(spec)) continue;
    SCOPED_TRACE(spec.name);
    const Outcome r = run(valid_arguments(spec, path));
    EXPECT_EQ(r.code, kExitError);
    EXPECT_EQ(r.err, path + ": error: cannot open the scenario: no such file\n");
  }
}

TEST(ErrorFormat, AFifoAsTheScenarioIsRefusedWithoutBlockingByEveryCommand) {
  const ScratchDir dir;
  const std::string path = dir.file("pipe.yaml");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  for (const CommandSpec& spec : command_specs()) {
    if (!takes_a_scenario(spec)) continue;
    SCOPED_TRACE(spec.name);
    const Outcome r = run(valid_arguments(spec, path));
    EXPECT_EQ(r.code, kExitError);
    EXPECT_EQ(r.err, path + ": error: is not a regular file; expected a scenario YAML file\n");
  }
}

// A word where an option wants a number, a size, a rank list or a fraction
// is the command line's fault: exit 2, before any file is read or simulated.
TEST(ErrorFormat, AnOptionForTrainingRunsIsRefusedForOtherMeasurements) {
  const ScratchDir dir;
  const std::string path = dir.write("ok.yaml", kScenario);
  for (const std::string option : {"--folds", "--csv"}) {
    SCOPED_TRACE(option);
    const std::vector<CommandSpec> specs = command_specs();
    const auto validate = std::find_if(specs.begin(), specs.end(),
                                       [](const CommandSpec& c) { return c.name == "validate"; });
    ASSERT_NE(validate, specs.end());
    std::vector<std::string> args = valid_arguments(*validate, path);
    args.insert(args.end(), {option, "3"});
    const Outcome r = run(args);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_TRUE(r.err.starts_with("clustersim validate: error: option '" + option +
                                  "' applies to training runs only (validate RUNS.csv...), not "
                                  "to '" +
                                  path + "'\n"))
        << r.err;
  }
}

TEST(ErrorFormat, AWordForANumericOptionIsAUsageErrorOfItsCommand) {
  const ScratchDir dir;
  const std::string path = dir.write("ok.yaml", kScenario);
  const std::vector<std::string> numeric = {"N", "K", "S", "R", "P", "F", "SIZE", "LIST"};
  int checked = 0;
  for (const CommandSpec& spec : command_specs()) {
    for (const OptionSpec& option : spec.options) {
      if (std::find(numeric.begin(), numeric.end(), option.value_name) == numeric.end()) {
        continue;
      }
      SCOPED_TRACE(spec.name + " " + option.name);
      std::vector<std::string> args = valid_arguments(spec, path);
      args.insert(args.end(), {option.name, "many"});
      // Options that only mean something with another.
      if (option.name == "--trace-ranks") {
        args.insert(args.end(), {spec.name == "replay" ? "--trace-out" : "--trace",
                                 ::testing::TempDir() + "error_format_trace.json"});
      }
      if (option.name == "--trials") args.push_back("--campaign");
      if (spec.name == "validate" && option.name == "--folds") {
        args = {spec.name,
                CLUSTERSIM_SOURCE_DIR "/scenarios/measurements/training/published_runs.csv",
                option.name, "many"};
      }
      const Outcome r = run(args);
      EXPECT_EQ(r.code, kExitUsage);
      EXPECT_TRUE(r.err.starts_with("clustersim " + spec.name + ": error: ")) << r.err;
      EXPECT_NE(r.err.find("'many'"), std::string::npos) << r.err;
      ++checked;
    }
  }
  // The table has numeric options on most commands; none may slip through.
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace clustersim::cli
