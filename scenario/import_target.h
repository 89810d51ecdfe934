// What an import takes from the command line for what a training config
// cannot say (the GPU count where the config lacks it, the hardware
// profile, the node, the fabric, the scenario's name, further keys), how
// those become keys of the written scenario (scenario/imported_scenario.h),
// and the check that the scenario is one `check` and `run` accept, with its
// errors pointed back at the config's keys.
//
// Errors: sim::DiagnosticSink / sim::ConfigError entries at the option
// ("--hardware h1000") or at the config's file:line:col, each with expected
// and found. Thread safety: pure functions (they read the shipped profiles'
// folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "scenario/imported_scenario.h"

namespace clustersim::cli {

struct ImportOptions {
  std::optional<int64_t> gpus;    // --gpus: GPUs in the job
  std::string hardware;           // --hardware: a shipped profile's bare name, or a path
  std::string node;               // --node: a node preset or custom; "" for the hardware's GPU's
  std::string fabric;             // --fabric: "" for rail_optimized
  std::string name;               // --name: "" for the config file's name without its extension
  std::vector<std::string> sets;  // --set KEY=VALUE, in command-line order
  // The folder the scenario is written to: its hardware path is written
  // relative to it (the current folder when it goes to stdout).
  std::string scenario_dir = ".";
};

// The GPUs of the job and what gave the count ("--gpus 8", "trainer.num_nodes
// 6 x trainer.devices 8") with where to report a problem with it.
struct JobGpus {
  int64_t count = 0;
  std::string source;
  sim::SourceLocation where;
  std::string source_key;  // the config's key, or "" for an option
};

// The node preset an import assumes for a hardware profile without --node:
// hgx_a100 for a profile named a100..., hgx_h200 for h200..., else hgx_h100.
std::string default_node_for(const std::string& hardware);

// Sets the scenario's name (--name, else `config_stem`), its hardware, and
// cluster.nodes / node / fabric for the job's GPUs, then applies --set
// (replacing keys already set; `name` and `description` included). Every
// problem goes to `sink`: an unknown profile or node, GPUs that fill no
// whole number of nodes, a --set without '='.
void add_target_keys(ImportedScenario& scenario, const ImportOptions& options, const JobGpus& gpus,
                     const std::string& config_stem, sim::DiagnosticSink& sink);

// Reads `yaml`, the scenario to be written at `scenario_path`, as `check`
// and `run` read it (keys, cluster, hardware profile, workload). Throws
// sim::ConfigError listing every problem, each pointed at the config key
// (or option) its scenario key came from.
void check_imported_scenario(const ImportedScenario& scenario, const std::string& yaml,
                             const std::string& scenario_path);

}  // namespace clustersim::cli
