#include "cli/import_command.h"

#include <array>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/progress.h"
#include "config/atomic_file.h"
#include "config/suggest.h"
#include "config/text_fields.h"
#include "scenario/imported_scenario.h"
#include "scenario/nemo_import.h"
#include "scenario/torchtitan_import.h"

namespace clustersim::cli {

namespace {

constexpr std::array<std::string_view, 2> kTools = {"torchtitan", "nemo"};

ImportOptions options_from(const ParsedCommand& parsed) {
  ImportOptions options;
  if (parsed.has("--gpus")) {
    options.gpus = parsed.positive_int_or("--gpus", 1, int64_t{1} << 30, "a number of GPUs");
  }
  if (!parsed.has("--hardware")) {
    throw UsageError(
        "expected --hardware NAME (a shipped profile such as h100, h100_96gb_500w, a100, or the "
        "path of a profile): a training config does not say which GPUs run it");
  }
  options.hardware = parsed.value_or("--hardware", "");
  options.node = parsed.value_or("--node", "");
  options.fabric = parsed.value_or("--fabric", "");
  options.name = parsed.value_or("--name", "");
  options.sets = parsed.values("--set");
  const std::string output = parsed.value_or("-o", "");
  if (!output.empty()) {
    const std::filesystem::path folder = std::filesystem::path(output).parent_path();
    options.scenario_dir = folder.empty() ? "." : folder.string();
  }
  return options;
}

}  // namespace

CommandSpec import_command_spec() {
  return {"import",
          "Write a scenario from a torchtitan TOML or NeMo/Megatron-Core YAML training config.",
          {"FRAMEWORK", "CONFIG"},
          {{"-o", "FILE", false, "write the scenario to FILE (atomically) instead of stdout"},
           {"--hardware", "NAME", false,
            "the GPUs' hardware profile: a shipped profile's name (a100, h100, h100_96gb_500w, "
            "h200, ...) or a path (required)"},
           {"--gpus", "N", false,
            "GPUs in the job: torchrun's --nproc_per_node x --nnodes (torchtitan, needed when a "
            "data-parallel degree is -1); must agree with NeMo's trainer.num_nodes x devices"},
           {"--node", "PRESET", false,
            "node preset: hgx_h100, hgx_h200, hgx_a100, hgx_b200, gb200_nvl72, gb300_nvl72 or "
            "custom (default: the hardware's: hgx_a100 for a100*, hgx_h200 for h200*, hgx_b200 "
            "for b200*, gb200_nvl72 for gb200*, gb300_nvl72 for gb300*, else hgx_h100)"},
           {"--fabric", "TYPE", false, "rail_optimized (default), fat_tree or single_switch"},
           {"--name", "NAME", false, "the scenario's name (default: the config's file name)"},
           {"--set", "KEY=VALUE", true,
            "write a scenario key (what the config cannot say, or a change), e.g. "
            "--set cluster.fabric.switch_radix=32"},
           quiet_option()},
          "FRAMEWORK is torchtitan (its train config TOML, the 2024 and 2025 layouts) or nemo\n"
          "(NeMo's megatron_gpt_config.yaml / NeMo-Framework-Launcher recipe layout). Every\n"
          "written key carries a comment naming the config key (or option, or the framework's\n"
          "default) it came from; a comment block lists each key of the config with no\n"
          "counterpart, with its value, and what was only approximated (also said on stderr).\n"
          "The scenario is checked as `check` and `run` read it before it is written; its\n"
          "problems are reported at the config's FILE:LINE:COL. With -o, 'wrote FILE' on stderr\n"
          "(--quiet leaves it out). docs/import.md has the mapping."};
}

int run_import_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const std::string tool = parsed.positionals[0];
  const std::string config = parsed.positionals[1];
  if (tool != kTools[0] && tool != kTools[1]) {
    std::string message = "unknown framework '" + tool + "'; expected torchtitan or nemo";
    if (const auto guess = sim::suggest(sim::ascii_lower(tool), kTools)) {
      message += " (did you mean '" + *guess + "'?)";
    }
    throw UsageError(message);
  }
  const ImportOptions options = options_from(parsed);
  const ImportedScenario scenario =
      tool == "torchtitan" ? import_torchtitan(config, options) : import_nemo(config, options);
  const std::string yaml = scenario_yaml(scenario);
  for (const std::string& note : scenario.approximations) {
    err << "clustersim import: note: " << note << "\n";
  }
  const std::string output = parsed.value_or("-o", "");
  if (output.empty()) {
    out << yaml;
    return kExitOk;
  }
  sim::write_file_atomically(output, yaml);
  StatusLine status(err, "clustersim import", status_mode(parsed, err));
  status.note("wrote " + output + ": " + std::to_string(scenario.keys.size()) + " keys from " +
              config + ", " + std::to_string(scenario.unmapped.size()) +
              " of its keys without a counterpart (listed in its comments)");
  return kExitOk;
}

}  // namespace clustersim::cli
