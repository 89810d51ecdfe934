#include "cli/topo_command.h"

#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/progress.h"
#include "config/atomic_file.h"
#include "config/scenario_loader.h"
#include "scenario/scenario_schema.h"
#include "topology/cluster.h"
#include "topology/cluster_config.h"
#include "topology/cluster_graphviz.h"
#include "topology/cluster_summary.h"

namespace clustersim::cli {

CommandSpec topo_command_spec() {
  return {"topo",
          "Build a scenario's cluster and print its size, switches, links and bisection.",
          {"SCENARIO"},
          {{"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
           {"--dot", "FILE", false,
            "also write the graph for GraphViz to FILE (up to " +
                std::to_string(topology::kMaxDotVertices) + " vertices)"},
           quiet_option()},
          "Bisection bandwidth: per direction, at the narrowest tier of a balanced cut of the\n"
          "NICs, summed over all switch trees (rails x planes); NVLink is not counted.\n"
          "Longest route: most hops (links) on any GPU-to-GPU route, from the structure.\n"
          "With --dot, 'wrote FILE' on stderr (not with --quiet)."};
}

int run_topo_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const sim::ConfigSchema schema = build_scenario_schema();
  const std::vector<std::string> overrides = parsed.values("--set");
  const sim::ConfigValues values =
      sim::load_scenario_file(parsed.positionals[0], schema, overrides);
  const topology::ClusterSpec spec = topology::read_cluster_spec(values);
  const topology::Cluster cluster = topology::build_cluster(spec);

  const std::string dot_path = parsed.value_or("--dot", "");
  if (!dot_path.empty()) {
    if (cluster.vertex_count() > topology::kMaxDotVertices) {
      throw sim::OutputError(
          "--dot " + dot_path + ": the cluster has " + std::to_string(cluster.vertex_count()) +
          " vertices; expected at most " + std::to_string(topology::kMaxDotVertices) +
          " for a drawing (use a smaller cluster.nodes)");
    }
    sim::write_file_atomically(dot_path, topology::cluster_to_dot(cluster));
    StatusLine(err, "clustersim topo", status_mode(parsed, err)).note("wrote " + dot_path);
  }
  out << "scenario: " << values.get_string("name") << "\n";
  out << topology::format_summary(cluster, topology::summarize(cluster));
  return kExitOk;
}

}  // namespace clustersim::cli
