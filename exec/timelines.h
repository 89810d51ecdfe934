// Which ranks the engine runs as one timeline (docs/architecture.md,
// "Timelines"), and the maps between timelines and real ranks.
//
// Two kinds of group share a timeline. The members of a tensor-parallel
// group run the same program, and a TP collective starts when the slowest
// member reaches it and ends for all at once: between two of them each
// member computes the same kernels at its own speed. So the group is one
// timeline at the pace of its slowest member, its TP collectives are steps
// of that timeline, and its members' collectives with other groups (FSDP,
// HSDP, PP, CP) leave and arrive together. Members of unequal speed are told
// apart in the time accounts only: a faster member computes each segment in
// its share of the time and waits the rest for what the timeline waited for
// (exec/engine_members.cc). And ranks that nothing tells apart -- the same
// program, the same speed, no draws of their own -- are identical wherever
// the fabric treats them alike: every rank of a pipeline stage then shares
// one timeline (its dp_replicate, dp_shard, cp and tp dims), computed once
// and counted for each. A timeline's collective of a role stands for the
// real groups of its members, started together, each its own flow on the
// fabric, moving as one transfer; a send/recv for one pair per member.
//
// The plan refuses (one timeline per rank, with the reason) what would make
// members' timelines differ other than by speed: per-kernel jitter and
// per-rank host jitter (their draws are the rank's own), members running
// different programs, explicit groups and send/recv to named ranks (a
// replay's), members of unequal speed that exchange in a ring inside their
// TP group (async TP's send/recv: each member waits only for its
// neighbours, so they do not move at the slowest one's pace), and traced
// ranks among members of unequal speed (a traced member's records are its
// timeline's, once for each traced member). What the plan cannot see -- an
// asymmetric fabric, on which the members' flows, pairs or TP groups move
// at different rates -- the engine finds while it runs (FlowTransfers::
// RatesApart, TimelinesDiverged), and runs again with one timeline per
// rank: the symmetry is proven by the run, never assumed.
//
// Thread safety: values and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/engine.h"
#include "exec/mesh_layout.h"

namespace clustersim::workloads {

// The mesh dims a timeline spans, by MeshDim.
using MeshDimSet = std::array<bool, kMeshDims>;

struct TimelinePlan {
  MeshDimSet merged{};             // none: one timeline per rank
  int64_t ranks_per_timeline = 1;  // the product of the merged dims' sizes
  std::string explicit_why;        // when 1: why (empty where no dim could merge)
};

TimelinePlan plan_timelines(const EngineJob& job, const Layout& layout,
                            const EngineOptions& options);

// What plan_timelines decides (the same decision, from the settings that
// feed it) for a step whose ranks of a pipeline stage all run the stage's
// program (the step simulator's), before anything is built: the timelines
// the engine runs unless the fabric turns out asymmetric (then one per rank,
// and run_programs checks EngineOptions::max_timelines again). For the work
// limit of scenario/work_limits.h; tests hold it to the step's own count.
struct TimelineSettings {
  int64_t world = 1;
  int64_t pp = 1;
  int64_t tp = 1;
  bool explicit_ranks = false;  // --explicit
  bool jitter = false;          // gpu.segment_jitter or host.step_jitter
  bool equal_speeds = false;    // no speed spread and no straggler
  bool traced = false;          // ranks traced
  bool ring_in_tp = false;      // async TP: send/recv in a ring inside the TP group
};
int64_t expected_timelines(const TimelineSettings& s);

// The merged dims' names in mesh order ({"dp_shard", "tp"}; none: empty).
std::vector<std::string> merged_dim_names(const Layout& layout, const MeshDimSet& merged);
// The same joined by spaces ("dp_shard tp").
std::string merged_dims_text(const Layout& layout, const MeshDimSet& merged);

// Timelines of `real` whose members differ only on the `merged` dims. The
// timelines form `tl`: `real` with the merged dims of size 1 (a timeline's
// id enumerates the other dims' coordinates, as a rank of `real` does); a
// member's index c enumerates its coordinates on the merged dims, in mesh
// order, so a timeline's members ascend with c. A group of `tl` stands for
// its members' real groups of the same role (copies()). With nothing merged
// every map is the identity.
struct TimelineMap {
  TimelineMap(const Layout& real, const MeshDimSet& merged);

  Layout real;
  Layout tl;
  MeshDimSet merged{};
  int64_t k = 1;  // ranks per timeline

  int64_t real_rank(int64_t t, int64_t c) const {
    if (k == 1) return t;
    int64_t r = member_offset_[static_cast<size_t>(c)];
    for (const KeptDim& d : kept_) r += t / d.tl_stride % d.size * d.real_stride;
    return r;
  }
  int64_t timeline_of(int64_t r) const;
  // The real groups of `role` a group of tl stands for: k over the merged
  // dims the role spans.
  int64_t copies(GroupRole role) const { return copies_[static_cast<size_t>(role)]; }
  // The c-th of them (c < copies(role)) for tl's group g.
  int64_t real_group(GroupRole role, int64_t g, int64_t c) const;
  // Whether every dim of `role` is merged (its groups lie inside a timeline).
  bool inside(GroupRole role) const { return inside_[static_cast<size_t>(role)]; }

 private:
  // A dim of size > 1 the timelines keep, and its strides in tl and real.
  struct KeptDim {
    int64_t size;
    int64_t tl_stride;
    int64_t real_stride;
  };
  std::vector<KeptDim> kept_;
  std::vector<int64_t> member_offset_;  // by member c: its rank's offset from its timeline's
  std::array<int64_t, kGroupRoles> copies_{};
  std::array<bool, kGroupRoles> inside_{};
};

// Each rank's factor on its segments' work: options.rank_time_factors (1
// where empty) times its stragglers' slowdowns. Preconditions as the
// engine's (InvariantError): one factor per rank, each > 0; stragglers in
// range with slowdown >= 1.
std::vector<double> rank_work_factors(const Layout& layout, const EngineOptions& options);

}  // namespace clustersim::workloads
