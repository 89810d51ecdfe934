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
  if (merge_) {
    if (!claim(footprints)) throw BundlesCoupled{};
    tr.footprints.assign(footprints.begin(), footprints.end());
  }
  const size_t solved = merge_ ? 1 : footprints.size();
  for (const collectives::Footprint* fp : footprints.first(solved)) {
    const collectives::FlowId flow = flows_.start(*fp, busbw_factor, alone_Bps);
    const auto f = static_cast<size_t>(flow);
    if (slot_of_flow_.size() <= f) slot_of_flow_.resize(f + 1);
    slot_of_flow_[f] = slot;
    tr.flows.push_back(flow);
  }
  close_or_defer_batch();
}

bool FlowTransfers::claim(std::span<const collectives::Footprint* const> footprints) {
  const collectives::Footprint& first = *footprints.front();
  // Bundles of different sizes on one link would leave some member's copy
  // without the other bundle's: not a copy of member 0's problem.
  const auto size = static_cast<int32_t>(footprints.size());
  // (A link copying `origin` has its capacity, checked when first claimed.)
  const auto take = [this, size](size_t link, int32_t member, int64_t origin) {
    if (link_refs_.size() <= link) {
      link_refs_.resize(link + 1, 0);
      link_member_.resize(link + 1, -1);
      link_bundle_size_.resize(link + 1, 0);
      copy_of_.resize(link + 1, -1);
    }
    if (link_refs_[link]++ == 0) {
      link_member_[link] = member;
      link_bundle_size_[link] = size;
      copy_of_[link] = origin;
      return origin < 0 || static_cast<size_t>(origin) == link ||
             flows_.link_capacity(static_cast<collectives::LinkId>(link)) ==
                 flows_.link_capacity(static_cast<collectives::LinkId>(origin));
    }
    return link_member_[link] == member && link_bundle_size_[link] == size &&
           copy_of_[link] == origin;
  };
  if (footprints.size() == 1) {  // a flow outside the bundles: its links are no member's
    for (const collectives::LinkLoad& load : first.loads) {
      if (!take(static_cast<size_t>(load.link), -2, -1)) return false;
    }
    return true;
  }
  if (image_.size() < footprints.size()) image_.resize(footprints.size());
  for (size_t c = 0; c < footprints.size(); ++c) {
    const collectives::Footprint& fp = *footprints[c];
    std::vector<int64_t>& image = image_[c];
    if (fp.loads.size() != first.loads.size() || fp.solo_rate_Bps != first.solo_rate_Bps ||
        fp.reference_rate_Bps != first.reference_rate_Bps) {
      return false;
    }
    for (size_t i = 0; i < fp.loads.size(); ++i) {
      const collectives::LinkLoad& mine = fp.loads[i];
      const collectives::LinkLoad& base = first.loads[i];
      const auto link = static_cast<size_t>(mine.link);
      const auto origin = static_cast<int64_t>(base.link);
      if (mine.coefficient != base.coefficient || !take(link, static_cast<int32_t>(c), origin)) {
        return false;
      }
      if (image.size() <= static_cast<size_t>(origin)) {
        image.resize(static_cast<size_t>(origin) + 1, -1);
      }
      int64_t& to = image[static_cast<size_t>(origin)];
      if (to != -1 && to != static_cast<int64_t>(link)) return false;
      to = static_cast<int64_t>(link);
    }
  }
  return true;
}

void FlowTransfers::release(std::span<const collectives::Footprint* const> footprints) {
  for (const collectives::Footprint* fp : footprints) {
    for (const collectives::LinkLoad& load : fp->loads) {
      const auto link = static_cast<size_t>(load.link);
      if (--link_refs_[link] != 0) continue;
      const int32_t member = link_member_[link];
      if (member >= 0) {
        image_[static_cast<size_t>(member)][static_cast<size_t>(copy_of_[link])] = -1;
      }
      link_member_[link] = -1;
      copy_of_[link] = -1;
    }
  }
}

void FlowTransfers::on_solve_event() {
  flush_scheduled_ = false;
  if (flows_.batch_open()) solve();
}

uint64_t FlowTransfers::finish(uint32_t transfer) {
  Transfer& tr = transfers_[transfer];
  const uint64_t owner = tr.owner;
  open_batch();
  for (const collectives::FlowId flow : tr.flows) flows_.finish(flow);
  if (merge_) release(tr.footprints);
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
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  sim_.schedule_at(sim_.now(), handler_, solve_kind_);
}

void FlowTransfers::solve() {
  flows_.end_batch();
  ++solves_;
  for (const collectives::FlowId id : flows_.last_changed()) {
    const uint32_t slot = slot_of_flow_[static_cast<size_t>(id)];
    Transfer& tr = transfers_[slot];
    if (tr.solved == solves_) continue;  // a bundle seen through another of its flows
    tr.solved = solves_;
    const double rate = flows_.rate(tr.flows.front());
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
