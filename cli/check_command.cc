#include "cli/check_command.h"

#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/step_preflight.h"
#include "cli/table_text.h"
#include "cli/work_guard.h"
#include "config/scenario_loader.h"
#include "scenario/network_scenario.h"
#include "scenario/scenario_schema.h"
#include "scenario/step_config.h"
#include "topology/cluster_config.h"

namespace clustersim::cli {

namespace {

constexpr size_t kLabel = 16;

std::string row(std::string_view label, const std::string& value) {
  return labelled_row("  " + std::string(label), value, kLabel);
}

std::string cluster_text(const topology::Cluster& cluster) {
  return std::to_string(cluster.gpu_count()) + " GPUs (" + std::to_string(cluster.node_count()) +
         (cluster.node_count() == 1 ? " node x " : " nodes x ") +
         std::to_string(cluster.gpus_per_node()) + ", " + cluster.spec().node.preset + ")";
}

std::string count(int64_t n) { return with_separators(n); }

int check_step(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const StepScenario step = load_step_scenario(parsed.positionals[0], parsed.values("--set"));
  const WorkLimits limits = work_limits_from(parsed);
  const StepPreflight p = preflight_step(step.net.values, step.config, limits,
                                         parsed.has("--allow-oom"), "clustersim check", err);
  if (!p.ok) return kExitError;
  const workloads::WorkloadSpec& w = step.config.workload;
  const int64_t capacity = step.config.memory_capacity_bytes;
  out << "ok: " << step.net.values.get_string("name") << "\n";
  out << row("checked for", "run (also sweep's points, export-chakra, kernels, campaign)");
  out << row("cluster",
             cluster_text(step.net.cluster) + ", hardware profile " + step.net.profile.name);
  out << row("workload", w.model.name + " on " + count(w.world_size) + " ranks: tp " + count(w.tp) +
                             ", pp " + count(w.pp) + ", cp " + count(w.cp) + ", shard group " +
                             count(w.shard_group_size) + " x replica group " +
                             count(w.replica_group_size));
  out << row("memory", gib_text(p.memory.total()) + " of " + gib_text(capacity) + " per GPU" +
                           (p.fits ? " (fits)" : " (does not fit; --allow-oom)"));
  out << row("work", count(p.work.tasks_per_rank) + " tasks per rank on " + timelines_text(p.work) +
                         ", " + count(p.work.task_timelines()) + " tasks x timelines (limits " +
                         count(limits.max_tasks_per_rank) + " and " +
                         count(limits.max_task_timelines) + ")");
  out << row("not checked", "the step's time and events: only simulating it tells (run)");
  return kExitOk;
}

int check_network(const ParsedCommand& parsed, std::ostream& out) {
  const NetworkScenario net = load_network_scenario(parsed.positionals[0], parsed.values("--set"));
  out << "ok: " << net.values.get_string("name") << "\n";
  out << row("checked for", "collective (also validate of collectives, replay)");
  out << row("cluster", cluster_text(net.cluster) + ", hardware profile " + net.profile.name);
  out << row("not checked", "the collectives' times: only simulating them tells");
  return kExitOk;
}

int check_topo(const ParsedCommand& parsed, std::ostream& out) {
  ScenarioProblems problems;
  sim::DiagnosticSink key_problems;
  const sim::ConfigValues values = sim::load_scenario_file_keeping_going(
      parsed.positionals[0], build_scenario_schema(), parsed.values("--set"), key_problems);
  problems.add_all(std::move(key_problems));
  std::optional<topology::Cluster> cluster;
  if (const auto spec = problems.attempt([&] { return topology::read_cluster_spec(values); })) {
    cluster = problems.attempt([&] { return topology::build_cluster(*spec); });
  }
  problems.throw_if_any();
  out << "ok: " << values.get_string("name") << "\n";
  out << row("checked for", "topo");
  out << row("cluster", cluster_text(*cluster));
  return kExitOk;
}

int check_keys(const ParsedCommand& parsed, std::ostream& out) {
  const sim::ConfigValues values =
      load_scenario_values(parsed.positionals[0], parsed.values("--set"));
  out << "ok: " << values.get_string("name") << "\n";
  out << row("checked for", "keys (each known, of its type and within its limits)");
  out << row("not checked", "what they mean together (check --for run, collective or topo)");
  return kExitOk;
}

}  // namespace

CommandSpec check_command_spec() {
  CommandSpec spec{
      "check",
      "Check a scenario as a command would before simulating, print 'ok: <name>' and what was "
      "checked.",
      {"SCENARIO"},
      {{"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
       {"--for", "COMMAND", false,
        "run (default: also sweep, export-chakra, kernels, campaign), collective (also validate "
        "of collectives, replay), topo, or keys (the keys alone)"},
       {"--allow-oom", "", false, "accept a step that does not fit in GPU memory, as run does"}},
      "Makes every check the command makes short of simulating, in one pass: the keys, the\n"
      "cluster, the hardware profile, the workload on that cluster (mesh, batch, schedule,\n"
      "stragglers, forced NCCL choices), the peak memory per GPU and the step's estimated work\n"
      "against the limits below. Every problem is reported at once as\n"
      "FILE:LINE:COL: error: KEY: ..., and the command exits 1, as `run` would.\n"
      "A campaign that gives campaign.step_time simulates no step: check it --for keys."};
  for (OptionSpec& o : work_limit_options()) spec.options.push_back(std::move(o));
  return spec;
}

int run_check_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const std::string target = parsed.value_or("--for", "run");
  if (target == "run") return check_step(parsed, out, err);
  if (target == "collective") return check_network(parsed, out);
  if (target == "topo") return check_topo(parsed, out);
  if (target == "keys") return check_keys(parsed, out);
  throw UsageError("option '--for' expects run, collective, topo or keys, found '" + target + "'");
}

}  // namespace clustersim::cli
