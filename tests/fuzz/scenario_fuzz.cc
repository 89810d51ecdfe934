// libFuzzer target: a scenario YAML file through the full schema, the
// cluster and workload readers, and --set overrides: every line of the input
// starting "#set " (a YAML comment, so the document is unchanged) is also
// given as `--set <rest of the line>`. Properties: fuzz_support.h.
#include <string>
#include <string_view>
#include <vector>

#include "config/scenario_loader.h"
#include "scenario/scenario_schema.h"
#include "tests/fuzz/fuzz_support.h"
#include "topology/cluster_config.h"
#include "workloads/model/workload_config.h"

namespace fz = clustersim::fuzz;
namespace sim = clustersim::sim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  std::vector<std::string> overrides;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    if (line.rfind("#set ", 0) == 0) overrides.emplace_back(line.substr(5));
    at = end + 1;
  }
  static const sim::ConfigSchema schema = clustersim::cli::build_scenario_schema();
  fz::parses(
      [&] {
        const sim::ConfigValues values =
            sim::load_scenario_text(text, "fuzz.yaml", schema, overrides);
        const clustersim::topology::ClusterSpec cluster =
            clustersim::topology::read_cluster_spec(values);
        clustersim::workloads::read_workload_spec(
            values, cluster.nodes * cluster.node.gpus_per_node, cluster.node.gpus_per_node);
      },
      "fuzz.yaml", text);
  return 0;
}
