#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "chakra/replay_engine.h"
#include "collectives/group_collectives.h"
#include "sim/check.h"

namespace clustersim::workloads::chakra::replay {

// ---- Collectives ----

void ReplayEngine::try_channel(int64_t r, int32_t slot) {
  ChannelState& ch = channel(r, slot);
  if (ch.arrived || ch.ready.empty() || ch.ready.front().order != static_cast<uint64_t>(ch.next))
    return;
  std::pop_heap(ch.ready.begin(), ch.ready.end(), LaterFirst{});
  const int32_t node = ch.ready.back().node;
  ch.ready.pop_back();
  ch.arrived = true;
  ch.arrival_ns = now();
  const int32_t g = group_of(r, slot);
  GroupState& gs = groups_[static_cast<size_t>(g)];
  if (gs.arrived == 0) {
    gs.seq = ch.next;
    gs.first_rank = r;
    gs.first_node = node;
  }
  CLUSTERSIM_CHECK(gs.seq == ch.next, "members of a group reach the same collective");
  const auto size = static_cast<int32_t>(job_.groups[static_cast<size_t>(g)].ranks.size());
  if (++gs.arrived < size) return;
  gs.arrived = 0;
  begin_collective(g);
}

// The tuner's answer, or a ConfigError naming the node it was asked for.
int32_t ReplayEngine::tune(const collectives::GroupGeometry& geometry, CollectiveOp op,
                           int64_t bytes, bool forced, int64_t rank, int32_t node,
                           const std::string& group) {
  try {
    return tuned_.find_or_tune(geometry, op, bytes, forced);
  } catch (const std::invalid_argument& e) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{rank_location(job_, rank), 0, 0},
             node_key(trace_of(rank).nodes[static_cast<size_t>(node)].id),
             std::string(collectives::to_string(op)) + " on " + group + ": " + e.what());
    sink.throw_if_any();
  }
  return -1;
}

void ReplayEngine::begin_collective(int32_t g) {
  GroupState& gs = groups_[static_cast<size_t>(g)];
  const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
  const TNode& tn = group_node(gs);
  gs.start_ns = now();
  ++collectives_;
  if (!gs.geometry) gs.geometry = collectives::geometry_of(cluster_, group.ranks);
  gs.tuned = tune(*gs.geometry, tn.op, tn.bytes, true, gs.first_rank, gs.first_node,
                  "process group '" + group.name + "'");
  const TunedTimes& t = tuned_.at(gs.tuned);
  const bool moves = group.ranks.size() > 1 && t.alone_Bps > 0;
  const auto comm = static_cast<uint64_t>(g);
  if (moves) {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns), handler_, kTransferBegin, comm);
  } else {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns + t.transfer_ns), handler_, kCommEnd, comm);
  }
}

void ReplayEngine::begin_transfer(uint64_t comm) {
  const collectives::Footprint* fp = nullptr;
  double factor = 1;
  int64_t bytes = 0;
  int32_t tuned = -1;
  if (comm & kP2pBit) {
    const P2p& p = p2ps_[static_cast<size_t>(comm & ~kP2pBit)];
    fp = p.footprint;
    factor = collectives::busbw_factor(CollectiveOp::kBroadcast, 2);
    bytes = tpl(p.src).nodes[static_cast<size_t>(p.send_node)].bytes;
    tuned = p.tuned;
  } else {
    const auto g = static_cast<int32_t>(comm);
    GroupState& gs = groups_[static_cast<size_t>(g)];
    const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
    if (!gs.footprint) gs.footprint = flows_.footprint(group.ranks);
    fp = &*gs.footprint;
    const TNode& tn = group_node(gs);
    factor = collectives::busbw_factor(tn.op, static_cast<int>(group.ranks.size()));
    bytes = tn.bytes;
    tuned = gs.tuned;
  }
  transfers_.start(*fp, factor, tuned_.at(tuned).alone_Bps, static_cast<double>(bytes), comm);
  for_members(comm, [&](int64_t m) { comm_changes(m, +1); });
}

