#include "exec/timelines.h"

#include <string>
#include <vector>

#include "sim/check.h"

namespace clustersim::workloads {

Layout timeline_layout(const Layout& layout) {
  Layout t = layout;
  t.world = layout.world / layout.tp;
  t.tp = 1;
  return t;
}

std::vector<double> rank_work_factors(const Layout& layout, const EngineOptions& options) {
  std::vector<double> f(static_cast<size_t>(layout.world), 1.0);
  if (!options.rank_time_factors.empty()) {
    CLUSTERSIM_CHECK(options.rank_time_factors.size() == f.size(),
                     "rank_time_factors has " + std::to_string(options.rank_time_factors.size()) +
                         " entries for " + std::to_string(layout.world) + " ranks");
    for (size_t r = 0; r < f.size(); ++r) {
      CLUSTERSIM_CHECK(options.rank_time_factors[r] > 0,
                       "rank time factor of rank " + std::to_string(r) + " is not > 0");
      f[r] = options.rank_time_factors[r];
    }
  }
  for (const Straggler& s : options.stragglers) {
    CLUSTERSIM_CHECK(
        s.rank >= 0 && s.rank < layout.world && s.slowdown >= 1,
        "straggler rank " + std::to_string(s.rank) + " slowdown " + std::to_string(s.slowdown));
    f[static_cast<size_t>(s.rank)] *= s.slowdown;
  }
  return f;
}

namespace {

// Whether every TP group's members compute at the same speed (speed spread
// and stragglers alike).
bool members_even(const Layout& layout, const EngineOptions& options) {
  const std::vector<double> f = rank_work_factors(layout, options);
  for (int64_t g = 0; g < layout.world / layout.tp; ++g) {
    const double first = f[static_cast<size_t>(layout.member(GroupRole::kTp, g, 0))];
    for (int64_t i = 1; i < layout.tp; ++i) {
      if (f[static_cast<size_t>(layout.member(GroupRole::kTp, g, i))] != first) return false;
    }
  }
  return true;
}

// The reason the members of some TP group would not move in step, or "".
std::string members_apart(const EngineJob& job, const Layout& layout,
                          const EngineOptions& options) {
  if (options.explicit_ranks) return "asked for (--explicit)";
  if (job.groups != nullptr) return "explicit process groups (a replay's) are not TP groups";
  if (options.report_unfinished) return "a run that may not finish reports every rank";

  if (options.segment_jitter_sd > 0) return "gpu.segment_jitter draws each rank's kernels apart";
  if (options.host_lead_jitter_ns > 0) return "host.step_jitter starts each rank's host apart";
  bool ring_in_group = false;
  for (const Program& p : job.programs) {
    for (const Op& op : p.ops) {
      if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) continue;
      if (op.peer_role == GroupRole::kNone) return "send/recv to named ranks";
      ring_in_group = ring_in_group || op.peer_role == GroupRole::kTp;
    }
  }
  // A ring of send/recv inside the TP group (async TP) pairs each member
  // with its neighbours only: members of unequal speed drift apart there
  // (0.35% of a NeMo 340B step at the profile's spread), not at the pace of
  // the slowest.
  const bool even =
      (options.trace_ranks.empty() && !ring_in_group) || members_even(layout, options);
  // A traced member's records are its timeline's: members of equal speed.
  if (!options.trace_ranks.empty() && !even) {
    return "traced ranks among members of unequal speed keep their own timelines";
  }
  if (ring_in_group && !even) {
    return "members of unequal speed exchange in a ring inside their TP group (async TP)";
  }
  if (!job.program_of.empty()) {
    for (int64_t g = 0; g < layout.world / layout.tp; ++g) {
      const int32_t first =
          job.program_of[static_cast<size_t>(layout.member(GroupRole::kTp, g, 0))];
      for (int64_t i = 1; i < layout.tp; ++i) {
        if (job.program_of[static_cast<size_t>(layout.member(GroupRole::kTp, g, i))] != first) {
          return "the members of a TP group run different programs";
        }
      }
    }
  }
  return "";
}

}  // namespace

TimelinePlan plan_timelines(const EngineJob& job, const Layout& layout,
                            const EngineOptions& options) {
  TimelinePlan plan;
  if (layout.tp <= 1) {
    if (options.explicit_ranks) plan.explicit_why = "asked for (--explicit)";
    return plan;
  }
  plan.explicit_why = members_apart(job, layout, options);
  if (plan.explicit_why.empty()) plan.ranks_per_timeline = layout.tp;
  return plan;
}

}  // namespace clustersim::workloads
