#include "exec/timelines.h"

#include <string>
#include <vector>

#include "sim/check.h"

namespace clustersim::workloads {

TimelineMap::TimelineMap(const Layout& layout, const MeshDimSet& dims)
    : real(layout), tl(layout), merged(dims) {
  const auto size = [&](MeshDim d) {
    return merged[static_cast<size_t>(d)] ? 1 : layout.dim_size(d);
  };
  tl.tp = size(MeshDim::kTp);
  tl.replica = size(MeshDim::kDpReplicate);
  tl.pp = size(MeshDim::kPp);
  tl.cp = size(MeshDim::kCp);
  tl.shard = size(MeshDim::kDpShard) * tl.cp;
  tl.world = tl.tp * tl.replica * tl.pp * tl.shard;
  CLUSTERSIM_CHECK(layout.world % tl.world == 0, "timelines divide the world");
  k = layout.world / tl.world;
  for (int role = 0; role < kGroupRoles; ++role) {
    int64_t spanned = 1;
    for (int d = 0; d < kMeshDims; ++d) {
      const auto dim = static_cast<MeshDim>(d);
      if (merged[static_cast<size_t>(d)] && Layout::spans(static_cast<GroupRole>(role), dim)) {
        spanned *= layout.dim_size(dim);
      }
    }
    copies_[static_cast<size_t>(role)] = k / spanned;
    // Inside a timeline: every dim of size > 1 the role spans is merged.
    bool inside = role != static_cast<int>(GroupRole::kNone);
    for (int d = 0; d < kMeshDims; ++d) {
      const auto dim = static_cast<MeshDim>(d);
      if (Layout::spans(static_cast<GroupRole>(role), dim) && layout.dim_size(dim) > 1 &&
          !merged[static_cast<size_t>(d)]) {
        inside = false;
      }
    }
    inside_[static_cast<size_t>(role)] = inside;
  }
  if (k == 1) return;
  // A rank is the sum of its coordinates times their strides: the kept dims'
  // part comes from the timeline, the merged dims' from the member index.
  for (const MeshDim d : layout.order) {
    if (!merged[static_cast<size_t>(d)] && layout.dim_size(d) > 1) {
      kept_.push_back(KeptDim{layout.dim_size(d), tl.stride(d), layout.stride(d)});
    }
  }
  member_offset_.resize(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c) {
    int64_t rest = c;
    int64_t offset = 0;
    for (int i = kMeshDims - 1; i >= 0; --i) {
      const MeshDim d = layout.order[static_cast<size_t>(i)];
      if (!merged[static_cast<size_t>(d)]) continue;
      offset += rest % layout.dim_size(d) * layout.stride(d);
      rest /= layout.dim_size(d);
    }
    member_offset_[static_cast<size_t>(c)] = offset;
  }
}

int64_t TimelineMap::timeline_of(int64_t r) const {
  if (k == 1) return r;
  int64_t t = 0;
  int64_t stride = 1;
  for (int i = kMeshDims - 1; i >= 0; --i) {
    const MeshDim d = real.order[static_cast<size_t>(i)];
    const int64_t n = real.dim_size(d);
    if (!merged[static_cast<size_t>(d)]) {
      t += r % n * stride;
      stride *= n;
    }
    r /= n;
  }
  return t;
}

int64_t TimelineMap::real_group(GroupRole role, int64_t g, int64_t c) const {
  if (k == 1) return g;
  // Member index of copy c: its coordinates on the merged dims the role
  // does not span, 0 on those it spans (the group's first member).
  int64_t member = 0;
  int64_t stride = 1;
  for (int i = kMeshDims - 1; i >= 0; --i) {
    const MeshDim d = real.order[static_cast<size_t>(i)];
    if (!merged[static_cast<size_t>(d)]) continue;
    const int64_t n = real.dim_size(d);
    if (!Layout::spans(role, d)) {
      member += c % n * stride;
      c /= n;
    }
    stride *= n;
  }
  return real.group_of(role, real_rank(tl.member(role, g, 0), member));
}

std::vector<std::string> merged_dim_names(const Layout& layout, const MeshDimSet& merged) {
  std::vector<std::string> names;
  for (const MeshDim d : layout.order) {
    if (merged[static_cast<size_t>(d)]) names.emplace_back(mesh_dim_name(d));
  }
  return names;
}

std::string merged_dims_text(const Layout& layout, const MeshDimSet& merged) {
  std::string text;
  for (const std::string& name : merged_dim_names(layout, merged)) {
    text += (text.empty() ? "" : " ") + name;
  }
  return text;
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

// What tells some timeline's members apart: unequal speeds (speed spread,
// stragglers), different programs.
struct Apart {
  bool speed = false;
  bool program = false;
};

Apart members_apart(const TimelineMap& map, const std::vector<double>& factors,
                    const EngineJob& job) {
  Apart apart;
  for (int64_t t = 0; t < map.tl.world; ++t) {
    const auto first = static_cast<size_t>(map.real_rank(t, 0));
    for (int64_t c = 1; c < map.k; ++c) {
      const auto r = static_cast<size_t>(map.real_rank(t, c));
      apart.speed = apart.speed || factors[r] != factors[first];
      apart.program =
          apart.program || (!job.program_of.empty() && job.program_of[r] != job.program_of[first]);
    }
  }
  return apart;
}

// Why no rank may share a timeline whatever the dims, or "".
std::string ranks_apart(const EngineJob& job, const EngineOptions& options) {
  if (options.explicit_ranks) return "asked for (--explicit)";
  if (job.groups != nullptr) return "explicit process groups (a replay's) are not mesh groups";
  if (options.report_unfinished) return "a run that may not finish reports every rank";
  if (options.segment_jitter_sd > 0) return "gpu.segment_jitter draws each rank's kernels apart";
  if (options.host_lead_jitter_ns > 0) return "host.step_jitter starts each rank's host apart";
  for (const Program& p : job.programs) {
    for (const Op& op : p.ops) {
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
          op.peer_role == GroupRole::kNone) {
        return "send/recv to named ranks";
      }
    }
  }
  return "";
}

bool ring_in_tp_group(const EngineJob& job) {
  for (const Program& p : job.programs) {
    for (const Op& op : p.ops) {
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
          op.peer_role == GroupRole::kTp) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

namespace {

// What decides the timelines, found from a job (plan_timelines) or from a
// step's settings alone (expected_timelines).
struct TimelineFacts {
  int64_t stage_ranks = 1;  // the product of a stage's non-pp dims
  int64_t tp = 1;
  bool explicit_ranks = false;
  std::string apart_why;  // what gives each rank a timeline of its own (ranks_apart)
  Apart stage;            // among a stage's ranks
  Apart tp_group;         // among a TP group's members (tp > 1)
  bool traced = false;
  bool ring_in_tp = false;
};

enum class TimelineKind { kRank, kStage, kTpGroup };

struct TimelineDecision {
  TimelineKind kind = TimelineKind::kRank;
  std::string explicit_why;  // kRank: why (empty where no dim could merge)
};

TimelineDecision decide_timelines(const TimelineFacts& f) {
  if (f.stage_ranks == 1) {  // nothing to group
    return {TimelineKind::kRank, f.explicit_ranks ? f.apart_why : std::string()};
  }
  if (!f.apart_why.empty()) return {TimelineKind::kRank, f.apart_why};
  if (!f.stage.speed && !f.stage.program) return {TimelineKind::kStage, ""};
  if (f.tp <= 1) {
    return {TimelineKind::kRank, f.stage.program ? "the ranks of a stage run different programs"
                                                 : "ranks of unequal speed, no TP groups"};
  }
  // A traced member's records are its timeline's: members of equal speed.
  if (f.tp_group.speed && f.traced) {
    return {TimelineKind::kRank,
            "traced ranks among members of unequal speed keep their own timelines"};
  }
  // A ring of send/recv inside the TP group (async TP) pairs each member
  // with its neighbours only: members of unequal speed drift apart there
  // (0.35% of a NeMo 340B step at the profile's spread), not at the pace of
  // the slowest.
  if (f.tp_group.speed && f.ring_in_tp) {
    return {TimelineKind::kRank,
            "members of unequal speed exchange in a ring inside their TP group (async TP)"};
  }
  if (f.tp_group.program) {
    return {TimelineKind::kRank, "the members of a TP group run different programs"};
  }
  return {TimelineKind::kTpGroup, ""};
}

}  // namespace

TimelinePlan plan_timelines(const EngineJob& job, const Layout& layout,
                            const EngineOptions& options) {
  // A stage's ranks may be identical; stages run different programs.
  MeshDimSet stage{};
  for (int d = 0; d < kMeshDims; ++d) {
    const auto dim = static_cast<MeshDim>(d);
    stage[static_cast<size_t>(d)] = dim != MeshDim::kPp && layout.dim_size(dim) > 1;
  }
  MeshDimSet tp{};
  tp[static_cast<size_t>(MeshDim::kTp)] = true;
  const TimelineMap identical(layout, stage);
  TimelineFacts f;
  f.stage_ranks = identical.k;
  f.tp = layout.tp;
  f.explicit_ranks = options.explicit_ranks;
  f.apart_why = ranks_apart(job, options);
  f.traced = !options.trace_ranks.empty();
  // (The members are compared only where the decision reads them.)
  if (identical.k > 1 && f.apart_why.empty()) {
    const std::vector<double> factors = rank_work_factors(layout, options);
    f.stage = members_apart(identical, factors, job);
    if ((f.stage.speed || f.stage.program) && layout.tp > 1) {
      f.tp_group = members_apart(TimelineMap(layout, tp), factors, job);
      f.ring_in_tp = ring_in_tp_group(job);
    }
  }
  const TimelineDecision decision = decide_timelines(f);
  TimelinePlan plan;
  plan.explicit_why = decision.explicit_why;
  if (decision.kind == TimelineKind::kStage) {
    plan.merged = stage;
    plan.ranks_per_timeline = identical.k;
  } else if (decision.kind == TimelineKind::kTpGroup) {
    plan.merged = tp;
    plan.ranks_per_timeline = layout.tp;
  }
  return plan;
}

int64_t expected_timelines(const TimelineSettings& s) {
  TimelineFacts f;
  f.stage_ranks = s.world / s.pp;
  f.tp = s.tp;
  f.explicit_ranks = s.explicit_ranks;
  f.apart_why = s.explicit_ranks ? "--explicit" : s.jitter ? "per-rank jitter" : "";
  // The step simulator runs one program per stage; a spread or a straggler
  // tells apart some stage's ranks and some TP group's members alike.
  f.stage.speed = !s.equal_speeds;
  f.tp_group.speed = !s.equal_speeds;
  f.traced = s.traced;
  f.ring_in_tp = s.ring_in_tp;
  switch (decide_timelines(f).kind) {
    case TimelineKind::kStage:
      return s.pp;
    case TimelineKind::kTpGroup:
      return s.world / s.tp;
    case TimelineKind::kRank:
      break;
  }
  return s.world;
}

}  // namespace clustersim::workloads
