// TP collectives in closed form (exec/engine_state.h, Engine::closed_tp_).
// Where each TP group's footprint is its own -- no other group, pair or TP
// group loads its links -- and a group moves one TP collective at a time
// (one TP channel per program; no TP-ring send/recv), a TP collective's
// transfer is a flow alone on its links for its whole life. One that the
// compute stream stops for (on the compute stream, or between a segment it
// waits for and one that waits for it) is timed in closed form: the max-min
// solver would give it its rate alone, which lone_rate() asks a solver of
// its own for, once per group and op shape, and the SM sharing its transfer
// would cause slows nothing, its members' compute being stopped at it. The
// links are marked when the engine starts; every other footprint is checked
// against them when it is made, and one that loads a marked link throws
// TpLinksShared: run_programs runs the step again with TP collectives as
// flows.
#include <cmath>
#include <memory>
#include <vector>

#include "exec/engine_state.h"

namespace clustersim::workloads::engine_detail {

namespace {

// Whether op `id` of `p` waits on compute position k and compute position
// k + 1 waits on it: the compute stream stops at it.
bool blocks_compute(const Program& p, const Op& op) {
  const std::vector<int32_t>& compute = p.stream_ops[kComputeStream];
  for (int32_t d = op.dep_begin; d < op.dep_end; ++d) {
    const Dep& dep = p.deps[static_cast<size_t>(d)];
    if (dep.stream != kComputeStream) continue;
    const auto next = static_cast<size_t>(dep.pos) + 1;
    if (next >= compute.size()) continue;
    const Op& after = p.ops[static_cast<size_t>(compute[next])];
    for (int32_t e = after.dep_begin; e < after.dep_end; ++e) {
      const Dep& back = p.deps[static_cast<size_t>(e)];
      if (back.stream == op.stream && back.pos >= op.pos) return true;
    }
  }
  return false;
}

}  // namespace

bool Engine::mark_private_tp_links() {
  if (rg_ != nullptr || layout_.tp <= 1) return false;
  closed_tp_ops_.assign(job_.programs.size(), {});
  bool any = false;
  for (size_t i = 0; i < job_.programs.size(); ++i) {
    const Program& p = job_.programs[i];
    int tp_channels = 0;
    for (const Program::Channel& c : p.channels) {
      if (c.slot >= 0) return false;
      if (c.role == GroupRole::kTp && ++tp_channels > 1) return false;
    }
    std::vector<uint8_t>& closed = closed_tp_ops_[i];
    closed.assign(p.ops.size(), 0);
    for (size_t o = 0; o < p.ops.size(); ++o) {
      const Op& op = p.ops[o];
      if ((op.kind == OpKind::kSend || op.kind == OpKind::kRecv) &&
          op.peer_role == GroupRole::kTp) {
        return false;
      }
      if (op.kind == OpKind::kCollective && op.role == GroupRole::kTp &&
          (op.stream == kComputeStream || blocks_compute(p, op))) {
        closed[o] = 1;
        any = true;
      }
    }
  }
  if (!any) return false;
  const int64_t groups = layout_.group_count(GroupRole::kTp);
  for (int64_t g = 0; g < groups; ++g) {
    for (const collectives::LinkLoad& load : footprint(GroupRole::kTp, g).loads) {
      const auto link = static_cast<size_t>(load.link);
      if (tp_links_.size() <= link) tp_links_.resize(link + 1, 0);
      if (tp_links_[link] != 0) {  // two TP groups share a link
        tp_links_.clear();
        return false;
      }
      tp_links_[link] = 1;
    }
  }
  return true;
}

void Engine::check_not_tp_links(const collectives::Footprint& fp) const {
  if (!closed_tp_) return;
  for (const collectives::LinkLoad& load : fp.loads) {
    const auto link = static_cast<size_t>(load.link);
    if (link < tp_links_.size() && tp_links_[link] != 0) throw TpLinksShared{};
  }
}

// As FlowTransfers would schedule its end. g is the timelines' TP group
// (with one timeline per rank, the real TP group itself).
int64_t Engine::closed_tp_ns(const Op& op, int64_t g) {
  if (op.alone_Bps <= 0) return op.latency_ns + op.transfer_ns;
  const double rate =
      lone_rate(g, collectives::busbw_factor(op.op, static_cast<int>(layout_.tp)), op.alone_Bps);
  return op.latency_ns +
         static_cast<int64_t>(std::ceil(static_cast<double>(op.bytes) / rate * 1e9));
}

// Timeline TP group g stands for copies(kTp) real TP groups (more than one
// where identical ranks share a timeline): each must move at the same rate
// alone, else the members would not move in step.
double Engine::lone_rate(int64_t g, double busbw, double alone_Bps) {
  const LoneKey key{g, busbw, alone_Bps};
  if (const double* known = lone_rates_.find(key); known != nullptr) return *known;
  if (!lone_flows_) {
    lone_flows_ = std::make_unique<collectives::CollectiveFlows>(cluster_, profile_, routing_,
                                                                 healthy_fabric_);
  }
  collectives::CollectiveFlows& solo = *lone_flows_;
  std::vector<int64_t> gpus(static_cast<size_t>(layout_.tp));
  double rate = 0;
  for (int64_t c = 0; c < map_.copies(GroupRole::kTp); ++c) {
    const int64_t real = map_.real_group(GroupRole::kTp, g, c);
    for (int64_t i = 0; i < layout_.tp; ++i) {
      gpus[static_cast<size_t>(i)] = layout_.member(GroupRole::kTp, real, i);
    }
    // (Its own footprint: a solver knows the links of the footprints it made.)
    const collectives::Footprint fp = solo.footprint(gpus);
    solo.begin_batch();
    const collectives::FlowId flow = solo.start(fp, busbw, alone_Bps);
    solo.end_batch();
    const double copy_rate = solo.rate(flow);
    solo.begin_batch();
    solo.finish(flow);
    solo.end_batch();
    if (c > 0 && !same_rate(copy_rate, rate)) throw TimelinesDiverged{};
    rate = copy_rate;
  }
  lone_rates_.insert(key, rate);
  return rate;
}

}  // namespace clustersim::workloads::engine_detail
