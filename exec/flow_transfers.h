// Collective transfers sharing the links by max-min fairness, on the event
// engine: the bookkeeping the step simulator and the Chakra replay share.
//
// A transfer moves its bytes at the rate collectives::CollectiveFlows gives
// its flow. Transfers starting or ending at one instant are solved together,
// once, after every event of that instant queued so far (the owner's
// `solve_kind` event) -- unless the batch is trivial (no flow it touches is
// coupled to another), which is solved at once. When a solve changes a
// flow's rate, its progress is brought up to date at the old rate and its
// end is rescheduled at the new one (an `end_kind` event carrying the flow
// id; end times round up to the nanosecond).
//
// The owner (an event handler) forwards its `solve_kind` events to
// on_solve_event() and its `end_kind` events to finish(), which returns the
// value the transfer was started with.
// Thread safety: none; one per simulation.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/collective_flows.h"
#include "sim/simulator.h"

namespace clustersim::workloads {

class FlowTransfers {
 public:
  FlowTransfers(sim::Simulator& sim, collectives::CollectiveFlows& flows)
      : sim_(sim), flows_(flows) {}

  // Where end and solve events go; call once the owner's handler exists.
  void bind(sim::HandlerId handler, sim::EventKind end_kind, sim::EventKind solve_kind) {
    handler_ = handler;
    end_kind_ = end_kind;
    solve_kind_ = solve_kind;
  }

  // Starts moving `bytes` over `footprint` (see CollectiveFlows::start);
  // `owner` comes back from finish().
  void start(const collectives::Footprint& footprint, double busbw_factor, double alone_Bps,
             double bytes, uint64_t owner);

  // The owner's `solve_kind` event.
  void on_solve_event();

  // The owner's `end_kind` event for `flow`: the transfer is done; the
  // others are re-solved. Returns its owner value.
  uint64_t finish(uint32_t flow);

 private:
  struct Transfer {
    uint64_t owner = 0;
    double remaining_bytes = 0;
    double rate_Bps = 0;
    int64_t last_ns = 0;
    sim::EventId event;
  };

  int64_t now() const { return sim_.now().count_ns(); }
  void open_batch();
  void close_or_defer_batch();
  void solve();
  void schedule_end(uint32_t flow);

  sim::Simulator& sim_;
  collectives::CollectiveFlows& flows_;
  sim::HandlerId handler_ = 0;
  sim::EventKind end_kind_ = 0;
  sim::EventKind solve_kind_ = 0;
  std::vector<Transfer> transfers_;  // by flow id
  bool flush_scheduled_ = false;     // a solve event is pending for now
};

}  // namespace clustersim::workloads
