#include "workloads/chakra/chakra_scale.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "sim/check.h"

namespace clustersim::workloads::chakra {

namespace {

// How one process group maps onto the scaled job.
struct Plan {
  bool widened = false;  // spans the traced job: one group of N / stride members
  int32_t first = -1;    // its group in the job; local groups: copy c is first + c
};

// True when `members` (distinct, in [0, k)) are l, l + q, ..., covering
// every q-th rank of the k traced ranks (q * size == k); sets l and q.
bool spans_job(const std::vector<int64_t>& members, int64_t k, int64_t* first, int64_t* stride) {
  std::vector<int64_t> s = members;
  std::sort(s.begin(), s.end());
  const auto n = static_cast<int64_t>(s.size());
  if (n == k) {
    *first = 0;
    *stride = 1;
    return true;
  }
  if (n < 2) return false;
  const int64_t q = s[1] - s[0];
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] - s[i - 1] != q) return false;
  }
  if (q * n != k) return false;
  *first = s[0];
  *stride = q;
  return true;
}

}  // namespace

ReplayJob build_replay_job(std::span<const Trace> traces, const CommGroups& groups, int64_t ranks) {
  return build_replay_job(JobTraces{traces, {}, {}}, groups, ranks);
}

ReplayJob build_replay_job(const JobTraces& traces, const CommGroups& groups, int64_t ranks) {
  const int64_t k = traces.ranks();
  const size_t graphs = traces.graphs.size();
  sim::DiagnosticSink sink;
  if (k == 0) {
    sink.add(sim::SourceLocation{"replay", 0, 0}, "", "expected at least one rank's trace");
    sink.throw_if_any();
  }
  if (ranks < k || ranks % k != 0) {
    sink.add(sim::SourceLocation{"--scale-to " + std::to_string(ranks), 0, 0}, "",
             "expected a multiple of the " + std::to_string(k) + " traced ranks, found " +
                 std::to_string(ranks));
    sink.throw_if_any();
  }
  const int64_t copies = ranks / k;

  ReplayJob job;
  job.templates = traces.graphs;
  job.files = traces.files;
  job.traced_ranks = k;
  for (int64_t t = 0; t < k; ++t) {
    if (traces.graph_index(t) == static_cast<int32_t>(job.template_rank.size())) {
      job.template_rank.push_back(t);
    }
  }
  CLUSTERSIM_CHECK(job.template_rank.size() == graphs,
                   "graphs come in the order of their first rank, each used");
  std::vector<std::vector<std::string>> slots(graphs);
  for (size_t g = 0; g < graphs; ++g) slots[g] = collective_pg_names(traces.graphs[g]);

  // What a numeric pg_name is, for messages ("3 (shard_0)"): the first
  // clustersim_pg_desc given for it.
  std::map<std::string, std::string> descs;
  for (const Trace& trace : traces.graphs) {
    for (const Node& n : trace.nodes) {
      if (n.type == static_cast<int32_t>(NodeType::kCommColl) && n.pg_desc) {
        descs.emplace(n.pg_name.value_or(""), *n.pg_desc);
      }
    }
  }
  const auto label = [&](const std::string& name, const std::string& copy) {
    const auto desc = descs.find(name);
    std::string inner = desc == descs.end() ? "" : desc->second;
    if (!copy.empty()) inner += (inner.empty() ? "" : ", ") + copy;
    const std::string shown = name.empty() ? "world" : name;
    return inner.empty() ? shown : shown + " (" + inner + ")";
  };

  std::map<std::string, Plan> plans;
  const auto world_group = [&](const std::string& name) {
    Plan plan{true, static_cast<int32_t>(job.groups.size())};
    ReplayGroup g;
    g.name = label(name, "");
    g.ranks.resize(static_cast<size_t>(ranks));
    for (int64_t r = 0; r < ranks; ++r) g.ranks[static_cast<size_t>(r)] = r;
    job.groups.push_back(std::move(g));
    return plan;
  };

  // Which groups the graphs use, in name order.
  std::map<std::string, bool> used;
  for (const std::vector<std::string>& names : slots) {
    for (const std::string& name : names) used[name] = true;
  }
  for (const auto& [name, members] : groups) {
    const sim::SourceLocation where{"comm groups", 0, 0};
    const std::string key = "process group '" + name + "'";
    std::vector<int64_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty()) {
      sink.add(where, key, "expected at least one rank");
      continue;
    }
    if (sorted.front() < 0 || sorted.back() >= k) {
      sink.add(where, key,
               "expected ranks of the traces (0.." + std::to_string(k - 1) + "), found rank " +
                   std::to_string(sorted.front() < 0 ? sorted.front() : sorted.back()));
      continue;
    }
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      sink.add(where, key,
               "expected distinct ranks, found rank " +
                   std::to_string(*std::adjacent_find(sorted.begin(), sorted.end())) + " twice");
      continue;
    }
    if (!used.contains(name)) continue;
    int64_t first = 0;
    int64_t stride = 1;
    Plan plan;
    plan.first = static_cast<int32_t>(job.groups.size());
    if (spans_job(members, k, &first, &stride)) {
      plan.widened = true;
      ReplayGroup g;
      g.name = label(name, "");
      if (copies == 1) {
        g.ranks = members;
      } else {
        for (int64_t r = first; r < ranks; r += stride) g.ranks.push_back(r);
      }
      job.groups.push_back(std::move(g));
    } else {
      for (int64_t c = 0; c < copies; ++c) {
        ReplayGroup g;
        g.name = label(name, copies == 1 ? "" : "copy " + std::to_string(c));
        g.ranks.reserve(members.size());
        for (const int64_t m : members) g.ranks.push_back(m + c * k);
        job.groups.push_back(std::move(g));
      }
    }
    plans.emplace(name, plan);
  }
  sink.throw_if_any();
  for (const auto& [name, flag] : used) {
    (void)flag;
    if (groups.empty() || (name.empty() && !groups.contains(name))) {
      plans.emplace(name, world_group(name));
    }
  }

  // Each graph's process groups -> plans; membership checked per rank.
  std::vector<std::vector<const Plan*>> slot_plans(graphs);
  for (size_t g = 0; g < graphs; ++g) {
    for (const std::string& name : slots[g]) {
      const auto it = plans.find(name);
      slot_plans[g].push_back(it == plans.end() ? nullptr : &it->second);
    }
  }
  for (int64_t t = 0; t < k; ++t) {
    const auto g = static_cast<size_t>(traces.graph_index(t));
    const Trace& trace = traces.graphs[g];
    for (size_t s = 0; s < slots[g].size(); ++s) {
      const std::string& name = slots[g][s];
      const auto first_node = [&]() -> std::string {
        for (const Node& n : trace.nodes) {
          if (n.type == static_cast<int32_t>(NodeType::kCommColl) && n.pg_name.value_or("") == name)
            return "node " + std::to_string(n.id);
        }
        return "";
      };
      if (slot_plans[g][s] == nullptr) {
        sink.add(sim::SourceLocation{traces.location(t), 0, 0}, first_node(),
                 "pg_name '" + name + "' is not a group of the communicator groups");
        continue;
      }
      const auto group = groups.find(name);
      if (group != groups.end() &&
          std::find(group->second.begin(), group->second.end(), t) == group->second.end()) {
        sink.add(sim::SourceLocation{traces.location(t), 0, 0}, first_node(),
                 "pg_name '" + name + "' names a group without rank " + std::to_string(t));
      }
    }
  }
  sink.throw_if_any();

  job.form = detect_trace_form(traces, groups);
  if (job.form.form == TraceForm::kStandard) {
    // The traced group's size, not the widened one's: comm_size is a
    // traced rank's shard of a tensor that --scale-to does not change.
    job.gather_members.resize(graphs);
    for (size_t g = 0; g < graphs; ++g) {
      for (const std::string& name : slots[g]) {
        const auto group = groups.find(name);
        job.gather_members[g].push_back(
            group != groups.end() ? static_cast<int64_t>(group->second.size()) : k);
      }
    }
  }

  job.template_of.resize(static_cast<size_t>(ranks));
  job.peer_base.resize(static_cast<size_t>(ranks));
  job.slot_begin.reserve(static_cast<size_t>(ranks) + 1);
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t c = r / k;
    const int32_t g = traces.graph_index(r % k);
    job.template_of[static_cast<size_t>(r)] = g;
    job.peer_base[static_cast<size_t>(r)] = c * k;
    job.slot_begin.push_back(static_cast<int64_t>(job.slot_groups.size()));
    for (const Plan* plan : slot_plans[static_cast<size_t>(g)]) {
      job.slot_groups.push_back(plan->widened ? plan->first
                                              : plan->first + static_cast<int32_t>(c));
    }
  }
  job.slot_begin.push_back(static_cast<int64_t>(job.slot_groups.size()));
  CLUSTERSIM_CHECK(job.groups.size() < static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                   "fewer than 2^31 groups");
  return job;
}

}  // namespace clustersim::workloads::chakra
