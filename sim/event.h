// Event: the small POD record the engine queues and delivers.
//
// No closures: an event names its handler by index (HandlerId, from
// Simulator::add_handler) and carries a handler-defined `kind` and one
// 64-bit `data` word (an entity id, an index into the handler's own arrays).
// Handlers keep their state in flat arrays and look it up from `data`, so
// scheduling an event never allocates.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sim/sim_time.h"

namespace clustersim::sim {

// 16 bits each: a simulation has a few dozen handlers (components), each
// with a handful of event kinds; the queue entry stays at 24 bytes.
using HandlerId = uint16_t;
using EventKind = uint16_t;

struct Event {
  SimTime time;
  uint64_t data = 0;
  HandlerId handler = 0;
  EventKind kind = 0;
};
static_assert(std::is_trivially_copyable_v<Event> && sizeof(Event) == 24);

// Identifies one scheduled event for cancel(). Stale after the event fires or
// is cancelled: cancel() then returns false. Default-constructed ids never
// match a scheduled event.
struct EventId {
  uint32_t slot = 0;
  uint32_t generation = 0;
  friend constexpr bool operator==(EventId, EventId) = default;
};

}  // namespace clustersim::sim
