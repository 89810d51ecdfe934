#include "collectives/tuner.h"

#include <stdexcept>
#include <string>

namespace clustersim::collectives {

TunedCollective tune_collective(const HardwareProfile& profile, const GroupGeometry& geometry,
                                CollectiveOp op, int64_t bytes, const ForcedChoice& forced) {
  std::optional<TunedCollective> best;
  std::string first_reason;
  for (Algorithm a : kAllAlgorithms) {
    if (forced.algorithm && *forced.algorithm != a) continue;
    // Tree inside one node is a chain that NCCL's tuner never picks.
    if (!forced.algorithm && a == Algorithm::kTree && geometry.nodes == 1) continue;
    for (Protocol p : kAllProtocols) {
      if (forced.protocol && *forced.protocol != p) continue;
      const int lo = forced.channels ? *forced.channels : 1;
      const int hi = forced.channels ? *forced.channels : profile.max_channels;
      for (int c = lo; c <= hi; ++c) {
        const CollectiveChoice choice{a, p, c};
        const std::string why = why_invalid(profile, geometry, op, choice);
        if (!why.empty()) {
          if (first_reason.empty()) first_reason = why;
          break;  // validity does not depend on the channel count beyond its range
        }
        const CostBreakdown cost = collective_cost(profile, geometry, op, bytes, choice);
        // A relative margin, so that rounding does not break ties between
        // channel counts whose times are equal in exact arithmetic.
        if (!best || cost.seconds() < best->cost.seconds() * (1 - 1e-12)) {
          best = TunedCollective{choice, cost};
        }
      }
    }
  }
  if (!best) {
    std::string what = std::string("no valid way to run ") + to_string(op) + " on " +
                       std::to_string(geometry.ranks) + " ranks (" +
                       std::to_string(geometry.nodes) + " nodes)";
    if (forced.algorithm) what += std::string(" with algorithm ") + to_string(*forced.algorithm);
    if (forced.protocol) what += std::string(" with protocol ") + to_string(*forced.protocol);
    throw std::invalid_argument(what + ": " + first_reason);
  }
  return *best;
}

void add_collective_keys(sim::ConfigSchema& schema) {
  schema.add_section("collectives",
                     "Forcing the collective tuner, as NCCL_ALGO and NCCL_PROTO do; `auto` lets it "
                     "pick the fastest valid choice.");
  schema
      .add_key("collectives.algorithm", sim::ValueType::kEnum,
               "Collective algorithm: ring, tree (double binary tree) or nvls (NVLink SHARP, one "
               "node).")
      .one_of({"auto", "ring", "tree", "nvls"})
      .default_to(std::string("auto"));
  schema
      .add_key("collectives.protocol", sim::ValueType::kEnum, "NCCL protocol: LL, LL128 or Simple.")
      .one_of({"auto", "LL", "LL128", "Simple"})
      .default_to(std::string("auto"));
  schema
      .add_key("collectives.nvls", sim::ValueType::kBool,
               "NVLink SHARP (in-switch reduction) as the tuner may pick it, NCCL_NVLS_ENABLE: "
               "false keeps every collective off NVLS even on a part that has it (NVIDIA's "
               "Megatron-Bridge benchmarks set NCCL_NVLS_ENABLE=0).")
      .default_to(true);
  schema
      .add_key("collectives.routing", sim::ValueType::kEnum,
               "How `run` spreads collective traffic over switch-to-switch links: adaptive (a "
               "switch's parallel uplinks as one bundle, as adaptive routing or packet spraying "
               "do) or ecmp (one hashed path per ring hop, so hops can collide).")
      .one_of({"adaptive", "ecmp"})
      .default_to(std::string("adaptive"));
}

void apply_nvls_setting(const sim::ConfigValues& values, HardwareProfile& profile,
                        sim::DiagnosticSink& sink) {
  if (!values.has("collectives.nvls") || values.get_bool("collectives.nvls")) return;
  profile.nvls_supported = false;
  if (values.has("collectives.algorithm") && values.get_string("collectives.algorithm") == "nvls") {
    sink.add(values.where("collectives.algorithm"), "collectives.algorithm",
             "expected auto, ring or tree with collectives.nvls false (NVLS is off), found nvls");
  }
}

Routing read_routing(const sim::ConfigValues& values) {
  return values.get_string("collectives.routing") == "ecmp" ? Routing::kEcmp : Routing::kAdaptive;
}

ForcedChoice read_forced_choice(const sim::ConfigValues& values) {
  ForcedChoice forced;
  if (values.has("collectives.algorithm")) {
    const std::string& algorithm = values.get_string("collectives.algorithm");
    if (algorithm == "ring") forced.algorithm = Algorithm::kRing;
    if (algorithm == "tree") forced.algorithm = Algorithm::kTree;
    if (algorithm == "nvls") forced.algorithm = Algorithm::kNvls;
  }
  if (values.has("collectives.protocol")) {
    const std::string& protocol = values.get_string("collectives.protocol");
    if (protocol == "LL") forced.protocol = Protocol::kLL;
    if (protocol == "LL128") forced.protocol = Protocol::kLL128;
    if (protocol == "Simple") forced.protocol = Protocol::kSimple;
  }
  return forced;
}

}  // namespace clustersim::collectives
