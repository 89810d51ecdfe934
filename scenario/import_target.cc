#include "scenario/import_target.h"

#include <filesystem>
#include <optional>
#include <system_error>

#include "config/scenario_loader.h"
#include "config/suggest.h"
#include "config/text_fields.h"
#include "hardware/shipped_profiles.h"
#include "scenario/network_scenario.h"
#include "scenario/scenario_schema.h"
#include "scenario/stack_profile.h"
#include "scenario/step_config.h"
#include "topology/cluster_config.h"

namespace clustersim::cli {

namespace {

namespace fs = std::filesystem;

std::string str(int64_t x) { return std::to_string(x); }

sim::SourceLocation option_at(const std::string& option, const std::string& value) {
  return sim::SourceLocation{option + " " + value, 0, 0};
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The profile --hardware names, as the path to write into the scenario
// (relative to the scenario's folder); "" after reporting when there is none.
std::string hardware_value(const ImportOptions& options, sim::DiagnosticSink& sink) {
  const std::string& given = options.hardware;
  // A shipped profile named bare is written bare: the scenario then finds it
  // wherever it is moved (hardware/shipped_profiles.h).
  if (collectives::is_bare_profile_name(given) && !shipped_profile_path(given).empty()) {
    return given;
  }
  std::string profile = shipped_profile_path(given);
  std::error_code ec;
  if (fs::is_regular_file(given, ec)) profile = given;
  if (profile.empty()) {
    const std::vector<std::string> names = shipped_profile_names();
    std::string message = "expected a shipped profile's name (" + join(names) +
                          ") or the path of a profile file, found '" + given + "'";
    if (const auto guess = sim::suggest(given, names)) {
      message += " (did you mean '" + *guess + "'?)";
    }
    sink.add(option_at("--hardware", given), "hardware", message);
    return "";
  }
  const fs::path absolute = fs::weakly_canonical(fs::absolute(profile, ec), ec);
  const fs::path folder = fs::weakly_canonical(fs::absolute(options.scenario_dir, ec), ec);
  // Relative when both lie in one tree (a repository) below the top folder, so that the
  // pair can move together; absolute otherwise (a scenario in /tmp).
  const auto top = [](const fs::path& p) {
    const auto part = ++p.begin();
    return part == p.end() ? fs::path() : *part;
  };
  if (ec || top(absolute) != top(folder)) return absolute.string();
  const fs::path relative = absolute.lexically_relative(folder);
  return relative.empty() ? absolute.string() : relative.string();
}

// The GPUs per node of the node the scenario will name; 0 after reporting
// when it has none.
int64_t gpus_per_node(const ImportedScenario& scenario, const std::string& node,
                      const sim::SourceLocation& node_at, sim::DiagnosticSink& sink) {
  if (node == "custom") {
    const ImportedKey* k = scenario.find("cluster.custom_node.gpus_per_node");
    const std::optional<int64_t> n =
        k == nullptr ? std::nullopt : sim::parse_number<int64_t>(k->value);
    if (n && *n > 0) return *n;
    sink.add(node_at, "cluster.node",
             "expected --set cluster.custom_node.gpus_per_node=N (and the other "
             "cluster.custom_node keys) with a custom node, found " +
                 (k == nullptr ? std::string("none") : "'" + k->value + "'"));
    return 0;
  }
  topology::NodeSpec spec;
  if (topology::node_preset(node, spec)) return spec.gpus_per_node;
  sink.add(node_at, "cluster.node",
           "expected a node preset (hgx_h100, hgx_h200, hgx_a100, hgx_b200, gb200_nvl72, "
           "gb300_nvl72) or custom, found '" +
               node + "'");
  return 0;
}

void apply_sets(ImportedScenario& scenario, const std::vector<std::string>& sets,
                sim::DiagnosticSink& sink) {
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0) {
      sink.add(sim::SourceLocation{"--set " + set, 0, 0}, "",
               "expected KEY=VALUE (a scenario key, e.g. workload.torch_compile=true), found '" +
                   set + "'");
      continue;
    }
    const std::string key = set.substr(0, eq);
    const std::string value = set.substr(eq + 1);
    if (key == "name") {
      scenario.name = value;
    } else if (key == "description") {
      scenario.description = value;
    } else {
      scenario.set({key, value, "--set", sim::SourceLocation{"--set " + set, 0, 0}, ""});
    }
    scenario.supplied.push_back(key + ": " + value + " (--set)");
  }
}

}  // namespace

std::string default_node_for(const std::string& hardware) {
  const std::string stem = fs::path(hardware).stem().string();
  if (stem.rfind("a100", 0) == 0) return "hgx_a100";
  if (stem.rfind("h200", 0) == 0) return "hgx_h200";
  if (stem.rfind("h800", 0) == 0) return "hgx_h800";
  if (stem.rfind("b200", 0) == 0) return "hgx_b200";
  if (stem.rfind("gb200", 0) == 0) return "gb200_nvl72";
  if (stem.rfind("gb300", 0) == 0) return "gb300_nvl72";
  return "hgx_h100";
}

