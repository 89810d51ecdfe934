// Collectives (mesh and explicit groups) and send/recv of the engine
// (exec/engine_state.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "exec/engine_state.h"
#include "sim/check.h"

namespace clustersim::workloads::engine_detail {

using collectives::CollectiveOp;
using sim::SimTime;

// Member c of the sender pairs with member c of the receiving timeline,
// or, in a ring inside the timeline, with its neighbour `shift` places on.
std::pair<int64_t, int64_t> Engine::member_pair(const P2p& p, int64_t c) const {
  if (k_ == 1) return {p.rank[0], p.rank[1]};
  const int64_t src = real_rank(p.rank[0], c);
  if (p.shift == 0) return {src, real_rank(p.rank[1], c)};
  const GroupRole ring = prog(p.rank[0]).ops[static_cast<size_t>(p.op[kSender])].peer_role;
  return {src, layout_.ring_neighbor(ring, src, p.shift)};
}

int64_t Engine::group_size(int32_t channel, GroupRole role, int64_t g) const {
  return channel == kExplicitChannel
             ? static_cast<int64_t>(rg_->members[static_cast<size_t>(g)].size())
             : tl_.group_size(role);
}

int64_t Engine::real_size(int32_t channel, GroupRole role, int64_t g) const {
  return channel == kExplicitChannel ? group_size(channel, role, g) : layout_.group_size(role);
}

int64_t Engine::member(int32_t channel, GroupRole role, int64_t g, int64_t i) const {
  return channel == kExplicitChannel ? rg_->members[static_cast<size_t>(g)][static_cast<size_t>(i)]
                                     : tl_.member(role, g, i);
}

int Engine::member_stream(int64_t m, int64_t g) const {
  const int32_t slot = rg_->slot_of(m, static_cast<int32_t>(g));
  CLUSTERSIM_CHECK(slot >= 0, "rank " + std::to_string(m) + " is in group " + std::to_string(g));
  for (const Program::Channel& c : prog(m).channels) {
    if (c.slot == slot) return c.stream;
  }
  CLUSTERSIM_CHECK(false,
                   "rank " + std::to_string(m) + " has a channel for slot " + std::to_string(slot));
  return 0;
}

void Engine::arrive(int64_t r, int32_t id, const Op& op, int64_t arrival) {
  const Program::Channel& c = prog(r).channels[static_cast<size_t>(op.channel)];
  const bool xg = c.slot >= 0;
  const int32_t channel = xg ? kExplicitChannel : op.channel;
  const int64_t g = xg ? rg_->group_of(r, c.slot) : tl_.group_of(op.role, r);
  GroupState& gs = group_state(channel, g);
  if (gs.arrived == 0) {
    gs.op = id;
    gs.rank = r;
    gs.latest_arrival_ns = arrival;
  }
  // (A pipeline group's members run different stages' programs.)
  CLUSTERSIM_CHECK(xg || op.role == GroupRole::kPp || gs.op == id,
                   "members of a group reach the same collective");
  gs.latest_arrival_ns = std::max(gs.latest_arrival_ns, arrival);
  if (++gs.arrived < group_size(channel, op.role, g)) return;
  gs.arrived = 0;
  if (in_chain()) {  // a chain's TP collective (engine_chain.cc): its one member is here
    CLUSTERSIM_CHECK(op.role == GroupRole::kTp && group_size(channel, op.role, g) == 1 &&
                         chain_tp(rank(r), stream(rank(r), kComputeStream).done - 1) == id,
                     "only the chain's own TP collective arrives inside a chain");
    begin_chained_tp(channel, g, std::max(now(), gs.latest_arrival_ns));
    return;
  }
  if (gs.latest_arrival_ns > now()) {
    sim_.schedule_at(SimTime::ns(gs.latest_arrival_ns), handler_, kGroupStart, pack(channel, g));
  } else {
    begin_collective(channel, g);
  }
}

int32_t Engine::tune(const collectives::GroupGeometry& geometry, CollectiveOp op, int64_t bytes,
                     bool forced, int64_t rank, int32_t op_id) {
  try {
    return tuned_.find_or_tune(geometry, op, bytes, forced);
  } catch (const std::invalid_argument& e) {
    throw TuneError(rank, op_id, e.what());
  }
}

void Engine::begin_collective(int32_t channel, int64_t g) {
  GroupState& gs = group_state(channel, g);
  const Op& op = group_op(gs);
  gs.start_ns = now();
  collectives_ += copies(op.role);
  const int64_t size = real_size(channel, op.role, g);
  int64_t latency_ns = op.latency_ns;
  int64_t transfer_ns = op.transfer_ns;
  double alone_Bps = op.alone_Bps;
  if (channel == kExplicitChannel) {
    GroupShape& shape = xshapes_[static_cast<size_t>(g)];
    if (!shape.geometry) {
      shape.geometry = collectives::geometry_of(cluster_, rg_->members[static_cast<size_t>(g)]);
    }
    gs.tuned = tune(*shape.geometry, op.op, op.bytes, /*forced=*/true, gs.rank, gs.op);
    const TunedTimes& t = tuned_.at(gs.tuned);
    latency_ns = t.latency_ns;
    transfer_ns = t.transfer_ns;
    alone_Bps = t.alone_Bps;
  }
  const bool moves = size > 1 && alone_Bps > 0;
  if (moves && closed_tp_ && op.role == GroupRole::kTp &&
      closed_tp_ops_[static_cast<size_t>(rank(gs.rank).p - job_.programs.data())]
                    [static_cast<size_t>(gs.op)] != 0) {
    // Alone on its links (engine_private_tp.cc).
    sim_.schedule_at(SimTime::ns(now() + closed_tp_ns(op, g)), handler_, kCollectiveEnd,
                     pack(channel, g));
    return;
  }
  if (moves) {
    sim_.schedule_at(SimTime::ns(now() + latency_ns), handler_, kTransferBegin, pack(channel, g));
  } else {
    sim_.schedule_at(SimTime::ns(now() + latency_ns + transfer_ns), handler_, kCollectiveEnd,
                     pack(channel, g));
  }
}

const collectives::Footprint& Engine::footprint(GroupRole role, int64_t g) {
  std::vector<std::optional<collectives::Footprint>>& cache =
      footprints_[static_cast<size_t>(role)];
  if (cache.empty()) cache.resize(static_cast<size_t>(layout_.group_count(role)));
  std::optional<collectives::Footprint>& slot = cache[static_cast<size_t>(g)];
  if (!slot) {
    const int64_t size = layout_.group_size(role);
    gpus_.resize(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) gpus_[static_cast<size_t>(i)] = layout_.member(role, g, i);
    slot = flows_.footprint(gpus_);
    if (role != GroupRole::kTp) check_not_tp_links(*slot);
  }
  return *slot;
}

const std::vector<const collectives::Footprint*>& Engine::bundle(GroupRole role, int64_t g) {
  std::vector<std::vector<const collectives::Footprint*>>& cache =
      bundles_[static_cast<size_t>(role)];
  if (cache.empty()) cache.resize(static_cast<size_t>(tl_.group_count(role)));
  std::vector<const collectives::Footprint*>& out = cache[static_cast<size_t>(g)];
  if (out.empty()) {
    const int64_t n = copies(role);
    out.reserve(static_cast<size_t>(n));
    for (int64_t c = 0; c < n; ++c) out.push_back(&footprint(role, real_group(role, g, c)));
  }
  return out;
}

void Engine::begin_transfer(int32_t channel, int64_t g) {
  if (channel == kP2pChannel) {
    const P2p& p = p2ps_[static_cast<size_t>(g)];
    const Op& send = prog(p.rank[0]).ops[static_cast<size_t>(p.op[0])];
    // One flow per member's pair, moving as one transfer.
    transfers_.start(
        timeline_pair(p).footprints, collectives::busbw_factor(CollectiveOp::kBroadcast, 2),
        tuned_.at(p.tuned).alone_Bps, static_cast<double>(send.bytes), pack(channel, g));
    if (send.copy_engine) return;
    // Each member sends one flow and receives one: a ring inside the
    // timeline counts both on it.
    comm_changes(p.rank[0], +1);
    comm_changes(p.rank[1], +1);
    return;
  }
  GroupState& gs = group_state(channel, g);
  const Op& op = group_op(gs);
  const int64_t size = group_size(channel, op.role, g);
  const bool xg = channel == kExplicitChannel;
  const double alone_Bps = xg ? tuned_.at(gs.tuned).alone_Bps : op.alone_Bps;
  const double busbw =
      collectives::busbw_factor(op.op, static_cast<int>(real_size(channel, op.role, g)));
  if (xg) {
    GroupShape& shape = xshapes_[static_cast<size_t>(g)];
    if (!shape.footprint) shape.footprint = flows_.footprint(rg_->members[static_cast<size_t>(g)]);
    transfers_.start(*shape.footprint, busbw, alone_Bps, static_cast<double>(op.bytes),
                     pack(channel, g));
  } else {
    // One flow per real group the timelines' group stands for, moving as one
    // transfer (their rates must stay equal: FlowTransfers::RatesApart).
    transfers_.start(bundle(op.role, g), busbw, alone_Bps, static_cast<double>(op.bytes),
                     pack(channel, g));
  }
  const Members members = this->members(channel, op.role, g);
  for (int64_t i = 0; i < size; ++i) {
    if (i + kPrefetchAhead < size) prefetch_rank(members[i + kPrefetchAhead]);
    comm_changes(members[i], +1);
  }
}

void Engine::end_transfer(uint32_t transfer) {
  const uint64_t owner = transfers_.finish(transfer);
  const auto channel = static_cast<int32_t>(owner >> kGroupBits);
  const auto g = static_cast<int64_t>(owner & ((uint64_t{1} << kGroupBits) - 1));
  if (channel == kP2pChannel) {
    end_p2p(static_cast<size_t>(g), /*transferred=*/true);
  } else {
    end_collective(channel, g, /*transferred=*/true);
  }
}

void Engine::end_collective(int32_t channel, int64_t g, bool transferred) {
  GroupState& gs = group_state(channel, g);
  const Op& first = group_op(gs);
  const bool xg = channel == kExplicitChannel;
  const int64_t size = group_size(channel, first.role, g);
  const int64_t traced_size = real_size(channel, first.role, g);
  const Cause cause{first.exposed, gs.start_ns};
  const int64_t t = now();
  std::string_view algorithm = first.algorithm;
  std::string_view protocol = first.protocol;
  if (xg) {
    algorithm = tuned_.at(gs.tuned).algorithm;
    protocol = tuned_.at(gs.tuned).protocol;
  }
  const Members members = this->members(channel, first.role, g);
  for (int64_t i = 0; i < size; ++i) {
    if (i + kPrefetchAhead < size) prefetch_rank(members[i + kPrefetchAhead]);
    const int64_t m = members[i];
    const int s = xg ? member_stream(m, g) : first.stream;
    if (traced(m)) {
      RankState& st = rank(m);
      const int32_t id =
          st.p->stream_ops[static_cast<size_t>(s)][static_cast<size_t>(stream(st, s).done)];
      trace_collective(m, st.p->ops[static_cast<size_t>(id)], arrival(m, s), gs.start_ns, t,
                       traced_size, algorithm, protocol);
    }
    op_done(m, s, cause);
    if (transferred) comm_changes(m, -1);
  }
  for (int64_t i = 0; i < size; ++i) {
    if (i + kPrefetchAhead < size) prefetch_rank(members[i + kPrefetchAhead]);
    const int64_t m = members[i];
    wake(m, xg ? member_stream(m, g) : first.stream, cause);
  }
}

// ---- Send / receive ----

void Engine::p2p_arrive(int64_t r, int32_t id, const Op& op, int64_t ready) {
  CLUSTERSIM_CHECK(rg_ != nullptr || op.peer == r || op.peer_role != GroupRole::kNone,
                   "send/recv peers need rank groups");
  const int64_t other = op.peer_role != GroupRole::kNone
                            ? tl_.ring_neighbor(op.peer_role, r, op.peer)
                            : (rg_ != nullptr ? rg_->peer(r, op.peer) : op.peer);
  const bool send = op.kind == OpKind::kSend;
  // A ring inside the timeline (its role's dim merged): the sender's member
  // meets its ring neighbour shift places on (the members of other roles'
  // rings meet the same member index).
  int32_t shift = 0;
  CLUSTERSIM_CHECK(k_ == 1 || map_.inside(op.peer_role) || copies(op.peer_role) == k_,
                   "a send/recv ring lies inside timelines or across them");
  if (k_ > 1 && map_.inside(op.peer_role)) {
    const int64_t n = layout_.group_size(op.peer_role);
    shift = static_cast<int32_t>(((send ? op.peer : -op.peer) % n + n) % n);
  }
  const P2pKey key{send ? r : other, send ? other : r, op.tag, op.seq, shift};
  const PendingP2p* waiting = pending_p2p_.find(key);
  if (waiting == nullptr) {
    pending_p2p_.insert(key, PendingP2p{r, id, ready});
    return;
  }
  const PendingP2p peer = *waiting;
  pending_p2p_.erase(key);
  P2p p;
  const int mine = send ? kSender : kReceiver;
  p.rank = {key.src, key.dst};
  p.shift = shift;
  p.op[static_cast<size_t>(mine)] = id;
  p.op[static_cast<size_t>(1 - mine)] = peer.op;
  p.ready_ns[static_cast<size_t>(mine)] = ready;
  p.ready_ns[static_cast<size_t>(1 - mine)] = peer.ready_ns;
  size_t slot = 0;
  if (free_p2ps_.empty()) {
    slot = p2ps_.size();
    p2ps_.push_back(p);
  } else {
    slot = free_p2ps_.back();
    free_p2ps_.pop_back();
    p2ps_[slot] = p;
  }
  const int64_t start = std::max(p.ready_ns[0], p.ready_ns[1]);
  if (start > now()) {
    sim_.schedule_at(SimTime::ns(start), handler_, kGroupStart,
                     pack(kP2pChannel, static_cast<int64_t>(slot)));
  } else {
    begin_p2p(slot);
  }
}

uint32_t Engine::pair_index(int64_t src, int64_t dst) {
  const auto key = std::make_pair(src, dst);
  const uint32_t* known = pairs_.find(key);
  if (known != nullptr) return *known;
  const auto index = static_cast<uint32_t>(pair_shapes_.size());
  const std::array<int64_t, 2> ranks{src, dst};
  pair_shapes_.emplace_back(collectives::geometry_of(cluster_, ranks), flows_.footprint(ranks));
  check_not_tp_links(pair_shapes_.back().second);
  pairs_.insert(key, index);
  return index;
}

Engine::TimelinePair& Engine::timeline_pair(const P2p& p) {
  const GroupRole ring = p.shift == 0
                             ? GroupRole::kNone
                             : prog(p.rank[0]).ops[static_cast<size_t>(p.op[kSender])].peer_role;
  const TimelinePairKey key{p.rank[0], p.rank[1], p.shift, ring};
  if (const uint32_t* known = timeline_pairs_of_.find(key); known != nullptr) {
    return timeline_pairs_[*known];
  }
  TimelinePair pair;
  for (int64_t c = 0; c < k_; ++c) {
    const auto [src, dst] = member_pair(p, c);
    const uint32_t shape = pair_index(src, dst);
    pair.shapes.push_back(shape);
    pair.footprints.push_back(&pair_shapes_[shape].second);
  }
  timeline_pairs_of_.insert(key, static_cast<uint32_t>(timeline_pairs_.size()));
  timeline_pairs_.push_back(std::move(pair));
  return timeline_pairs_.back();
}

void Engine::begin_p2p(size_t id) {
  P2p& p = p2ps_[id];
  p.start_ns = now();
  if (p.rank[0] == p.rank[1] && p.shift == 0) {
    end_p2p(id, false);  // a send to oneself takes no time
    return;
  }
  const int64_t bytes = prog(p.rank[0]).ops[static_cast<size_t>(p.op[0])].bytes;
  TimelinePair& pair = timeline_pair(p);
  p.tuned = -1;
  for (const auto& [size, tuned] : pair.tuned) {
    if (size == bytes) p.tuned = tuned;
  }
  if (p.tuned < 0) {
    // Every member's pair is tuned; they must agree (a symmetric fabric).
    for (int64_t c = 0; c < k_; ++c) {
      const collectives::GroupGeometry& geometry =
          pair_shapes_[pair.shapes[static_cast<size_t>(c)]].first;
      const int32_t tuned = tune(geometry, CollectiveOp::kBroadcast, bytes, /*forced=*/false,
                                 member_pair(p, c).first, p.op[0]);
      if (c == 0) {
        p.tuned = tuned;
      } else if (tuned != p.tuned) {
        const TunedTimes& a = tuned_.at(p.tuned);
        const TunedTimes& b = tuned_.at(tuned);
        if (a.latency_ns != b.latency_ns || a.transfer_ns != b.transfer_ns ||
            a.alone_Bps != b.alone_Bps) {
          throw TimelinesDiverged{};
        }
      }
    }
    pair.tuned.emplace_back(bytes, p.tuned);
  }
  const TunedTimes& t = tuned_.at(p.tuned);
  const uint64_t data = pack(kP2pChannel, static_cast<int64_t>(id));
  if (t.alone_Bps > 0) {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns), handler_, kTransferBegin, data);
  } else {
    sim_.schedule_at(SimTime::ns(now() + t.latency_ns + t.transfer_ns), handler_, kCollectiveEnd,
                     data);
  }
}

