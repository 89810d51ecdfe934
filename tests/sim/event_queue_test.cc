#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/random_stream.h"

namespace clustersim::sim {
namespace {

Event at(int64_t ns, uint64_t data) { return Event{SimTime::ns(ns), data, 0, 0}; }

std::vector<uint64_t> drain(EventQueue& queue) {
  std::vector<uint64_t> order;
  Event e;
  while (queue.pop(e)) order.push_back(e.data);
  return order;
}

TEST(EventQueue, PopsInTimeOrder) {
  EventQueue queue;
  for (int64_t t : {50, 10, 40, 20, 30}) queue.push(at(t, static_cast<uint64_t>(t)));
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{10, 20, 30, 40, 50}));
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueue, TiesResolveInInsertionOrder) {
  EventQueue queue;
  queue.push(at(100, 1));
  queue.push(at(5, 0));
  queue.push(at(100, 2));
  queue.push(at(100, 3));
  // Times far apart so that the tied events travel through several levels.
  queue.push(at(int64_t{1} << 40, 5));
  queue.push(at(int64_t{1} << 40, 6));
  queue.push(at(100, 4));
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(EventQueue, EventDeliversItsPayload) {
  EventQueue queue;
  queue.push(Event{SimTime::us(3), 0xfeedULL, 7, 9});
  Event e;
  ASSERT_TRUE(queue.pop(e));
  EXPECT_EQ(e.time, SimTime::us(3));
  EXPECT_EQ(e.handler, 7u);
  EXPECT_EQ(e.kind, 9u);
  EXPECT_EQ(e.data, 0xfeedULL);
  EXPECT_FALSE(queue.pop(e));
}

TEST(EventQueue, CancelRemovesExactlyThatEvent) {
  EventQueue queue;
  const EventId a = queue.push_cancellable(at(10, 1));
  const EventId b = queue.push_cancellable(at(20, 2));
  queue.push(at(30, 3));
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_TRUE(queue.cancel(b));
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_FALSE(queue.cancel(b)) << "second cancel of the same event";
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{1, 3}));
  EXPECT_FALSE(queue.cancel(a)) << "cancel after the event fired";
  EXPECT_FALSE(queue.cancel(EventId{})) << "default id";
  EXPECT_FALSE(queue.cancel(EventId{999, 1})) << "id from nowhere";
}

TEST(EventQueue, StaleIdDoesNotCancelALaterEventInTheSameSlot) {
  EventQueue queue;
  const EventId first = queue.push_cancellable(at(10, 1));
  Event e;
  ASSERT_TRUE(queue.pop(e));
  const EventId second = queue.push_cancellable(at(20, 2));  // reuses the slot
  EXPECT_EQ(second.slot, first.slot);
  EXPECT_FALSE(queue.cancel(first));
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{2}));
}

TEST(EventQueue, PopNotAfterRespectsTheLimit) {
  EventQueue queue;
  queue.push(at(10, 1));
  queue.push(at(20, 2));
  Event e;
  ASSERT_TRUE(queue.pop_not_after(SimTime::ns(15), e));
  EXPECT_EQ(e.data, 1u);
  EXPECT_FALSE(queue.pop_not_after(SimTime::ns(15), e));
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue.peek_time(), SimTime::ns(20));
}

TEST(EventQueue, EventsBeforeTheCursorComeFirst) {
  // peek_time() moves the cursor to 1000; events pushed afterwards at earlier
  // times (allowed: the simulator's clock may still be behind) must still
  // come out first, in (time, insertion) order.
  EventQueue queue;
  queue.push(at(1000, 9));
  EXPECT_EQ(queue.peek_time(), SimTime::ns(1000));
  queue.push(at(500, 2));
  queue.push(at(200, 1));
  queue.push(at(500, 3));
  queue.push(at(1000, 10));
  EXPECT_EQ(queue.peek_time(), SimTime::ns(200));
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{1, 2, 3, 9, 10}));
}

TEST(EventQueue, ClearDropsEverythingAndStalesIds) {
  EventQueue queue;
  const EventId id = queue.push_cancellable(at(10, 1));
  queue.push(at(5, 0));
  queue.clear();
  EXPECT_TRUE(queue.empty());
  queue.push_cancellable(at(3, 7));
  EXPECT_FALSE(queue.cancel(id));
  EXPECT_EQ(drain(queue), (std::vector<uint64_t>{7}));
}

