// Which ranks the engine runs as one timeline (docs/architecture.md,
// "Timelines"). The members of a tensor-parallel group run the same program,
// and a TP collective starts when the slowest member reaches it and ends for
// all at once: between two of them each member computes the same kernels at
// its own speed. So the group is one timeline at the pace of its slowest
// member, its TP collectives are steps of that timeline, and its members'
// collectives with other groups (FSDP, HSDP, PP, CP) leave and arrive
// together: timeline t's collective of a role is the tp real groups of its
// members, started together, each its own flow on the fabric. Members of
// unequal speed are told apart in the time accounts only: a faster member
// computes each segment in its share of the time and waits the rest for
// what the timeline waited for (exec/engine_members.cc).
//
// The plan refuses (one timeline per rank, with the reason) what would make
// members' timelines differ other than by speed: per-kernel
// jitter and per-rank host jitter (their draws are the rank's own), members
// running different programs, explicit groups and send/recv to named ranks
// (a replay's), and members of unequal speed that exchange in a ring inside
// their TP group (async TP's send/recv: each member waits only for its
// neighbours, so they do not move at the slowest one's pace), and traced
// ranks among members of unequal speed (a traced member's records are its
// timeline's, once for each traced member). What the
// plan cannot see -- an asymmetric fabric, on which the members' flows move
// at different rates -- the engine finds while it runs, and runs again
// with one timeline per rank.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/engine.h"
#include "exec/mesh_layout.h"

namespace clustersim::workloads {

struct TimelinePlan {
  int64_t ranks_per_timeline = 1;  // the TP size, or 1: one timeline per rank
  std::string explicit_why;        // when 1: why (empty without TP groups)
};

TimelinePlan plan_timelines(const EngineJob& job, const Layout& layout,
                            const EngineOptions& options);

// The timelines' mesh: `layout` without its tensor-parallel dim. Timeline t
// is the TP group t of `layout` (a TP group's id enumerates the other dims'
// coordinates, as a rank of this layout does); its groups of the other
// roles are those of the real ranks with the TP coordinate taken out.
Layout timeline_layout(const Layout& layout);

// Each rank's factor on its segments' work: options.rank_time_factors (1
// where empty) times its stragglers' slowdowns. Preconditions as the
// engine's (InvariantError): one factor per rank, each > 0; stragglers in
// range with slowdown >= 1.
std::vector<double> rank_work_factors(const Layout& layout, const EngineOptions& options);

}  // namespace clustersim::workloads
