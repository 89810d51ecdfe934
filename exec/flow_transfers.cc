#include "exec/flow_transfers.h"

#include <algorithm>
#include <cmath>

namespace clustersim::workloads {

using sim::SimTime;

void FlowTransfers::start(const collectives::Footprint& footprint, double busbw_factor,
                          double alone_Bps, double bytes, uint64_t owner) {
  open_batch();
  const collectives::FlowId flow = flows_.start(footprint, busbw_factor, alone_Bps);
  const auto f = static_cast<size_t>(flow);
  if (transfers_.size() <= f) transfers_.resize(f + 1);
  Transfer& tr = transfers_[f];
  tr.owner = owner;
  tr.remaining_bytes = bytes;
  tr.last_ns = now();
  tr.rate_Bps = 0;  // until the batch is solved
  tr.event = sim::EventId{};
  close_or_defer_batch();
}

void FlowTransfers::on_solve_event() {
  flush_scheduled_ = false;
  if (flows_.batch_open()) solve();
}

uint64_t FlowTransfers::finish(uint32_t flow) {
  const uint64_t owner = transfers_[flow].owner;
  open_batch();
  flows_.finish(collectives::FlowId{flow});
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
  for (const collectives::FlowId id : flows_.last_changed()) {
    const auto f = static_cast<uint32_t>(id);
    Transfer& tr = transfers_[f];
    const double rate = flows_.rate(id);
    if (rate == tr.rate_Bps) continue;
    tr.remaining_bytes = std::max(
        0.0, tr.remaining_bytes - tr.rate_Bps * static_cast<double>(now() - tr.last_ns) * 1e-9);
    tr.last_ns = now();
    tr.rate_Bps = rate;
    sim_.cancel(tr.event);
    schedule_end(f);
  }
}

void FlowTransfers::schedule_end(uint32_t flow) {
  Transfer& tr = transfers_[flow];
  const auto ns = static_cast<int64_t>(std::ceil(tr.remaining_bytes / tr.rate_Bps * 1e9));
  tr.event = sim_.schedule_cancellable_at(SimTime::ns(now() + ns), handler_, end_kind_, flow);
}

}  // namespace clustersim::workloads
