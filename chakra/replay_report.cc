#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chakra/replay_engine.h"

namespace clustersim::workloads::chakra::replay {

void ReplayEngine::check_finished() const {
  int64_t stuck_nodes = 0;
  int64_t stuck_ranks = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    const auto left =
        static_cast<int64_t>(tpl(r).nodes.size()) - ranks_[static_cast<size_t>(r)].done;
    if (left > 0) {
      stuck_nodes += left;
      ++stuck_ranks;
    }
  }
  if (stuck_nodes == 0) return;
  constexpr size_t kShown = 8;
  std::vector<sim::Diagnostic> found;
  const auto add = [&](int64_t r, int32_t node, const std::string& message) {
    if (found.size() >= kShown) return;
    const Trace& trace = trace_of(r);
    found.push_back(sim::Diagnostic{
        sim::SourceLocation{rank_location(job_, r), 0, 0},
        node_key(trace.nodes[static_cast<size_t>(node)].id) + " (rank " + std::to_string(r) + ")",
        message});
  };
  // Collectives waiting for members that never arrive, or for an earlier
  // collective of their group that never became ready.
  for (int64_t r = 0; r < job_.ranks() && found.size() < kShown; ++r) {
    const Template& t = tpl(r);
    for (size_t slot = 0; slot < t.slot_names.size(); ++slot) {
      const ChannelState& ch =
          channels_[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)]) + slot];
      const std::vector<int32_t>& list = t.slot_nodes[slot];
      if (static_cast<size_t>(ch.next) >= list.size()) continue;
      const int32_t node = list[static_cast<size_t>(ch.next)];
      const int32_t g = group_of(r, static_cast<int32_t>(slot));
      const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
      const std::string what =
          std::string(comm_type_name(
              static_cast<int32_t>(*trace_of(r).nodes[static_cast<size_t>(node)].comm_type))) +
          " #" + std::to_string(ch.next) + " of process group '" + group.name + "'";
      if (ch.arrived) {
        std::vector<int64_t> missing;
        for (const int64_t m : group.ranks) {
          const ChannelState& other = channels_[static_cast<size_t>(
              job_.slot_begin[static_cast<size_t>(m)] + slot_of(m, g))];
          if (!other.arrived) missing.push_back(m);
        }
        std::string who;
        for (size_t i = 0; i < missing.size() && i < 8; ++i) {
          who += (i ? ", " : "") + std::to_string(missing[i]);
        }
        if (missing.size() > 8) who += ", ... (" + std::to_string(missing.size()) + " ranks)";
        add(r, node, what + " waits for rank(s) " + who + ", which never reach it (deadlock)");
      } else if (!ch.ready.empty()) {
        add(r, node,
            what + " never becomes ready, so the later collectives of its group cannot run");
      }
    }
  }
  std::vector<std::pair<P2pKey, PendingP2p>> p2p(pending_p2p_.begin(), pending_p2p_.end());
  std::sort(p2p.begin(), p2p.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.rank, a.second.node) < std::tie(b.second.rank, b.second.node);
  });
  for (const auto& [key, side] : p2p) {
    const bool send = key.src == side.rank;
    add(side.rank, side.node,
        std::string(send ? "send to rank " + std::to_string(key.dst)
                         : "receive from rank " + std::to_string(key.src)) +
            " (tag " + std::to_string(key.tag) + ", #" + std::to_string(key.seq) +
            ") has no matching " + (send ? "receive" : "send") + " that becomes ready");
  }
  // Nodes some of whose dependencies completed, the others never.
  for (int64_t r = 0; r < job_.ranks() && found.size() < kShown; ++r) {
    const Template& t = tpl(r);
    if (ranks_[static_cast<size_t>(r)].done == static_cast<int32_t>(t.nodes.size())) continue;
    for (size_t i = 0; i < t.nodes.size() && found.size() < kShown; ++i) {
      const TNode& tn = t.nodes[i];
      if (tn.counter < 0) continue;
      const int32_t done = (*counters_)[static_cast<size_t>(
                               ranks_[static_cast<size_t>(r)].counter_begin + tn.counter)] &
                           kMaxDense;
      if (done == 0 || done == tn.indegree) continue;
      add(r, static_cast<int32_t>(i),
          "waits for " + std::to_string(tn.indegree - done) + " of its " +
              std::to_string(tn.indegree) + " dependencies, which never complete");
    }
  }
  for (const Pending& p : wide_.entries()) {
    const auto r = static_cast<int64_t>(p.key >> 32);
    const auto node = static_cast<int32_t>(p.key & 0xffffffffULL);
    add(r, node,
        "waits for " + std::to_string(p.remaining) + " of its " +
            std::to_string(tpl(r).nodes[static_cast<size_t>(node)].indegree) +
            " dependencies, which never complete");
  }
  std::vector<sim::Diagnostic> all;
  all.push_back(sim::Diagnostic{sim::SourceLocation{"replay", 0, 0}, "",
                                "deadlock: " + std::to_string(stuck_nodes) + " node(s) on " +
                                    std::to_string(stuck_ranks) +
                                    " rank(s) can never run (a collective whose peers never "
                                    "reach it, an unmatched send/recv, or a dependency cycle); "
                                    "the first stuck nodes:"});
  all.insert(all.end(), found.begin(), found.end());
  throw sim::ConfigError(std::move(all));
}

StepResult ReplayEngine::result(const GpuComputeSpec& spec) {
  StepResult out;
  int64_t end = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    if (ranks_[static_cast<size_t>(r)].finish_ns > end) {
      end = ranks_[static_cast<size_t>(r)].finish_ns;
      out.slowest_rank = r;
    }
  }
  std::array<double, kAccountCount> sum{};
  double flops = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    const RankState& st = ranks_[static_cast<size_t>(r)];
    Accounts v = st.accounts;
    close_rank(v, st.finish_account, st.finish_ns, st.compute_free_ns, st.finish_group_start_ns,
               end);
    for (size_t a = 0; a < kAccountCount; ++a) sum[a] += static_cast<double>(v[a]);
    flops += tpl(r).flops;
  }
  const auto n = static_cast<double>(job_.ranks());
  out.step_time_s = static_cast<double>(end) * 1e-9;
  out.ranks = job_.ranks();
  out.events = sim_.events_processed();
  out.collectives = collectives_;
  for (const Template& t : t_) {
    out.tasks_per_rank = std::max(out.tasks_per_rank, static_cast<int64_t>(t.nodes.size()));
  }
  out.breakdown = mean_breakdown(sum, job_.ranks());
  if (out.step_time_s > 0) {
    out.tflops_per_gpu = flops / n / out.step_time_s * 1e-12;
    if (spec.peak_flops > 0) out.mfu = out.tflops_per_gpu * 1e12 / spec.peak_flops;
    if (options_.tokens_per_rank > 0) {
      out.tokens_per_s_per_gpu = static_cast<double>(options_.tokens_per_rank) / out.step_time_s;
    }
  }
  out.trace = trace_.take();
  return out;
}

}  // namespace clustersim::workloads::chakra::replay
