// Ranks laid out as a device mesh, and the process groups the mesh defines.
// The mesh's dims are pp, dp_replicate, dp_shard, cp and tp
// (workloads/model/mesh_order.h), laid out in `order`, slowest-varying first:
// torchtitan's [pp, dp_replicate, dp_shard, cp, tp] unless the scenario
// chooses another. A rank's coordinate on dim d is
//   (r / stride(d)) % size(d),  stride(d) = the product of the sizes after d,
// so in torchtitan's order a tensor-parallel group is tp consecutive ranks
// (one node) and stage s is ranks s * world / pp onwards. The FSDP shard
// group is torchtitan's flattened dp_shard_cp (`shard` counts the cp ranks
// too; its member i is dp_shard i / cp, cp i % cp); the replica group is
// dp_replicate; the pipeline group is the pp ranks that differ only in their
// stage. A group's id enumerates the coordinates of the dims it does not
// span, slowest first; its members are listed in ring order (by their
// coordinates on the dims it spans). Groups are computed, not stored, so a
// million ranks cost nothing here.
//
// Thread safety: a value; all functions are pure.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "workloads/model/mesh_order.h"

namespace clustersim::workloads {

// The process group a collective runs on: the FSDP shard group, the HSDP
// replica group (all data-parallel ranks for NO_SHARD), the tensor-parallel
// group, the pipeline group (one rank per stage), or the context-parallel
// group (the ranks that split one sequence).
enum class GroupRole : uint8_t { kNone, kShard, kReplica, kTp, kPp, kCp };
inline constexpr int kGroupRoles = 6;
std::string_view group_role_name(GroupRole role);

struct Layout {
  int64_t world = 0;
  int64_t tp = 1;
  int64_t shard = 1;
  int64_t replica = 1;
  int64_t pp = 1;
  int64_t cp = 1;  // divides shard
  MeshOrder order = kTorchtitanMeshOrder;

  int64_t stage_ranks() const { return world / pp; }
  int64_t stage_of(int64_t r) const { return coord(MeshDim::kPp, r); }

  int64_t dim_size(MeshDim d) const {
    switch (d) {
      case MeshDim::kPp:
        return pp;
      case MeshDim::kDpReplicate:
        return replica;
      case MeshDim::kDpShard:
        return shard / cp;
      case MeshDim::kCp:
        return cp;
      case MeshDim::kTp:
        return tp;
    }
    return 1;
  }
  int64_t stride(MeshDim d) const {
    int64_t s = 1;
    for (int i = kMeshDims - 1; i >= 0; --i) {
      const MeshDim o = order[static_cast<size_t>(i)];
      if (o == d) break;
      s *= dim_size(o);
    }
    return s;
  }
  int64_t coord(MeshDim d, int64_t r) const { return r / stride(d) % dim_size(d); }

  int64_t group_count(GroupRole role) const {
    return role == GroupRole::kNone ? 0 : world / group_size(role);
  }
  int64_t group_size(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return shard;
      case GroupRole::kReplica:
        return replica;
      case GroupRole::kTp:
        return tp;
      case GroupRole::kPp:
        return pp;
      case GroupRole::kCp:
        return cp;
      case GroupRole::kNone:
        break;
    }
    return 1;
  }
  // The group of `role` that rank r belongs to.
  int64_t group_of(GroupRole role, int64_t r) const {
    if (role == GroupRole::kNone) return 0;
    // r's coordinates, by position in `order`; dims of size 1 cost no
    // division (this runs for every collective a rank joins).
    int64_t c[kMeshDims];
    for (int k = kMeshDims - 1; k >= 0; --k) {
      const int64_t n = dim_size(order[static_cast<size_t>(k)]);
      if (n == 1) {
        c[k] = 0;
        continue;
      }
      c[k] = r % n;
      r /= n;
    }
    int64_t g = 0;
    for (int k = 0; k < kMeshDims; ++k) {
      const MeshDim d = order[static_cast<size_t>(k)];
      if (!spans(role, d)) g = g * dim_size(d) + c[k];
    }
    return g;
  }
  // Rank r's position in its group of `role` (ring order).
  int64_t index_in_group(GroupRole role, int64_t r) const {
    switch (role) {
      case GroupRole::kShard:
        return coord(MeshDim::kDpShard, r) * cp + coord(MeshDim::kCp, r);
      case GroupRole::kReplica:
        return coord(MeshDim::kDpReplicate, r);
      case GroupRole::kTp:
        return coord(MeshDim::kTp, r);
      case GroupRole::kPp:
        return coord(MeshDim::kPp, r);
      case GroupRole::kCp:
        return coord(MeshDim::kCp, r);
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // The member `shift` places on from r around its group's ring (negative: back).
  int64_t ring_neighbor(GroupRole role, int64_t r, int64_t shift) const {
    const int64_t n = group_size(role);
    const int64_t i = ((index_in_group(role, r) + shift) % n + n) % n;
    return member(role, group_of(role, r), i);
  }
  // When every group of `role` has evenly spaced members (member i = member
  // 0 + i * step, in ring order), the step; else 0. The engine walks a
  // group's members this way when a collective starts or ends (thousands of
  // members, each member() a loop of divisions).
  int64_t member_step(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard: {
        // Member i sits at dp_shard i / cp, cp i % cp: evenly spaced when cp
        // varies directly inside dp_shard, or either has size 1.
        if (cp == 1) return stride(MeshDim::kDpShard);
        const int64_t step = stride(MeshDim::kCp);
        if (shard == cp) return step;
        return stride(MeshDim::kDpShard) == cp * step ? step : 0;
      }
      case GroupRole::kReplica:
        return stride(MeshDim::kDpReplicate);
      case GroupRole::kTp:
        return stride(MeshDim::kTp);
      case GroupRole::kPp:
        return stride(MeshDim::kPp);
      case GroupRole::kCp:
        return stride(MeshDim::kCp);
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // The i-th member (ring order) of group g.
  int64_t member(GroupRole role, int64_t g, int64_t i) const {
    if (role == GroupRole::kNone) return g;
    int64_t r = 0;
    int64_t s = 1;  // stride of order[k]
    for (int k = kMeshDims - 1; k >= 0; --k) {
      const MeshDim d = order[static_cast<size_t>(k)];
      const int64_t n = dim_size(d);
      int64_t c = 0;
      if (n == 1) {
        // coordinate 0
      } else if (spans(role, d)) {
        c = role != GroupRole::kShard ? i : d == MeshDim::kDpShard ? i / cp : i % cp;
      } else {
        c = g % n;
        g /= n;
      }
      r += c * s;
      s *= n;
    }
    return r;
  }

  // Whether the groups of `role` run along dim d.
  static bool spans(GroupRole role, MeshDim d) {
    switch (role) {
      case GroupRole::kShard:
        return d == MeshDim::kDpShard || d == MeshDim::kCp;
      case GroupRole::kReplica:
        return d == MeshDim::kDpReplicate;
      case GroupRole::kTp:
        return d == MeshDim::kTp;
      case GroupRole::kPp:
        return d == MeshDim::kPp;
      case GroupRole::kCp:
        return d == MeshDim::kCp;
      case GroupRole::kNone:
        break;
    }
    return false;
  }
};

}  // namespace clustersim::workloads
