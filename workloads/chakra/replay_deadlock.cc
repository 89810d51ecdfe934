#include "workloads/chakra/replay_deadlock.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "config/config_error.h"

namespace clustersim::workloads::chakra::replay {

namespace {

constexpr size_t kShown = 8;

// Which nodes of rank r completed, and where its streams stopped.
class RankView {
 public:
  RankView(const ReplayJob& job, const std::vector<Template>& templates,
           const std::vector<CompiledGraph>& graphs, const Unfinished& u, int64_t r)
      : t_(templates[static_cast<size_t>(job.template_of[static_cast<size_t>(r)])]),
        g_(graphs[static_cast<size_t>(job.template_of[static_cast<size_t>(r)])]),
        u_(u),
        base_(static_cast<size_t>(u.stream_begin[static_cast<size_t>(r)])),
        done_(t_.nodes.size(), 0) {
    const int32_t passed = u.gates_passed[static_cast<size_t>(r)];
    for (const int32_t i : g_.order) {
      const auto k = static_cast<size_t>(i);
      const int32_t op = g_.op_of[k];
      if (op >= 0) {
        const Op& o = g_.program.ops[static_cast<size_t>(op)];
        done_[k] = stream_done(o.stream) > o.pos;
      } else if (g_.host_index[k] >= 0) {
        const auto gates =
            std::upper_bound(g_.gate_host.begin(), g_.gate_host.end(), g_.host_index[k]) -
            g_.gate_host.begin();
        done_[k] = passed >= gates;
      } else {
        done_[k] = preds_done(k) == preds(k);
      }
    }
  }

  const Template& tpl() const { return t_; }
  const CompiledGraph& graph() const { return g_; }
  bool done(size_t node) const { return done_[node] != 0; }
  int32_t preds(size_t node) const { return g_.pred_begin[node + 1] - g_.pred_begin[node]; }
  int32_t preds_done(size_t node) const {
    int32_t n = 0;
    for (int32_t e = g_.pred_begin[node]; e < g_.pred_begin[node + 1]; ++e) {
      n += done_[static_cast<size_t>(g_.preds[static_cast<size_t>(e)])];
    }
    return n;
  }
  int64_t stuck() const { return static_cast<int64_t>(std::count(done_.begin(), done_.end(), 0)); }
  int32_t stream_done(int s) const { return u_.done[base_ + static_cast<size_t>(s)]; }
  bool reached(int s) const { return u_.reached[base_ + static_cast<size_t>(s)] != 0; }
  int slot_stream(int32_t slot) const {
    for (const Program::Channel& c : g_.program.channels) {
      if (c.slot == slot) return c.stream;
    }
    return -1;
  }