void add_target_keys(ImportedScenario& scenario, const ImportOptions& options, const JobGpus& gpus,
                     const std::string& config_stem, sim::DiagnosticSink& sink) {
  scenario.name = options.name.empty() ? config_stem : options.name;
  scenario.supplied.push_back("GPUs: " + str(gpus.count) + " (" + gpus.source + ")");
  const std::string hardware = hardware_value(options, sink);
  scenario.set({"hardware", hardware, "--hardware " + options.hardware,
                option_at("--hardware", options.hardware), ""});
  scenario.supplied.push_back("hardware profile: " + options.hardware + " (--hardware)");
  // The software stack is the tool whose config this is (scenarios/stacks/
  // ships one of each tool's name); --set stack=... names another.
  scenario.set({"stack", scenario.tool, "the stack of a " + scenario.tool + " config",
                sim::SourceLocation{"import " + scenario.tool, 0, 0}, ""});
  scenario.supplied.push_back("software stack: " + scenario.tool + " (the config's tool)");
  apply_sets(scenario, options.sets, sink);

  // A key given by --set stays as given.
  const auto from_set = [&](const char* key) {
    const ImportedKey* k = scenario.find(key);
    return k != nullptr && k->source == "--set" ? k : nullptr;
  };
  std::string node = options.node.empty() ? default_node_for(options.hardware) : options.node;
  const std::string node_source =
      options.node.empty() ? "the node of " + options.hardware + " (no --node)" : "--node";
  sim::SourceLocation node_at =
      options.node.empty() ? option_at("--hardware", options.hardware) : option_at("--node", node);
  const bool node_from_set = from_set("cluster.node") != nullptr;
  if (node_from_set) {
    node = from_set("cluster.node")->value;
    node_at = from_set("cluster.node")->where;
  }
  const int64_t per_node = gpus_per_node(scenario, node, node_at, sink);
  if (per_node > 0 && from_set("cluster.nodes") == nullptr) {
    if (gpus.count % per_node != 0 || gpus.count < per_node) {
      sink.add(gpus.where, gpus.source_key.empty() ? "cluster.nodes" : gpus.source_key,
               "expected a whole number of " + node + " nodes of " + str(per_node) +
                   " GPUs, found " + str(gpus.count) + " GPUs (" + gpus.source + ")");
    } else {
      scenario.set({"cluster.nodes", str(gpus.count / per_node),
                    gpus.source + " / " + str(per_node) + " GPUs per node", gpus.where,
                    gpus.source_key});
    }
  }
  if (!node_from_set) {
    scenario.set({"cluster.node", node, node_source, node_at, ""});
    scenario.supplied.push_back("node: " + node + " (" + node_source + ")");
  }
  if (from_set("cluster.fabric.type") == nullptr) {
    const std::string fabric = options.fabric.empty() ? "rail_optimized" : options.fabric;
    const std::string fabric_source =
        options.fabric.empty() ? "no --fabric: non-blocking, one tree per NIC rail" : "--fabric";
    scenario.set({"cluster.fabric.type", fabric, fabric_source, option_at("--fabric", fabric), ""});
    scenario.supplied.push_back("fabric: " + fabric + " (" + fabric_source + ")");
  }
}

void check_imported_scenario(const ImportedScenario& scenario, const std::string& yaml,
                             const std::string& scenario_path) {
  try {
    sim::ConfigValues values =
        sim::load_scenario_text(yaml, scenario_path, build_scenario_schema());
    apply_stack_profile(values, scenario_path);
    const NetworkScenario net = network_scenario_from_values(std::move(values), scenario_path);
    step_config_from_scenario(net);
  } catch (const sim::ConfigError& e) {
    sim::DiagnosticSink sink;
    for (const sim::Diagnostic& d : e.diagnostics()) {
      if (d.where.file != scenario_path) {
        sink.add(d.where, d.key_path, d.message);  // a profile's own error
        continue;
      }
      const ImportedKey* k = scenario.find(d.key_path);
      if (k == nullptr || d.where.defaulted) {
        sim::SourceLocation at{scenario.config_path, 0, 0};
        at.defaulted = d.where.defaulted;
        sink.add(at, d.key_path, d.message);
      } else if (k->source_key.empty()) {
        sink.add(k->where, d.key_path, d.message);
      } else {
        sink.add(k->where, k->source_key, d.message + " (written as " + d.key_path + ")");
      }
    }
    sink.throw_if_any();
  }
}

}  // namespace clustersim::cli
