// Communicator-group JSON (workloads/chakra/chakra_trace.h): ASTRA-sim's
// {"<pg_name>": [rank, ...], ...}.
#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/file_text.h"
#include "config/json_reader.h"
#include "config/json_writer.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

CommGroups read_comm_groups(const std::string& path) {
  return parse_comm_groups(sim::read_file_text(path), path);
}

CommGroups parse_comm_groups(std::string_view text, const std::string& path) {
  using Kind = sim::JsonValue::Kind;
  const sim::JsonValue doc = sim::parse_json(text, path);
  sim::DiagnosticSink sink;
  if (!doc.is(Kind::kObject)) {
    sink.add(doc.where(path), "",
             "expected an object of process group name -> array of ranks, found " + doc.describe());
    sink.throw_if_any();
  }

  CommGroups groups;
  for (const sim::JsonMember& member : doc.members) {
    const std::string key_path = sim::json_path_member("", member.key);
    const sim::JsonValue& ranks = member.value;
    if (!ranks.is(Kind::kArray)) {
      sink.add(ranks.where(path), key_path,
               "expected an array of ranks, found " + ranks.describe());
      continue;
    }
    if (ranks.items.empty()) {
      sink.add(ranks.where(path), key_path, "expected at least one rank, found an empty array");
      continue;
    }
    std::vector<int64_t> group;
    for (size_t i = 0; i < ranks.items.size(); ++i) {
      const sim::JsonValue& rank = ranks.items[i];
      const std::string rank_path = sim::json_path_index(key_path, i);
      if (!rank.is(Kind::kNumber) || !rank.is_integer || rank.integer < 0) {
        sink.add(rank.where(path), rank_path,
                 "expected a rank (a non-negative integer), found " + rank.describe());
        continue;
      }
      auto earlier = std::find(group.begin(), group.end(), rank.integer);
      if (earlier != group.end()) {
        sink.add(rank.where(path), rank_path,
                 "expected each rank once in a group, found rank " + std::to_string(rank.integer) +
                     " again (first at " +
                     sim::json_path_index(key_path, static_cast<size_t>(earlier - group.begin())) +
                     ")");
        continue;
      }
      group.push_back(rank.integer);
    }
    groups[member.key] = std::move(group);
  }
  sink.throw_if_any();
  return groups;
}

std::string comm_groups_json(const CommGroups& groups) {
  // One group per line, its ranks on that line. Numeric ids in numeric
  // order ("2" before "10"), so that a reader finds group k on line k + 2.
  std::vector<const CommGroups::value_type*> order;
  order.reserve(groups.size());
  bool numeric = true;
  for (const auto& group : groups) {
    order.push_back(&group);
    numeric = numeric && is_numeric_pg_name(group.first);
  }
  if (numeric) {
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return a->first.size() != b->first.size() ? a->first.size() < b->first.size()
                                                : a->first < b->first;
    });
  }
  std::ostringstream out;
  sim::JsonWriter json(out, 2, 1);
  json.begin_object();
  for (const auto* group : order) {
    json.key(group->first).begin_array();
    for (int64_t rank : group->second) json.int64(rank);
    json.end_array();
  }
  json.end_object();
  json.finish();
  out << '\n';
  return out.str();
}

}  // namespace clustersim::workloads::chakra