void Engine::end_p2p(size_t id, bool transferred) {
  const P2p p = p2ps_[id];
  free_p2ps_.push_back(id);
  const bool same = p.rank[0] == p.rank[1];  // one timeline: both sides' streams
  const bool self = same && p.shift == 0;    // a send to oneself
  // Each side's waiting is what its op says it is (the Chakra replay's
  // send/recv: exposed all-reduce; a pipeline stage's: the bubble).
  std::array<Cause, 2> causes{};
  for (const int side : {kSender, kReceiver}) {
    const int64_t r = p.rank[static_cast<size_t>(side)];
    const Op& op = prog(r).ops[static_cast<size_t>(p.op[static_cast<size_t>(side)])];
    causes[static_cast<size_t>(side)] = Cause{op.exposed, p.start_ns};
    if (traced(r)) {
      std::string_view algorithm;
      std::string_view protocol;
      if (p.tuned >= 0) {
        algorithm = tuned_.at(p.tuned).algorithm;
        protocol = tuned_.at(p.tuned).protocol;
      }
      trace_collective(r, op, p.ready_ns[static_cast<size_t>(side)], p.start_ns, now(), 2,
                       algorithm, protocol);
    }
    op_done(r, op.stream, causes[static_cast<size_t>(side)]);
    if (transferred && !op.copy_engine && (side == kSender || !self)) comm_changes(r, -1);
  }
  for (const int side : {kSender, kReceiver}) {
    if (side == kReceiver && same) break;
    const int64_t r = p.rank[static_cast<size_t>(side)];
    if (same) {  // both of its streams advanced
      pass_open_gates(r);
      try_all(r, causes[static_cast<size_t>(side)]);
      break;
    }
    const Op& op = prog(r).ops[static_cast<size_t>(p.op[static_cast<size_t>(side)])];
    wake(r, op.stream, causes[static_cast<size_t>(side)]);
  }
}

}  // namespace clustersim::workloads::engine_detail
