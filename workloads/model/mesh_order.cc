#include "workloads/model/mesh_order.h"

namespace clustersim::workloads {

namespace {

constexpr std::array<MeshDim, kMeshDims> kAllDims = kTorchtitanMeshOrder;
const char* const kMeshOrderKey = "workload.parallelism.mesh_order";

}  // namespace

std::string_view mesh_dim_name(MeshDim dim) {
  switch (dim) {
    case MeshDim::kPp:
      return "pp";
    case MeshDim::kDpReplicate:
      return "dp_replicate";
    case MeshDim::kDpShard:
      return "dp_shard";
    case MeshDim::kCp:
      return "cp";
    case MeshDim::kTp:
      return "tp";
  }
  return "?";
}

std::string mesh_order_text(const MeshOrder& order) {
  std::string text;
  for (const MeshDim d : order) {
    if (!text.empty()) text += ' ';
    text += mesh_dim_name(d);
  }
  return text;
}

std::string parse_mesh_order(std::string_view text, MeshOrder* order) {
  const std::string expected = "each of pp, dp_replicate, dp_shard, cp, tp once, slowest first "
                               "(e.g. \"" + mesh_order_text(kTorchtitanMeshOrder) + "\")";
  MeshOrder parsed{};
  std::array<bool, kMeshDims> seen{};
  int count = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == ',') {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != ',') ++end;
    const std::string_view name = text.substr(i, end - i);
    i = end;
    bool known = false;
    for (const MeshDim d : kAllDims) {
      if (name != mesh_dim_name(d)) continue;
      const auto k = static_cast<size_t>(d);
      if (seen[k]) return expected;
      seen[k] = true;
      parsed[static_cast<size_t>(count++)] = d;
      known = true;
    }
    if (!known) return expected;
  }
  if (count != kMeshDims) return expected;
  *order = parsed;
  return "";
}

void add_mesh_order_key(sim::ConfigSchema& schema) {
  schema
      .add_key(kMeshOrderKey, sim::ValueType::kString,
               "The device mesh's dims, slowest-varying first (names apart by spaces): which "
               "ranks are neighbours, so which groups share a node. The default is torchtitan's "
               "(tp fastest, one TP group per node; pipeline stages outermost). Another order "
               "moves groups onto or off nodes, e.g. \"dp_replicate pp dp_shard cp tp\" or tp "
               "across nodes as a what-if (exec/mesh_layout.h).")
      .validated_by(
          [](const sim::ConfigValue& v) {
            MeshOrder order{};
            return parse_mesh_order(std::get<std::string>(v), &order);
          },
          "each of pp, dp_replicate, dp_shard, cp, tp once")
      .default_to(mesh_order_text(kTorchtitanMeshOrder));
}

MeshOrder read_mesh_order(const sim::ConfigValues& values) {
  MeshOrder order = kTorchtitanMeshOrder;
  parse_mesh_order(values.get_string(kMeshOrderKey), &order);
  return order;
}

}  // namespace clustersim::workloads
