#include "exec/flow_transfers.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {

using sim::SimTime;

void FlowTransfers::start(std::span<const collectives::Footprint* const> footprints,
                          double busbw_factor, double alone_Bps, double bytes, uint64_t owner) {
  open_batch();
  uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(transfers_.size());
    transfers_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Transfer& tr = transfers_[slot];
  tr.owner = owner;
  tr.remaining_bytes = bytes;
  tr.last_ns = now();
  tr.rate_Bps = 0;  // until the batch is solved
  tr.event = sim::EventId{};
  tr.solved = 0;
  tr.flows.clear();
  tr.footprints.clear();
  if (mode_ == Mode::kQuotient) {
    quotient_start(slot, footprints, busbw_factor, alone_Bps);
    defer_solve();  // the classes settle once the instant's starts are in
    return;
  }
  const bool merge = mode_ == Mode::kClaims;
  if (merge) {
    tr.load_scale = busbw_factor * alone_Bps;
    if (!claim(footprints, tr.load_scale)) throw BundlesCoupled{};
    tr.footprints.assign(footprints.begin(), footprints.end());
  }
  const size_t solved = merge ? 1 : footprints.size();
  for (const collectives::Footprint* fp : footprints.first(solved)) {
    const collectives::FlowId flow = flows_.start(*fp, busbw_factor, alone_Bps);
    const auto f = static_cast<size_t>(flow);
    if (slot_of_flow_.size() <= f) slot_of_flow_.resize(f + 1);
    slot_of_flow_[f] = slot;
    tr.flows.push_back(flow);
  }
  close_or_defer_batch();
}

void FlowTransfers::on_solve_event() {
  flush_scheduled_ = false;
  if (mode_ == Mode::kQuotient) {
    quotient_reload();
    if (quotient_.batch_open()) solve();
    quotient_check();
    return;
  }
  if (flows_.batch_open()) solve();
}

uint64_t FlowTransfers::finish(uint32_t transfer) {
  Transfer& tr = transfers_[transfer];
  const uint64_t owner = tr.owner;
  if (mode_ == Mode::kQuotient) {
    quotient_finish(transfer);
    free_slots_.push_back(transfer);
    defer_solve();
    return owner;
  }
  open_batch();
  for (const collectives::FlowId flow : tr.flows) flows_.finish(flow);
  if (mode_ == Mode::kClaims) release(tr.footprints, tr.load_scale);
  free_slots_.push_back(transfer);
  close_or_defer_batch();
  return owner;
}

void FlowTransfers::open_batch() {
  if (!flows_.batch_open()) flows_.begin_batch();
}

void FlowTransfers::close_or_defer_batch() {
  if (flows_.batch_trivial()) {
    solve();
    return;
  }
  defer_solve();
}

void FlowTransfers::defer_solve() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  sim_.schedule_at(sim_.now(), handler_, solve_kind_);
}

void FlowTransfers::solve() {
  const bool quotient = mode_ == Mode::kQuotient;
  if (quotient) {
    quotient_.end_batch();
  } else {
    flows_.end_batch();
  }
  ++solves_;
  for (const collectives::FlowId id : quotient ? quotient_.last_changed() : flows_.last_changed()) {
    const uint32_t slot = slot_of_flow_[static_cast<size_t>(id)];
    Transfer& tr = transfers_[slot];
    if (tr.solved == solves_) continue;  // a bundle seen through another of its flows
    tr.solved = solves_;
    const double rate = quotient ? quotient_rate(tr) : flows_.rate(tr.flows.front());
    for (size_t i = 1; i < tr.flows.size(); ++i) {
      if (!same_rate(flows_.rate(tr.flows[i]), rate)) throw RatesApart{};
    }
    if (rate == tr.rate_Bps) continue;
    tr.remaining_bytes = std::max(
        0.0, tr.remaining_bytes - tr.rate_Bps * static_cast<double>(now() - tr.last_ns) * 1e-9);
    tr.last_ns = now();
    tr.rate_Bps = rate;
    sim_.cancel(tr.event);
    schedule_end(slot);
  }
}

void FlowTransfers::schedule_end(uint32_t transfer) {
  Transfer& tr = transfers_[transfer];
  const auto ns = static_cast<int64_t>(std::ceil(tr.remaining_bytes / tr.rate_Bps * 1e9));
  tr.event = sim_.schedule_cancellable_at(SimTime::ns(now() + ns), handler_, end_kind_, transfer);
}

}  // namespace clustersim::workloads
