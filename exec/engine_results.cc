// The engine's results (exec/engine_state.h), and run_programs: the plan of
// timelines (exec/timelines.h), the run, and its rerun with one timeline per
// rank when a grouped run finds its members apart.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "config/text_fields.h"
#include "exec/engine.h"
#include "exec/engine_state.h"
#include "exec/timelines.h"
#include "sim/check.h"

namespace clustersim::workloads {

namespace engine_detail {

using namespace step_accounts;  // NOLINT: the account names are this file's vocabulary

// ---- Results ----

EngineStats Engine::stats() const {
  EngineStats s;
  s.segment_ends = by_kind_[kComputeEnd] - stale_looks_ - relooks_;
  s.relooks = relooks_;
  s.stale_looks = stale_looks_;
  s.chained_ends = chained_ends_;
  s.chained_tp_ends = chained_tp_ends_;
  s.group_starts = by_kind_[kGroupStart];
  s.transfer_begins = by_kind_[kTransferBegin];
  s.transfer_ends = by_kind_[kTransferEnd];
  s.latency_ends = by_kind_[kCollectiveEnd];
  s.flow_solves = by_kind_[kSolveFlows];
  s.local_ends = by_kind_[kLocalEnd];
  const collectives::MaxMinFairness::SolveCounts& solves = transfers_.solve_counts();
  s.components_solved = solves.components;
  s.flows_solved = solves.flows;
  s.largest_component = solves.largest;
  switch (transfers_.mode()) {
    case FlowTransfers::Mode::kEachFlow:
      s.bundle_solve = "each flow";
      break;
    case FlowTransfers::Mode::kClaims:
      s.bundle_solve = "one per bundle";
      break;
    case FlowTransfers::Mode::kQuotient:
      s.bundle_solve = "by link class";
      s.link_classes = transfers_.link_classes();
      break;
  }
  return s;
}

std::vector<TraceRecord> Engine::take_trace() {
  std::vector<TraceRecord> records = trace_.take();
  if (k_ == 1) return records;
  // Recorded by timeline: each traced member gets the timeline's records.
  std::vector<TraceRecord> out;
  for (const TraceRecord& rec : records) {
    for (const int64_t m : traced_members_.at(rec.rank)) {
      out.push_back(rec);
      out.back().rank = m;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const TraceRecord& a, const TraceRecord& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.start < b.start;
  });
  return out;
}

bool Engine::finished() const {
  for (const RankState& st : ranks_) {
    for (size_t s = 0; s < st.p->stream_ops.size(); ++s) {
      if (stream(st, static_cast<int>(s)).done != static_cast<int32_t>(st.p->stream_ops[s].size()))
        return false;
    }
  }
  return true;
}

Unfinished Engine::unfinished() const {
  Unfinished u;
  u.stream_begin = stream_base_;
  for (const RankState& st : ranks_) u.gates_passed.push_back(st.gate_index);
  for (const RankState& st : ranks_) {
    for (size_t s = 0; s < st.p->stream_ops.size(); ++s) {
      const StreamState& ss = stream(st, static_cast<int>(s));
      u.done.push_back(ss.done);
      u.reached.push_back(static_cast<uint8_t>(ss.busy));
    }
  }
  return u;
}

int64_t Engine::step_end_ns(int64_t* slowest) const {
  int64_t end = 0;
  int64_t last = 0;  // the timeline
  for (int64_t r = 0; r < tl_.world; ++r) {
    const RankState& st = ranks_[static_cast<size_t>(r)];
    for (size_t s = 0; s < st.p->stream_ops.size(); ++s) {
      CLUSTERSIM_CHECK(
          stream(st, static_cast<int>(s)).done == static_cast<int32_t>(st.p->stream_ops[s].size()),
          "rank " + std::to_string(r) + " finished every " + std::string(st.p->stream_names[s]) +
              " operation (a deadlock otherwise)");
    }
    if (st.finish_ns > end) {
      end = st.finish_ns;
      last = r;
    }
  }
  // Its first member to finish last; the lowest real rank of the timelines
  // that tie with it (ranks ascend with a timeline's member ids and its own).
  *slowest = -1;
  for (int64_t r = last; r < tl_.world; ++r) {
    const RankState& st = ranks_[static_cast<size_t>(r)];
    if (st.finish_ns != end) continue;
    for (int64_t c = 0; c < k_; ++c) {
      const int64_t real = real_rank(r, c);
      if (*slowest >= 0 && real >= *slowest) break;
      if (member_finish(st, static_cast<size_t>(c)) == end) {
        *slowest = real;
        break;
      }
    }
  }
  return end;
}

std::array<double, kAccountCount> Engine::summed_accounts(int64_t step_end) const {
  std::array<double, kAccountCount> sum{};
  const auto add = [&sum](const Accounts& v, int64_t times) {
    for (int a = 0; a < kAccountCount; ++a) {
      sum[static_cast<size_t>(a)] += static_cast<double>(v[static_cast<size_t>(a)] * times);
    }
  };
  for (size_t r = 0; r < ranks_.size(); ++r) {
    const RankState& st = ranks_[r];
    if (uneven()) {
      for (int64_t c = 0; c < k_; ++c) add(closed_member(st, static_cast<size_t>(c), step_end), 1);
      continue;
    }
    Accounts v = st.accounts;
    close_rank(v, st.finish_account, st.finish_ns, st.compute_free_ns, st.finish_group_start_ns,
               step_end, tail_account_);
    add(v, k_);  // every member's accounts are the timeline's
  }
  return sum;
}

}  // namespace engine_detail

namespace {

EngineResult run_engine(const EngineJob& job, const Layout& layout,
                        const topology::Cluster& cluster,
                        const collectives::HardwareProfile& profile, const EngineOptions& options,
                        const TimelinePlan& plan, bool closed_form_tp,
                        FlowTransfers::Mode bundles) {
  engine_detail::Engine engine(cluster, profile, options, job, layout, plan.merged, closed_form_tp,
                               bundles);
  engine.run();
  EngineResult out;
  out.ranks_per_timeline = plan.ranks_per_timeline;
  out.timeline_dims = merged_dim_names(layout, plan.merged);
  out.explicit_why = plan.explicit_why;
  if (options.report_unfinished && !engine.finished()) {
    out.finished = false;
    out.unfinished = engine.unfinished();
    out.events = engine.events();
    return out;
  }
  out.step_end_ns = engine.step_end_ns(&out.slowest_rank);
  out.summed_accounts = engine.summed_accounts(out.step_end_ns);
  out.events = engine.events();
  out.collectives = engine.collectives();
  out.stats = engine.stats();
  out.trace = engine.take_trace();
  return out;
}

bool merges_beyond_tp(const MeshDimSet& merged) {
  for (int d = 0; d < kMeshDims; ++d) {
    if (merged[static_cast<size_t>(d)] && static_cast<MeshDim>(d) != MeshDim::kTp) return true;
  }
  return false;
}

}  // namespace

// Tries the fastest exact way first: timelines of several ranks where the
// plan allows (again with one per rank when the members' flows move
// apart), each collective's member flows solved as one where the fabric
// keeps them copies (again each solved when it does not), TP collectives
// in closed form (again as flows when a link of theirs turns out shared).
EngineResult run_programs(const EngineJob& job, const Layout& layout,
                          const topology::Cluster& cluster,
                          const collectives::HardwareProfile& profile,
                          const EngineOptions& options) {
  CLUSTERSIM_CHECK(layout.world > 0 && layout.world <= cluster.gpu_count(),
                   "world size " + std::to_string(layout.world) + " within the cluster's " +
                       std::to_string(cluster.gpu_count()) + " GPUs");
  TimelinePlan plan = plan_timelines(job, layout, options);
  TimelinePlan members_apart;
  members_apart.explicit_why =
      "the flows of a timeline's members ended apart (an asymmetric fabric): ran again";
  bool closed_form_tp = true;
  FlowTransfers::Mode bundles = FlowTransfers::Mode::kClaims;
  for (;;) {
    const int64_t timelines = layout.world / plan.ranks_per_timeline;
    if (options.max_timelines > 0 && timelines > options.max_timelines) {
      const std::string why =
          plan.ranks_per_timeline > 1
              ? "of " + sim::with_separators(plan.ranks_per_timeline) + " ranks each"
              : "one per rank: " + (plan.explicit_why.empty() ? std::string("no dims to merge")
                                                              : plan.explicit_why);
      throw WorkOverLimit("the step needs " + sim::with_separators(timelines) + " timelines (" +
                          why + "), over the work limit's " +
                          sim::with_separators(options.max_timelines) +
                          " at this step's tasks per rank (--max-events raises the limit)");
    }
    try {
      return run_engine(job, layout, cluster, profile, options, plan, closed_form_tp, bundles);
    } catch (const FlowTransfers::RatesApart&) {
      plan = members_apart;
    } catch (const engine_detail::TimelinesDiverged&) {
      plan = members_apart;
    } catch (const engine_detail::TpLinksShared&) {
      closed_form_tp = false;
    } catch (const FlowTransfers::BundlesCoupled&) {
      // By link class where a timeline stands for more than a TP group: its
      // transfers recur (a layer's all-gather of the same groups), and so do
      // the classes. One timeline per TP group makes each transfer a shape
      // of its own, whose classes never recur: a 16,384-GPU TP 2 step of
      // the layout sweep met 697,135 classes and ran 75 s.
      bundles = merges_beyond_tp(plan.merged) ? FlowTransfers::Mode::kQuotient
                                              : FlowTransfers::Mode::kEachFlow;
    } catch (const FlowTransfers::QuotientBroken&) {
      bundles = FlowTransfers::Mode::kEachFlow;
    }
  }
}

EngineResult run_program(const Program& program, const Layout& layout,
                         const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const EngineOptions& options) {
  EngineJob job;
  job.programs = std::span<const Program>(&program, 1);
  return run_programs(job, layout, cluster, profile, options);
}

}  // namespace clustersim::workloads
