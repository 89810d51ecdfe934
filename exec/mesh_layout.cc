#include "exec/mesh_layout.h"

namespace clustersim::workloads {

std::string_view group_role_name(GroupRole role) {
  switch (role) {
    case GroupRole::kNone:
      return "none";
    case GroupRole::kShard:
      return "shard";
    case GroupRole::kReplica:
      return "replica";
    case GroupRole::kTp:
      return "tp";
    case GroupRole::kPp:
      return "pp";
    case GroupRole::kCp:
      return "cp";
  }
  return "?";
}

}  // namespace clustersim::workloads