void ReplayEngine::end_comm(uint64_t comm, bool transferred) {
  if (comm & kP2pBit) {
    end_p2p(static_cast<size_t>(comm & ~kP2pBit), transferred);
    return;
  }
  const auto g = static_cast<int32_t>(comm);
  const GroupState& gs = groups_[static_cast<size_t>(g)];
  const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
  const TNode& tn = group_node(gs);
  const Cause cause{exposed_account(tn.op), false, gs.start_ns, now()};
  const int64_t start = gs.start_ns;
  const TunedTimes& t = tuned_.at(gs.tuned);
  // Every member first leaves the collective, then its node completes (a
  // member's next collective in this group may then arrive at once).
  member_slots_.clear();
  for (const int64_t m : group.ranks) {
    const int32_t slot = slot_of(m, g);
    member_slots_.push_back(slot);
    ChannelState& ch = channel(m, slot);
    const int32_t node = tpl(m).slot_nodes[static_cast<size_t>(slot)][static_cast<size_t>(ch.next)];
    if (traced(m)) {
      const TNode& mine = tpl(m).nodes[static_cast<size_t>(node)];
      trace_.comm(m, mine.track, trace_of(m).nodes[static_cast<size_t>(node)].name,
                  collectives::to_string(mine.op), start, now(),
                  CommDetail{mine.bytes, static_cast<int64_t>(group.ranks.size()), ch.arrival_ns,
                             t.algorithm, t.protocol});
    }
    ch.arrived = false;
    ++ch.next;
    if (transferred) comm_changes(m, -1);
    complete(m, node, cause);
  }
  drain();
  for (size_t i = 0; i < group.ranks.size(); ++i) {
    try_channel(group.ranks[i], member_slots_[i]);
    drain();
  }
}

// ---- Send / receive ----

void ReplayEngine::p2p_ready(int64_t r, int32_t node) {
  const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
  const int64_t other = job_.peer_base[static_cast<size_t>(r)] + tn.peer;
  const bool send = tn.kind == Kind::kSend;
  const P2pKey key{send ? r : other, send ? other : r, tn.tag, tn.seq};
  const auto it = pending_p2p_.find(key);
  if (it == pending_p2p_.end()) {
    pending_p2p_.emplace(key, PendingP2p{r, node, now()});
    return;
  }
  const PendingP2p peer = it->second;
  pending_p2p_.erase(it);
  P2p p;
  p.src = key.src;
  p.dst = key.dst;
  p.send_node = send ? node : peer.node;
  p.recv_node = send ? peer.node : node;
  p.send_ready_ns = send ? now() : peer.ready_ns;
  p.recv_ready_ns = send ? peer.ready_ns : now();
  p.start_ns = now();
  const int64_t bytes = tpl(p.src).nodes[static_cast<size_t>(p.send_node)].bytes;
  size_t id = 0;
  if (free_p2ps_.empty()) {
    id = p2ps_.size();
    p2ps_.push_back(p);
  } else {
    id = free_p2ps_.back();
    free_p2ps_.pop_back();
    p2ps_[id] = p;
  }
  if (p.src == p.dst) {
    end_p2p(id, false);
    return;
  }
  const std::array<int64_t, 2> gpus = {p.src, p.dst};
  const auto pair = std::make_pair(p.src, p.dst);
  auto fp = pair_footprints_.find(pair);
  if (fp == pair_footprints_.end()) {
    fp = pair_footprints_.emplace(pair, flows_.footprint(gpus)).first;
  }
  P2p& stored = p2ps_[id];
  stored.footprint = &fp->second;
  stored.tuned =
      tune(collectives::geometry_of(cluster_, gpus), CollectiveOp::kBroadcast, bytes, false, p.src,
           p.send_node, "ranks " + std::to_string(p.src) + " -> " + std::to_string(p.dst));
  const TunedTimes& t = tuned_.at(stored.tuned);
  const uint64_t comm = kP2pBit | id;
  if (t.alone_Bps > 0) {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns), handler_, kTransferBegin, comm);
  } else {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns + t.transfer_ns), handler_, kCommEnd, comm);
  }
}

void ReplayEngine::end_p2p(size_t id, bool transferred) {
  const P2p p = p2ps_[id];
  free_p2ps_.push_back(id);
  const Cause cause{kExposedAllReduce, false, p.start_ns, now()};
  for (const bool send : {true, false}) {
    const int64_t r = send ? p.src : p.dst;
    const int32_t node = send ? p.send_node : p.recv_node;
    if (traced(r)) {
      const std::string_view track = send ? "send" : "recv";
      CommDetail detail{tpl(r).nodes[static_cast<size_t>(node)].bytes,
                        2,
                        send ? p.send_ready_ns : p.recv_ready_ns,
                        {},
                        {}};
      if (p.tuned >= 0) {
        detail.algorithm = tuned_.at(p.tuned).algorithm;
        detail.protocol = tuned_.at(p.tuned).protocol;
      }
      trace_.comm(r, track, trace_of(r).nodes[static_cast<size_t>(node)].name, track, p.start_ns,
                  now(), detail);
    }
    if (transferred && (send || p.dst != p.src)) comm_changes(r, -1);
    complete(r, node, cause);
  }
  drain();
}

}  // namespace clustersim::workloads::chakra::replay
