// Communicator groups given rank by rank, beside the device mesh's
// (exec/mesh_layout.h): what a front end that reads its groups (Chakra
// traces with their comm-group file) hands the engine. A program's channel
// with slot k runs on rank r's group slot_groups[slot_begin[r] + k]; a
// send/recv peer p of rank r is rank peer_base[r] + p.
//
// Units: ranks. Thread safety: a value, read-only while the engine runs.
#pragma once

#include <cstdint>
#include <vector>

namespace clustersim::workloads {

struct RankGroups {
  std::vector<std::vector<int64_t>> members;  // by group: its ranks in ring order
  std::vector<int64_t> slot_begin;            // by rank, + 1 (empty: no slots)
  std::vector<int32_t> slot_groups;
  std::vector<int64_t> peer_base;  // by rank (empty: every base is 0)

  int32_t group_of(int64_t rank, int32_t slot) const {
    return slot_groups[static_cast<size_t>(slot_begin[static_cast<size_t>(rank)] + slot)];
  }
  // The slot of `rank` whose group is g (-1 if none).
  int32_t slot_of(int64_t rank, int32_t g) const {
    const auto begin = static_cast<size_t>(slot_begin[static_cast<size_t>(rank)]);
    const auto end = static_cast<size_t>(slot_begin[static_cast<size_t>(rank) + 1]);
    for (size_t i = begin; i < end; ++i) {
      if (slot_groups[i] == g) return static_cast<int32_t>(i - begin);
    }
    return -1;
  }
  int64_t peer(int64_t rank, int64_t p) const {
    return (peer_base.empty() ? 0 : peer_base[static_cast<size_t>(rank)]) + p;
  }
};

}  // namespace clustersim::workloads
