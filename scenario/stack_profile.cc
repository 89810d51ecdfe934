#include "scenario/stack_profile.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "hardware/hardware_profile.h"
#include "hardware/shipped_profiles.h"
#include "scenario/scenario_schema.h"

namespace clustersim::cli {

namespace {

bool is_stack_key(std::string_view path) {
  return std::find(kStackKeys.begin(), kStackKeys.end(), path) != kStackKeys.end();
}

bool is_identity_key(std::string_view path) {
  return path == "name" || path == "description" || path == sim::kExtendsKey;
}

// The sections above `path`, outermost first ("workload", "workload.fsdp").
std::vector<std::string> sections_above(std::string_view path) {
  std::vector<std::string> out;
  for (std::string_view p = sim::parent_path(path); !p.empty(); p = sim::parent_path(p)) {
    out.push_back(std::string(p));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string stacks_phrase() {
  std::string list;
  for (const std::string& name : shipped_stack_names()) list += (list.empty() ? "" : ", ") + name;
  if (list.empty()) list = "none found in " + shipped_stacks_dir();
  return "one of the shipped stacks by its bare name (" + list +
         "; e.g. 'stack: torchtitan') or the path of a stack file, relative to the scenario's "
         "folder unless absolute";
}

}  // namespace

std::string shipped_stacks_dir() { return CLUSTERSIM_STACKS_DIR; }

std::vector<std::string> shipped_stack_names() {
  return collectives::yaml_stems_in(shipped_stacks_dir());
}

std::string resolve_stack_path(const std::string& scenario_path, const std::string& value) {
  return collectives::resolve_named_file(scenario_path, value, shipped_stacks_dir());
}

sim::ConfigSchema stack_profile_schema(const sim::ConfigSchema& scenario,
                                       const sim::ConfigSchema& hardware,
                                       const std::string& hardware_path) {
  sim::ConfigSchema s;
  s.add_key("name", sim::ValueType::kString, "Name of the stack, shown in reports.")
      .required()
      .not_empty();
  s.add_key("description", sim::ValueType::kString, "What the stack is: framework, version.")
      .default_to(std::string());
  sim::add_extends_key(s);
  for (const std::string_view key : kStackKeys) {
    for (const std::string& section : sections_above(key)) {
      if (s.find_section(section) == nullptr) {
        const sim::SectionSpec* spec = scenario.find_section(section);
        s.add_section(section, spec != nullptr ? spec->doc : "");
      }
    }
    const sim::KeySpec* spec = scenario.find_key(key);
    if (spec == nullptr) continue;  // a layer that did not register it (tests' partial schemas)
    sim::KeySpec& copy = s.add_key(std::string(key), spec->type, spec->doc);
    copy = *spec;
    copy.is_required = false;
    copy.needed_by.clear();
  }
  const std::string job =
      "is the job's, not the software stack's: set it in the scenario (a stack profile holds "
      "what the framework does: docs/stacks.md)";
  for (const auto& [path, spec] : scenario.keys()) {
    if (!is_stack_key(path) && !is_identity_key(path)) s.add_foreign(path, job);
  }
  for (const auto& [path, spec] : scenario.sections()) {
    if (!path.empty() && s.find_section(path) == nullptr) s.add_foreign(path, job);
  }
  const std::string part =
      "describes the part, not the software stack: it belongs in the hardware "
      "profile" +
      (hardware_path.empty() ? std::string(" (scenarios/hardware/)") : " " + hardware_path);
  for (const auto& [path, spec] : hardware.keys()) {
    if (!is_identity_key(path) && sim::parent_path(path).empty()) s.add_foreign(path, part);
  }
  for (const auto& [path, spec] : hardware.sections()) {
    if (!path.empty() && sim::parent_path(path).empty()) s.add_foreign(path, part);
  }
  return s;
}

sim::ConfigSchema hardware_schema_for_scenario(const std::string& stack_path) {
  sim::ConfigSchema s = collectives::hardware_profile_schema();
  const std::string belongs =
      "is the software stack's, not the part's: it belongs in " +
      (stack_path.empty() ? std::string("a stack profile (scenarios/stacks/) or the scenario")
                          : "the stack profile " + stack_path);
  s.add_foreign("workload", belongs);
  s.add_foreign("collectives", belongs);
  s.add_foreign("stack", belongs);
  return s;
}

std::string stack_path_of(const sim::ConfigValues& values, const std::string& scenario_path) {
  if (!values.has("stack") || values.get_string("stack").empty()) return "";
  return resolve_stack_path(scenario_path, values.get_string("stack"));
}

void apply_stack_profile(sim::ConfigValues& values, const std::string& scenario_path,
                         sim::DiagnosticSink& problems) {
  const std::string path = stack_path_of(values, scenario_path);
  if (path.empty()) return;
  const std::string& value = values.get_string("stack");
  if (const sim::ReadOutcome file = sim::check_input_file(path);
      file.failure != sim::ReadFailure::kNone) {
    const bool bare =
        path.starts_with(shipped_stacks_dir()) && value.find('/') == std::string::npos;
    problems.add(values.where("stack"), "stack",
                 "expected " + stacks_phrase() + ", found " +
                     (bare ? "'" + value + "', which this build does not ship"
                           : sim::found_phrase(file, path)));
    return;
  }
  const std::string hardware_path =
      values.has("hardware") && !values.get_string("hardware").empty()
          ? collectives::resolve_hardware_path(scenario_path, values.get_string("hardware"))
          : "";
  const sim::ConfigSchema schema = stack_profile_schema(
      build_scenario_schema(), collectives::hardware_profile_schema(), hardware_path);
  sim::ConfigValues stack;
  try {
    stack = sim::load_scenario_file_keeping_going(path, schema, {}, problems);
  } catch (const sim::ConfigError& e) {
    for (const sim::Diagnostic& d : e.diagnostics()) problems.add(d.where, d.key_path, d.message);
    return;
  }
  for (const auto& [key, entry] : stack.entries()) {
    if (entry.is_default || !is_stack_key(key)) continue;
    if (!values.has(key) || values.entry(key).is_default) values.set(key, entry);
  }
}

void apply_stack_profile(sim::ConfigValues& values, const std::string& scenario_path) {
  sim::DiagnosticSink problems;
  apply_stack_profile(values, scenario_path, problems);
  problems.throw_if_any();
}

void add_stack_keys(sim::ConfigSchema& schema) {
  schema
      .add_key("stack", sim::ValueType::kString,
               "Software stack profile (what the training framework does: its kernels, "
               "data-parallel mode and overlaps, optimizer, NCCL choices, and its fitted "
               "workload.stack_efficiency): a shipped stack by its bare name (torchtitan, "
               "fsdp1, megatron_core, nemo, ...: the files of scenarios/stacks/) or the path of "
               "a stack file, relative to the scenario file's directory unless absolute. Its "
               "values take the place of the defaults of the keys the scenario leaves out; "
               "docs/stacks.md. Without one, every key keeps the schema's default.")
      .not_empty();
}

}  // namespace clustersim::cli
