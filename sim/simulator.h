// Simulator: the event loop. Owns the clock and the event queue; delivers
// each event to the handler it names.
//
// Contract:
//  * time never goes backwards: scheduling before now() is a broken
//    invariant (InvariantError), not a silent reorder;
//  * events with equal times run in the order they were scheduled;
//  * handlers are registered once (add_handler) and are not owned: they must
//    outlive every run. A handler may schedule, cancel and stop() freely
//    while it handles an event.
// Several simulators can live in one process (tests, parallel sweeps); there
// is no global engine. Thread safety: one simulator per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"
#include "sim/event_queue.h"
#include "sim/sim_time.h"

namespace clustersim::sim {

class Simulator;

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  virtual void on_event(Simulator& sim, const Event& event) = 0;
  // `event` will be delivered soon (see EventQueue::set_near_hook): a
  // handler whose events touch memory spread wide may prefetch it. Nothing
  // else may change.
  virtual void prefetch(const Event& event) const { (void)event; }
};

enum class RunOutcome {
  kQueueEmpty,  // nothing left to do
  kTimeLimit,   // the next event lies beyond the limit; now() == limit
  kStopped,     // a handler called stop()
};

class Simulator {
 public:
  // At most 65536 handlers (HandlerId is 16 bits).
  HandlerId add_handler(EventHandler& handler);

  SimTime now() const { return now_; }

  // Lets handlers prefetch for events a cascade brings within `near_level`
  // levels of the queue's cursor (EventHandler::prefetch); off by default.
  void enable_prefetch(int near_level);

  // Schedules an event that will fire: the cheapest kind (most events).
  void schedule_at(SimTime time, HandlerId handler, EventKind kind = 0, uint64_t data = 0) {
    check_schedule(time, handler);
    queue_.push(Event{time, data, handler, kind});
  }
  void schedule_in(SimTime delay, HandlerId handler, EventKind kind = 0, uint64_t data = 0) {
    schedule_at(now_ + delay, handler, kind, data);
  }
  // Schedules an event that may be cancelled (timeouts, completions that
  // contention can move) and returns its id.
  EventId schedule_cancellable_at(SimTime time, HandlerId handler, EventKind kind = 0,
                                  uint64_t data = 0) {
    check_schedule(time, handler);
    return queue_.push_cancellable(Event{time, data, handler, kind});
  }
  EventId schedule_cancellable_in(SimTime delay, HandlerId handler, EventKind kind = 0,
                                  uint64_t data = 0) {
    return schedule_cancellable_at(now_ + delay, handler, kind, data);
  }
  // False when the event already fired or was already cancelled.
  bool cancel(EventId id) { return queue_.cancel(id); }

  // Runs every event with time <= limit (precondition: limit >= now()). On
  // kTimeLimit, and on kQueueEmpty with a finite limit, the clock ends at
  // `limit` (the simulated world idled until then); after run() it stays at
  // the last event, and on kStopped at the event that called stop().
  RunOutcome run_until(SimTime limit);
  // Runs until the queue is empty or a handler stops the run.
  RunOutcome run() { return run_until(SimTime::max()); }
  // Processes the earliest pending event, if any. Returns false when the
  // queue is empty. For stepping through a simulation (tests, debuggers).
  bool step();
  // Ends the current run after the event being handled.
  void stop() { stop_requested_ = true; }

  size_t pending() const { return queue_.size(); }
  uint64_t events_processed() const { return processed_; }

 private:
  void check_schedule(SimTime time, HandlerId handler) const {
    if (time < now_ || handler >= handlers_.size()) [[unlikely]] {
      fail_schedule(time, handler);
    }
  }
  [[noreturn]] void fail_schedule(SimTime time, HandlerId handler) const;

  void dispatch(const Event& event) {
    now_ = event.time;
    ++processed_;
    handlers_[event.handler]->on_event(*this, event);
  }

  std::vector<EventHandler*> handlers_;
  EventQueue queue_;
  SimTime now_ = SimTime::zero();
  uint64_t processed_ = 0;
  bool stop_requested_ = false;
};

}  // namespace clustersim::sim
