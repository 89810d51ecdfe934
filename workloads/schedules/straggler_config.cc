#include "workloads/schedules/straggler_config.h"

#include <string>
#include <variant>

#include "config/config_error.h"
#include "config/rank_list.h"

namespace clustersim::workloads {

namespace {

const char* const kRanks = "stragglers.ranks";
const char* const kSlowdown = "stragglers.slowdown";

}  // namespace

void add_straggler_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section("stragglers",
                     "Ranks whose compute runs slower than the others' (a slow GPU, thermal "
                     "throttling); a synchronous step waits for them.");
  schema
      .add_key(kRanks, ValueType::kString,
               "The slow ranks: numbers and ranges A-B separated by commas, e.g. "
               "\"3,17,100-103\"; each below the world size.")
      .default_to(std::string())
      .validated_by(
          [](const sim::ConfigValue& value) {
            const std::string problem = sim::rank_list_problem(std::get<std::string>(value));
            return problem.empty() ? std::string()
                                   : "a list of ranks such as '3,17,100-103' (" + problem + ")";
          },
          "ranks and ranges A-B, comma-separated");
  schema
      .add_key(kSlowdown, ValueType::kFloat,
               "Each listed rank's compute takes this many times longer.")
      .default_to(1.2)
      .validated_by(
          [](const sim::ConfigValue& value) {
            return std::get<double>(value) >= 1.0 ? std::string() : std::string("a number >= 1");
          },
          ">= 1");
}

std::vector<Straggler> read_stragglers(const sim::ConfigValues& values, int64_t world_size) {
  const sim::Parsed<std::vector<int64_t>> ranks =
      sim::parse_rank_list(values.get_string(kRanks), world_size);
  if (!ranks) {
    sim::DiagnosticSink sink;
    sink.add(values.where(kRanks), kRanks,
             "expected ranks below the world size " + std::to_string(world_size) + ", found '" +
                 values.get_string(kRanks) + "': " + ranks.error);
    sink.throw_if_any();
  }
  const double slowdown = values.get_float(kSlowdown);
  std::vector<Straggler> stragglers;
  stragglers.reserve(ranks->size());
  for (int64_t rank : *ranks) stragglers.push_back(Straggler{rank, slowdown});
  return stragglers;
}

}  // namespace clustersim::workloads
