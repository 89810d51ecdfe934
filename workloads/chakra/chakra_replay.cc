#include "workloads/chakra/chakra_replay.h"

#include <algorithm>
#include <string>
#include <vector>

#include "collectives/collective_cost.h"
#include "config/config_error.h"
#include "exec/engine.h"
#include "exec/step_accounts.h"
#include "workloads/chakra/chakra_scale.h"
#include "workloads/chakra/replay_deadlock.h"
#include "workloads/chakra/replay_job_check.h"
#include "workloads/chakra/replay_program.h"
#include "workloads/chakra/replay_template.h"

namespace clustersim::workloads::chakra {

std::vector<std::string> collective_pg_names(const Trace& trace) {
  std::vector<std::string> names;
  for (const Node& n : trace.nodes) {
    if (n.type == static_cast<int32_t>(NodeType::kCommColl))
      names.push_back(n.pg_name.value_or(""));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::string rank_location(const ReplayJob& job, int64_t rank) {
  const std::string& file =
      job.files.empty()
          ? job.templates[static_cast<size_t>(job.template_of[static_cast<size_t>(rank)])].file
          : job.files[static_cast<size_t>(rank % job.traced_ranks)];
  return file.empty() ? "rank " + std::to_string(rank) : file;
}

namespace {

// The tuner's refusal as an error naming the node it was asked for.
[[noreturn]] void tune_error(const ReplayJob& job, const std::vector<replay::Template>& templates,
                             const std::vector<replay::CompiledGraph>& graphs,
                             const std::vector<Program>& programs, const TuneError& e) {
  const auto t = static_cast<size_t>(job.template_of[static_cast<size_t>(e.rank())]);
  const Op& op = programs[t].ops[static_cast<size_t>(e.op())];
  const auto node = static_cast<size_t>(graphs[t].node_of_op[static_cast<size_t>(e.op())]);
  std::string where;
  collectives::CollectiveOp kind = collectives::CollectiveOp::kBroadcast;
  if (op.kind == OpKind::kCollective) {
    kind = op.op;
    const int32_t slot = programs[t].channels[static_cast<size_t>(op.channel)].slot;
    const int32_t g =
        job.slot_groups[static_cast<size_t>(job.slot_begin[static_cast<size_t>(e.rank())] + slot)];
    where = "process group '" + job.groups[static_cast<size_t>(g)].name + "'";
  } else {
    where = "ranks " + std::to_string(e.rank()) + " -> " +
            std::to_string(job.peer_base[static_cast<size_t>(e.rank())] + op.peer);
  }
  sim::DiagnosticSink sink;
  sink.add(sim::SourceLocation{rank_location(job, e.rank()), 0, 0},
           replay::node_key(templates[t].trace->nodes[node].id),
           std::string(collectives::to_string(kind)) + " on " + where + ": " + e.what());
  sink.throw_if_any();
  throw;
}

StepResult result(const ReplayJob& job, const std::vector<replay::Template>& templates,
                  const GpuComputeSpec& spec, const ReplayOptions& options, EngineResult run) {
  StepResult out;
  double flops = 0;
  for (int64_t r = 0; r < job.ranks(); ++r) {
    flops += templates[static_cast<size_t>(job.template_of[static_cast<size_t>(r)])].flops;
  }
  const auto n = static_cast<double>(job.ranks());
  out.step_time_s = static_cast<double>(run.step_end_ns) * 1e-9;
  out.slowest_rank = run.slowest_rank;
  out.ranks = job.ranks();
  out.events = run.events;
  out.engine = run.stats;
  out.collectives = run.collectives;
  for (const replay::Template& t : templates) {
    out.tasks_per_rank = std::max(out.tasks_per_rank, static_cast<int64_t>(t.nodes.size()));
  }
  out.breakdown = step_accounts::mean_breakdown(run.summed_accounts, job.ranks());
  if (out.step_time_s > 0) {
    out.tflops_per_gpu = flops / n / out.step_time_s * 1e-12;
    if (spec.peak_flops > 0) out.mfu = out.tflops_per_gpu * 1e12 / spec.peak_flops;
  }
  if (out.step_time_s > 0 && options.tokens_per_rank > 0) {
    out.tokens_per_s_per_gpu = static_cast<double>(options.tokens_per_rank) / out.step_time_s;
  }
  out.trace = std::move(run.trace);
  return out;
}

}  // namespace

StepResult replay_traces(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const std::vector<Trace>& ranks, const CommGroups& groups,
                         const ReplayOptions& options) {
  const ReplayJob job = build_replay_job(ranks, groups, static_cast<int64_t>(ranks.size()));
  return replay_job(cluster, profile, job, options);
}

StepResult replay_job(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
                      const ReplayJob& job, const ReplayOptions& options) {
  const GpuComputeSpec spec =
      options.compute ? *options.compute : compute_spec_from_profile(profile);
  const double pcie_Bps = options.pcie_Bps > 0
                              ? options.pcie_Bps
                              : cluster.spec().node.pcie_Bps * profile.host.pcie_efficiency;
  const auto traced =
      job.traced_ranks > 0 ? job.traced_ranks : static_cast<int64_t>(job.templates.size());
  const auto members_of = [&](size_t t) {
    return t < job.gather_members.size() ? std::span<const int64_t>(job.gather_members[t])
                                         : std::span<const int64_t>();
  };
  sim::DiagnosticSink sink;
  std::vector<replay::Template> templates;
  templates.reserve(job.templates.size());
  for (size_t t = 0; t < job.templates.size(); ++t) {
    const int64_t first =
        t < job.template_rank.size() ? job.template_rank[t] : static_cast<int64_t>(t);
    templates.push_back(replay::build_template(job.templates[t], rank_location(job, first), traced,
                                               spec, options.recompute_compute, pcie_Bps,
                                               members_of(t), sink));
  }
  if (!sink.empty() && static_cast<int64_t>(job.templates.size()) < traced) {
    // A shared graph with problems: compile it for each of its ranks, so
    // that every file is named as when each rank has its own graph.
    sim::DiagnosticSink each;
    for (int64_t r = 0; r < traced; ++r) {
      const auto t = static_cast<size_t>(job.template_of[static_cast<size_t>(r)]);
      (void)replay::build_template(job.templates[t], rank_location(job, r), traced, spec,
                                   options.recompute_compute, pcie_Bps, members_of(t), each);
    }
    each.throw_if_any();
  }
  sink.throw_if_any();
  replay::check_job(cluster, job, templates);
  std::vector<replay::CompiledGraph> graphs;
  std::vector<Program> programs;
  graphs.reserve(templates.size());
  for (const replay::Template& t : templates) graphs.push_back(replay::compile_program(t));
  programs.reserve(graphs.size());
  for (replay::CompiledGraph& g : graphs) programs.push_back(std::move(g.program));
  RankGroups groups;
  groups.members.reserve(job.groups.size());
  for (const ReplayGroup& g : job.groups) groups.members.push_back(g.ranks);
  groups.slot_begin = job.slot_begin;
  groups.slot_groups = job.slot_groups;
  groups.peer_base = job.peer_base;
  EngineJob run;
  run.programs = programs;
  run.program_of = job.template_of;
  run.groups = &groups;
  Layout layout;
  layout.world = job.ranks();
  layout.shard = job.ranks();
  EngineOptions engine;
  engine.routing = options.routing;
  engine.comm_overlap_slowdown = spec.comm_overlap_slowdown;
  engine.trace_ranks = options.trace_ranks;
  engine.rank_time_factors = options.rank_time_factors;
  engine.segment_jitter_sd = options.segment_jitter_sd;
  engine.jitter_seed = options.jitter_seed;
  engine.forced = options.forced;
  engine.report_unfinished = true;
  engine.progress = options.progress;
  EngineResult done;
  try {
    done = run_programs(run, layout, cluster, profile, engine);
  } catch (const TuneError& e) {
    tune_error(job, templates, graphs, programs, e);
  }
  if (!done.finished) {
    for (size_t i = 0; i < graphs.size(); ++i) graphs[i].program = std::move(programs[i]);
    replay::report_deadlock(job, templates, graphs, done.unfinished);
  }
  return result(job, templates, spec, options, std::move(done));
}

}  // namespace clustersim::workloads::chakra
