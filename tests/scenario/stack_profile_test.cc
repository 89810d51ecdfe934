// scenario/stack_profile: a scenario's software stack puts its values under
// the scenario's (the scenario and --set win), stacks extend one another,
// and a key in the wrong kind of file is an error naming the file it belongs
// in, both ways.
#include "scenario/stack_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/atomic_file.h"
#include "scenario/network_scenario.h"
#include "scenario/step_config.h"
#include "tests/support/config_errors.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::config_error;
using test_support::contains;
using test_support::ScratchDir;

const std::string kStacks = CLUSTERSIM_SOURCE_DIR "/scenarios/stacks/";
const std::string kHardware = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/";

// An 8-GPU Llama-3-8B job on `hardware`, with `extra` lines at the top level.
std::string scenario(const std::string& hardware, const std::string& extra) {
  return "name: job\nhardware: " + hardware + "\n" + extra +
         "cluster: {nodes: 1, node: hgx_h100}\n"
         "workload: {model: llama3-8b, seq_len: 2048, local_batch: 1}\n";
}

std::string write(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  sim::write_file_atomically(path, text);
  return path;
}

TEST(StackProfile, ShippedStacksAreFoundByBareName) {
  const std::vector<std::string> names = shipped_stack_names();
  for (const char* name :
       {"fms_fsdp", "fsdp1", "megatron_core", "megatron_lm", "nemo", "torchtitan"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(resolve_stack_path("/any/where/s.yaml", "torchtitan"), kStacks + "torchtitan.yaml");
  EXPECT_EQ(resolve_stack_path("/any/where/s.yaml", "mine.yaml"), "/any/where/mine.yaml");
  EXPECT_EQ(resolve_stack_path("/any/where/s.yaml", "/abs/x.yaml"), "/abs/x.yaml");
}

// The stack's values replace the schema's defaults, located in the stack
// file; what the scenario (or --set) gives wins.
TEST(StackProfile, ItsValuesGoUnderTheScenarios) {
  const ScratchDir dir;
  const std::string path = write(dir, "s.yaml", scenario("h100", "stack: fms_fsdp\n"));
  const sim::ConfigValues plain = load_scenario_values(path, {});
  EXPECT_EQ(plain.get_int("workload.fsdp.version"), 1);                         // fsdp1.yaml's
  EXPECT_EQ(plain.get_string("workload.rotary_embedding"), "rotation_matrix");  // fms_fsdp's
  EXPECT_EQ(plain.get_string("workload.optimizer.implementation"), "foreach");
  EXPECT_EQ(plain.get_float("workload.stack_efficiency"), 0.853);  // fitted into fsdp1.yaml
  EXPECT_TRUE(contains(plain.where("workload.fsdp.version").file, "stacks/fsdp1.yaml"));
  EXPECT_TRUE(contains(plain.where("workload.rotary_embedding").file, "stacks/fms_fsdp.yaml"));
  EXPECT_FALSE(plain.entry("workload.fsdp.version").is_default);
  // A key no stack sets keeps the schema's default.
  EXPECT_EQ(plain.get_bool("workload.torch_compile"), false);

  const std::vector<std::string> sets = {"workload.fsdp.version=2",
                                         "workload.stack_efficiency=0.5"};
  const sim::ConfigValues set = load_scenario_values(path, sets);
  EXPECT_EQ(set.get_int("workload.fsdp.version"), 2);
  EXPECT_EQ(set.get_float("workload.stack_efficiency"), 0.5);
  EXPECT_EQ(set.get_string("workload.rotary_embedding"), "rotation_matrix");

  // Applying again changes nothing.
  sim::ConfigValues again = plain;
  apply_stack_profile(again, path);
  EXPECT_EQ(again.get_int("workload.fsdp.version"), 1);
  EXPECT_EQ(again.where("workload.rotary_embedding").file,
            plain.where("workload.rotary_embedding").file);
}

// The stack's efficiency scales the step's compute spec.
TEST(StackProfile, ItsEfficiencyReachesTheComputeSpec) {
  const ScratchDir dir;
  const std::string path = write(dir, "s.yaml", scenario("h100", "stack: torchtitan\n"));
  const NetworkScenario net = load_network_scenario(path, {});
  EXPECT_EQ(step_config_from_scenario(net).compute.stack_efficiency, 0.833);
  const std::string bare = write(dir, "bare.yaml", scenario("h100", ""));
  EXPECT_EQ(step_config_from_scenario(load_network_scenario(bare, {})).compute.stack_efficiency,
            1.0);
}

TEST(StackProfile, AnUnknownStackListsTheShippedOnes) {
  const ScratchDir dir;
  const std::string path = write(dir, "s.yaml", scenario("h100", "stack: megatron\n"));
  const std::string what = config_error([&] { load_scenario_values(path, {}); });
  EXPECT_TRUE(contains(what,
                       "s.yaml:3:8: error: stack: expected one of the shipped stacks by "
                       "its bare name (fms_fsdp, fsdp1, megatron_bridge, megatron_core"))
      << what;
  EXPECT_TRUE(contains(what, "found 'megatron', which this build does not ship")) << what;
  const std::string missing =
      write(dir, "m.yaml", scenario("h100", "stack: ./no_such_stack.yaml\n"));
  EXPECT_TRUE(contains(config_error([&] { load_scenario_values(missing, {}); }),
                       "m.yaml:3:8: error: stack: expected one of the shipped stacks"));
}

// A part's key in a stack, a job's key in a stack, and a stack's key in a
// hardware profile: each an error at its line naming the file it belongs in.
TEST(StackProfile, KeysInTheWrongFileSayWhereTheyBelong) {
  const ScratchDir dir;
  write(dir, "my_stack.yaml",
        "extends: " + kStacks +
            "torchtitan.yaml\nname: mine\ngpu:\n  sustained_clock: 0.9\nworkload:\n"
            "  model: llama3-8b\n  fsdp:\n    version: 3\n");
  write(dir, "hw.yaml",
        "extends: " + kHardware + "h100.yaml\nname: hw\nworkload:\n  stack_efficiency: 0.9\n");
  const std::string path = write(dir, "s.yaml", scenario("hw.yaml", "stack: my_stack.yaml\n"));
  const std::string what = config_error([&] { load_network_scenario(path, {}); });
  // All at once: the stack's three and the profile's one.
  EXPECT_TRUE(contains(what,
                       "my_stack.yaml:3:1: error: gpu: expected a key of this file, found "
                       "'gpu', which describes the part, not the software stack: it "
                       "belongs in the hardware profile " +
                           dir.file("hw.yaml")))
      << what;
  EXPECT_TRUE(contains(what,
                       "my_stack.yaml:6:3: error: workload.model: expected a key of this "
                       "file, found 'workload.model', which is the job's, not the "
                       "software stack's: set it in the scenario"))
      << what;
  EXPECT_TRUE(contains(what,
                       "my_stack.yaml:8:14: error: workload.fsdp.version: expected 1 or 2, "
                       "found '3'"))
      << what;
  EXPECT_TRUE(contains(what,
                       "hw.yaml:3:1: error: workload: expected a key of this file, found "
                       "'workload', which is the software stack's, not the part's: it "
                       "belongs in the stack profile " +
                           dir.file("my_stack.yaml")))
      << what;
}

// A stack that needs what the part lacks: Float8 on an A100, at the stack's
// line, naming the profile's file.
TEST(StackProfile, AStackNeedingWhatThePartLacksIsAnErrorNamingBoth) {
  const ScratchDir dir;
  write(dir, "fp8.yaml",
        "extends: " + kStacks +
            "torchtitan.yaml\nname: fp8\nworkload:\n  float8:\n"
            "    recipe: tensorwise\n");
  const std::string path = write(dir, "s.yaml",
                                 "name: job\nhardware: a100\nstack: fp8.yaml\n"
                                 "cluster: {nodes: 1, node: hgx_a100}\n"
                                 "workload: {model: llama3-8b, seq_len: 2048, local_batch: 1, "
                                 "torch_compile: true}\n");
  const std::string what = config_error([&] { load_step_scenario(path, {}); });
  EXPECT_TRUE(contains(what, dir.file("fp8.yaml") +
                                 ":5:13: error: workload.float8.recipe: "
                                 "expected none on hardware profile a100 (" +
                                 kHardware + "a100.yaml), which has no FP8 tensor cores"))
      << what;
}

}  // namespace
}  // namespace clustersim::cli
