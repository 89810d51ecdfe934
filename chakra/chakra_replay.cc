#include "chakra/chakra_replay.h"

#include <algorithm>
#include <string>
#include <vector>

#include "chakra/chakra_scale.h"
#include "chakra/replay_engine.h"
#include "chakra/replay_job_check.h"
#include "chakra/replay_template.h"
#include "config/config_error.h"

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
  replay::ReplayEngine engine(cluster, profile, job, options, templates, spec);
  engine.run();
  engine.check_finished();
  return engine.result(spec);
}

}  // namespace clustersim::workloads::chakra