// The near hook sees each live event a cascade brings down from level <= 2
// (an event placed within 64 us of the cursor cascades at most from there),
// before it is delivered, and changes nothing in the order.
TEST(EventQueue, NearHookSeesEventsBeforeDeliveryAndChangesNoOrder) {
  struct Seen {
    std::vector<uint64_t> data;
  } seen;
  EventQueue hooked;
  EventQueue plain;
  hooked.set_near_hook(
      [](void* context, const Event& e) { static_cast<Seen*>(context)->data.push_back(e.data); },
      &seen, 2);
  std::vector<EventId> ids;
  for (uint64_t i = 0; i < 2000; ++i) {
    // Spread over ~200 us, several per 256 ns slot, a tenth cancelled.
    const Event e = at(static_cast<int64_t>((i * 7919) % 200'000) + 300'000, i);
    ids.push_back(hooked.push_cancellable(e));
    plain.push_cancellable(e);
  }
  for (size_t i = 0; i < ids.size(); i += 10) ASSERT_TRUE(hooked.cancel(ids[i]));
  std::vector<uint64_t> order;
  Event e;
  while (hooked.pop(e)) {
    EXPECT_NE(std::find(seen.data.begin(), seen.data.end(), e.data), seen.data.end())
        << "event " << e.data << " delivered before the hook saw it";
    order.push_back(e.data);
  }
  for (uint64_t cancelled = 0; cancelled < 2000; cancelled += 10) {
    EXPECT_EQ(std::find(seen.data.begin(), seen.data.end(), cancelled), seen.data.end());
  }
  std::vector<uint64_t> expected = drain(plain);
  std::erase_if(expected, [](uint64_t d) { return d % 10 == 0; });
  EXPECT_EQ(order, expected);
}

// Property: against a reference (sort by time, then insertion), any mix of
// pushes at random future times (near and far), cancels and pops gives the
// same sequence.
TEST(EventQueue, MatchesAReferenceOrderUnderRandomOperations) {
  RandomStream rng(2024, "test.event_queue", 0);
  EventQueue queue;
  struct Ref {
    int64_t time;
    uint64_t seq;
    uint64_t data;
    EventId id;
    bool cancellable;
  };
  std::vector<Ref> pending;
  int64_t now = 0;
  uint64_t seq = 0;
  uint64_t cancels = 0;
  for (int op = 0; op < 200'000; ++op) {
    const uint64_t choice = rng.next_below(100);
    if (choice < 55 || pending.empty()) {
      // Delays from 0 (ties with now) to 2^40 ns, log-uniform-ish.
      const uint64_t bits = rng.next_below(41);
      const int64_t delay = static_cast<int64_t>(rng.next_below(uint64_t{1} << bits));
      const int64_t time = now + (rng.next_below(4) == 0 ? 0 : delay);
      const bool cancellable = rng.next_below(2) == 0;
      const Event e = at(time, seq);
      const EventId id = cancellable ? queue.push_cancellable(e) : EventId{};
      if (!cancellable) queue.push(e);
      pending.push_back(Ref{time, seq, seq, id, cancellable});
      ++seq;
    } else if (choice < 65) {
      const size_t victim = rng.next_below(pending.size());
      if (pending[victim].cancellable) {
        ASSERT_TRUE(queue.cancel(pending[victim].id));
        ASSERT_FALSE(queue.cancel(pending[victim].id));
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(victim));
        ++cancels;
      }
    } else {
      const auto earliest = std::min_element(pending.begin(), pending.end(), [](auto& a, auto& b) {
        return std::tie(a.time, a.seq) < std::tie(b.time, b.seq);
      });
      Event e;
      ASSERT_TRUE(queue.pop(e));
      ASSERT_EQ(e.data, earliest->data) << "at operation " << op;
      ASSERT_EQ(e.time.count_ns(), earliest->time);
      now = earliest->time;
      pending.erase(earliest);
    }
    ASSERT_EQ(queue.size(), pending.size());
  }
  EXPECT_GT(cancels, 1000u);
  std::sort(pending.begin(), pending.end(),
            [](auto& a, auto& b) { return std::tie(a.time, a.seq) < std::tie(b.time, b.seq); });
  std::vector<uint64_t> expected;
  for (const Ref& r : pending) expected.push_back(r.data);
  EXPECT_EQ(drain(queue), expected);
}

}  // namespace
}  // namespace clustersim::sim
