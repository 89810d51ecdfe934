#include "sim/simulator.h"

#include <string>

#include "sim/check.h"

namespace clustersim::sim {

HandlerId Simulator::add_handler(EventHandler& handler) {
  CLUSTERSIM_CHECK(handlers_.size() <= UINT16_MAX, "more than 65536 event handlers");
  handlers_.push_back(&handler);
  return static_cast<HandlerId>(handlers_.size() - 1);
}

void Simulator::enable_prefetch(int near_level) {
  queue_.set_near_hook(
      [](void* self, const Event& event) {
        const Simulator& sim = *static_cast<const Simulator*>(self);
        sim.handlers_[event.handler]->prefetch(event);
      },
      this, near_level);
}

void Simulator::fail_schedule(SimTime time, HandlerId handler) const {
  CLUSTERSIM_CHECK(time >= now_, "event scheduled at " + std::to_string(time.count_ns()) +
                                     " ns, before now (" + std::to_string(now_.count_ns()) +
                                     " ns)");
  CLUSTERSIM_CHECK(handler < handlers_.size(), "unknown handler id " + std::to_string(handler));
  CLUSTERSIM_CHECK(false, "fail_schedule() called for a valid event");
}

RunOutcome Simulator::run_until(SimTime limit) {
  CLUSTERSIM_CHECK(limit >= now_, "run_until(" + std::to_string(limit.count_ns()) +
                                      " ns) is before now (" + std::to_string(now_.count_ns()) +
                                      " ns)");
  stop_requested_ = false;
  Event event;
  while (queue_.pop_not_after(limit, event)) {
    dispatch(event);
    if (stop_requested_) return RunOutcome::kStopped;
  }
  if (limit != SimTime::max()) now_ = limit;
  return queue_.empty() ? RunOutcome::kQueueEmpty : RunOutcome::kTimeLimit;
}

bool Simulator::step() {
  Event event;
  if (!queue_.pop(event)) return false;
  dispatch(event);
  return true;
}

}  // namespace clustersim::sim
