// The order of the device mesh's dims, slowest-varying first: which ranks
// sit next to each other, and so which groups share a node. torchtitan's
// order [pp, dp_replicate, dp_shard, cp, tp] (tp fastest, inside a node) is
// the default; `workload.parallelism.mesh_order` chooses another, e.g.
// Megatron-LM's habit of putting the data-parallel dims inside the pipeline
// stage, or "tp across nodes" as a what-if.
//
// Thread safety: values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::workloads {

// dp_shard here is FSDP's shard dim without cp: the shard group is
// dp_shard x cp flattened, dp_shard major (torchtitan's dp_shard_cp).
enum class MeshDim : uint8_t { kPp, kDpReplicate, kDpShard, kCp, kTp };
inline constexpr int kMeshDims = 5;
using MeshOrder = std::array<MeshDim, kMeshDims>;  // slowest-varying first
inline constexpr MeshOrder kTorchtitanMeshOrder = {MeshDim::kPp, MeshDim::kDpReplicate,
                                                   MeshDim::kDpShard, MeshDim::kCp, MeshDim::kTp};

std::string_view mesh_dim_name(MeshDim dim);  // torchtitan's dim names: "pp", "dp_shard", ...
// "pp dp_replicate dp_shard cp tp" (spaces and/or commas between names).
std::string mesh_order_text(const MeshOrder& order);
// Parses `text` into *order. Returns "" when it names each of the five dims
// once, otherwise what was expected (for the error message).
std::string parse_mesh_order(std::string_view text, MeshOrder* order);

// Declares workload.parallelism.mesh_order; reads it (already validated).
void add_mesh_order_key(sim::ConfigSchema& schema);
MeshOrder read_mesh_order(const sim::ConfigValues& values);

}  // namespace clustersim::workloads