 private:
  const Template& t_;
  const CompiledGraph& g_;
  const Unfinished& u_;
  size_t base_;
  std::vector<uint8_t> done_;
};

}  // namespace

void report_deadlock(const ReplayJob& job, const std::vector<Template>& templates,
                     const std::vector<CompiledGraph>& graphs, const Unfinished& stopped) {
  int64_t stuck_nodes = 0;
  int64_t stuck_ranks = 0;
  std::vector<int64_t> stuck;
  for (int64_t r = 0; r < job.ranks(); ++r) {
    const int64_t left = RankView(job, templates, graphs, stopped, r).stuck();
    if (left > 0) {
      stuck_nodes += left;
      ++stuck_ranks;
      stuck.push_back(r);
    }
  }
  std::vector<sim::Diagnostic> found;
  const auto add = [&](int64_t r, size_t node, const std::string& message) {
    if (found.size() >= kShown) return;
    const Trace& trace =
        *templates[static_cast<size_t>(job.template_of[static_cast<size_t>(r)])].trace;
    found.push_back(sim::Diagnostic{
        sim::SourceLocation{rank_location(job, r), 0, 0},
        node_key(trace.nodes[node].id) + " (rank " + std::to_string(r) + ")", message});
  };
  // Collectives waiting for members that never arrive, or for an earlier
  // collective of their group that never became ready.
  for (const int64_t r : stuck) {
    if (found.size() >= kShown) break;
    const RankView v(job, templates, graphs, stopped, r);
    const Template& t = v.tpl();
    for (size_t slot = 0; slot < t.slot_names.size(); ++slot) {
      const int s = v.slot_stream(static_cast<int32_t>(slot));
      const std::vector<int32_t>& list = t.slot_nodes[slot];
      const int32_t next = v.stream_done(s);
      if (static_cast<size_t>(next) >= list.size()) continue;
      const auto node = static_cast<size_t>(list[static_cast<size_t>(next)]);
      const int32_t g =
          job.slot_groups[static_cast<size_t>(job.slot_begin[static_cast<size_t>(r)]) + slot];
      const ReplayGroup& group = job.groups[static_cast<size_t>(g)];
      const std::string what =
          std::string(comm_type_name(static_cast<int32_t>(*t.trace->nodes[node].comm_type))) +
          " #" + std::to_string(next) + " of process group '" + group.name + "'";
      if (v.reached(s)) {
        std::vector<int64_t> missing;
        for (const int64_t m : group.ranks) {
          const RankView other(job, templates, graphs, stopped, m);
          const auto begin = static_cast<size_t>(job.slot_begin[static_cast<size_t>(m)]);
          const auto end = static_cast<size_t>(job.slot_begin[static_cast<size_t>(m) + 1]);
          int32_t mine = -1;
          for (size_t i = begin; i < end; ++i) {
            if (job.slot_groups[i] == g) mine = static_cast<int32_t>(i - begin);
          }
          if (mine < 0 || !other.reached(other.slot_stream(mine))) missing.push_back(m);
        }
        std::string who;
        for (size_t i = 0; i < missing.size() && i < 8; ++i) {
          who += (i ? ", " : "") + std::to_string(missing[i]);
        }
        if (missing.size() > 8) who += ", ... (" + std::to_string(missing.size()) + " ranks)";
        add(r, node, what + " waits for rank(s) " + who + ", which never reach it (deadlock)");
      } else {
        for (size_t k = static_cast<size_t>(next) + 1; k < list.size(); ++k) {
          const auto later = static_cast<size_t>(list[k]);
          if (v.preds_done(later) == v.preds(later)) {
            add(r, node,
                what + " never becomes ready, so the later collectives of its group cannot run");
            break;
          }
        }
      }
    }
  }
  // Sends and receives that wait for their other half.
  for (const int64_t r : stuck) {
    const RankView v(job, templates, graphs, stopped, r);
    const CompiledGraph& g = v.graph();
    std::vector<size_t> waiting;
    for (const Op& op : g.program.ops) {
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) && v.reached(op.stream) &&
          v.stream_done(op.stream) == op.pos) {
        waiting.push_back(
            static_cast<size_t>(g.node_of_op[static_cast<size_t>(&op - g.program.ops.data())]));
      }
    }
    std::sort(waiting.begin(), waiting.end());
    for (const size_t node : waiting) {
      const TNode& tn = v.tpl().nodes[node];
      const int64_t other = job.peer_base[static_cast<size_t>(r)] + tn.peer;
      const bool send = tn.kind == Kind::kSend;
      add(r, node,
          std::string(send ? "send to rank " + std::to_string(other)
                           : "receive from rank " + std::to_string(other)) +
              " (tag " + std::to_string(tn.tag) + ", #" + std::to_string(tn.seq) +
              ") has no matching " + (send ? "receive" : "send") + " that becomes ready");
    }
  }
  // Nodes some of whose dependencies completed, the others never.
  for (const int64_t r : stuck) {
    if (found.size() >= kShown) break;
    const RankView v(job, templates, graphs, stopped, r);
    for (size_t i = 0; i < v.tpl().nodes.size() && found.size() < kShown; ++i) {
      const int32_t n = v.preds(i);
      if (n < 2 || v.done(i)) continue;
      const int32_t done = v.preds_done(i);
      if (done == 0 || done == n) continue;
      add(r, i,
          "waits for " + std::to_string(n - done) + " of its " + std::to_string(n) +
              " dependencies, which never complete");
    }
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

}  // namespace clustersim::workloads::chakra::replay
