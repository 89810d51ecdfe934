#include "workloads/chakra/replay_job_check.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "collectives/group_collectives.h"
#include "sim/check.h"

namespace clustersim::workloads::chakra::replay {

// Static checks of the job against the graphs and the cluster: every group
// fits the cluster's shape, and its members issue the same collectives.
void check_job(const topology::Cluster& cluster, const ReplayJob& job,
               const std::vector<Template>& templates) {
  sim::DiagnosticSink sink;
  int reported = 0;
  const auto add = [&](sim::SourceLocation where, std::string key, std::string message) {
    if (reported++ < 20) sink.add(std::move(where), std::move(key), std::move(message));
  };
  if (job.ranks() > cluster.gpu_count()) {
    add(sim::SourceLocation{"replay", 0, 0}, "",
        "the job has " + std::to_string(job.ranks()) + " ranks, the cluster only " +
            std::to_string(cluster.gpu_count()) + " GPUs");
    sink.throw_if_any();
  }
  CLUSTERSIM_CHECK(job.slot_begin.size() == static_cast<size_t>(job.ranks()) + 1 &&
                       job.peer_base.size() == static_cast<size_t>(job.ranks()),
                   "a job's per-rank tables have one entry per rank");
  const auto slot_of = [&](int64_t r, int32_t g) {
    for (int64_t i = job.slot_begin[static_cast<size_t>(r)];
         i < job.slot_begin[static_cast<size_t>(r) + 1]; ++i) {
      if (job.slot_groups[static_cast<size_t>(i)] == g) {
        return static_cast<int32_t>(i - job.slot_begin[static_cast<size_t>(r)]);
      }
    }
    return int32_t{-1};
  };
  // (traced rank, slot) of a reference and a member already compared: by
  // traced rank, not graph, so that ranks sharing a graph are each reported.
  const int64_t k = job.traced_ranks > 0 ? job.traced_ranks : job.ranks();
  std::set<std::tuple<int64_t, int32_t, int64_t, int32_t>> verified;
  for (size_t g = 0; g < job.groups.size(); ++g) {
    const ReplayGroup& group = job.groups[g];
    const std::string label = "process group '" + group.name + "'";
    if (group.ranks.empty()) continue;
    bool in_range = true;
    for (const int64_t m : group.ranks) {
      if (m < 0 || m >= job.ranks()) in_range = false;
    }
    std::vector<int64_t> sorted = group.ranks;
    std::sort(sorted.begin(), sorted.end());
    if (!in_range || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      add(sim::SourceLocation{"replay", 0, 0}, label,
          "expected distinct ranks below " + std::to_string(job.ranks()));
      continue;
    }
    if (collectives::uniform_ranks_per_node(cluster, group.ranks) == 0) {
      std::map<int64_t, int64_t> per_node;
      for (const int64_t m : group.ranks) ++per_node[cluster.node_of_gpu(m)];
      std::string counts;
      for (const auto& [node, count] : per_node) {
        if (counts.size() > 80) {
          counts += ", ...";
          break;
        }
        counts += (counts.empty() ? "" : ", ") + std::string("node ") + std::to_string(node) +
                  ": " + std::to_string(count);
      }
      add(sim::SourceLocation{"replay", 0, 0}, label,
          "expected the same number of members on every node it uses (clustersim models "
          "NCCL rings per rail), found " +
              counts);
      continue;
    }
    const int64_t ref = group.ranks.front();
    const int32_t ref_t = job.template_of[static_cast<size_t>(ref)];
    const int32_t ref_slot = slot_of(ref, static_cast<int32_t>(g));
    const Template& rt = templates[static_cast<size_t>(ref_t)];
    static const std::vector<int32_t> kNone;
    const std::vector<int32_t>& ref_list =
        ref_slot >= 0 ? rt.slot_nodes[static_cast<size_t>(ref_slot)] : kNone;
    for (const int64_t m : group.ranks) {
      const int32_t mt = job.template_of[static_cast<size_t>(m)];
      const int32_t ms = slot_of(m, static_cast<int32_t>(g));
      if (!verified.insert({ref % k, ref_slot, m % k, ms}).second) continue;
      const Template& t = templates[static_cast<size_t>(mt)];
      const std::vector<int32_t>& list = ms >= 0 ? t.slot_nodes[static_cast<size_t>(ms)] : kNone;
      const sim::SourceLocation where{rank_location(job, m), 0, 0};
      if (list.size() != ref_list.size()) {
        add(where, "rank " + std::to_string(m),
            "issues " + std::to_string(list.size()) + " collective(s) in " + label + ", rank " +
                std::to_string(ref) + " (" + rank_location(job, ref) + ") " +
                std::to_string(ref_list.size()) + "; every member must issue the same sequence");
        continue;
      }
      for (size_t i = 0; i < list.size(); ++i) {
        const Node& a = rt.trace->nodes[static_cast<size_t>(ref_list[i])];
        const Node& b = t.trace->nodes[static_cast<size_t>(list[i])];
        if (a.comm_type == b.comm_type && a.comm_size == b.comm_size) continue;
        const auto describe = [](const Node& n) {
          return std::string(comm_type_name(static_cast<int32_t>(n.comm_type.value_or(-1)))) +
                 " of " + (n.comm_size ? std::to_string(*n.comm_size) : std::string("?")) +
                 " bytes";
        };
        add(where, node_key(b.id),
            "collective #" + std::to_string(i) + " of " + label + " is " + describe(b) +
                ", but on rank " + std::to_string(ref) + " " + rank_location(job, ref) + " node " +
                std::to_string(a.id) + " it is " + describe(a) + " (mismatched collectives)");
        break;
      }
    }
  }
  sink.throw_if_any();
}

}  // namespace clustersim::workloads::chakra::replay
