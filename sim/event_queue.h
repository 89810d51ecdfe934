// EventQueue: pending events ordered by (time, insertion sequence).
//
// Ties in time resolve in insertion order, so the order of a run is a pure
// function of what was scheduled and when: bit-for-bit reproducible.
//
// Structure: a radix queue on the time bits, one level per byte (a
// hierarchical timing wheel with 8 levels of 256 slots). An event lives at the
// level of the highest byte in which its time differs from the cursor (the
// time of the earliest event, once found), in the slot given by that byte.
// When the cursor reaches a higher-level slot, its events move to strictly
// lower levels, so an event moves at most 8 times and, for delays under
// 2^24 ns (16.7 ms), at most 3 times; finding the next slot is a bit scan.
// This is what lets the engine run about 20 million events per second with
// 100,000 pending (bench/engine_bench.cc measures it against a binary heap).
//
// Insertion order within one time comes for free: a slot only ever receives
// events in sequence order (appends are new events; a cascade fills slots
// that were empty, in the order of the slot it empties), and a slot is
// drained front to back.
//
// Events scheduled before the cursor (possible after peek_time() or
// pop_not_after() looked ahead and the caller then scheduled something
// earlier, e.g. after Simulator::run_until stopped at its limit) go to a small
// binary heap ordered by (time, sequence); everything in it precedes every
// event in the wheel.
//
// Entries (24 bytes) carry their payload, so delivering an event touches no
// other memory. A cancellable event also holds a slot of a compact array
// (recycled through a LIFO free list) that makes cancellation O(1) and lazy:
// cancel() marks the slot, and the entry is dropped when it is reached.
// Neither push nor pop allocates once the buckets and the slot array have
// grown. A generation is 32 bits: an id becomes ambiguous only after 2^32
// reuses of one slot while the id is still held.
//
// Thread safety: none; one queue belongs to one simulator on one thread.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace clustersim::sim {

class EventQueue {
 public:
  // Schedules `event` (time >= 0) for good: it cannot be cancelled, and costs
  // nothing beyond its entry.
  void push(const Event& event) { insert(entry_of(event, kNoSlot)); }

  // Schedules `event` (time >= 0) and returns the id that cancel() accepts.
  EventId push_cancellable(const Event& event) {
    const uint32_t slot = allocate_slot();
    insert(entry_of(event, slot));
    return EventId{slot, slots_[slot].generation};
  }

  // Removes a pending event. Returns false if `id` already fired, was already
  // cancelled, or never came from this queue.
  bool cancel(EventId id);

  // Number of pending (not cancelled) events.
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  // Time of the earliest pending event. Precondition: !empty().
  SimTime peek_time() {
    if (!early_.empty()) {
      discard_cancelled_early();
      if (!early_.empty()) return SimTime::ns(static_cast<int64_t>(early_.front().entry.time));
    }
    settle();
    return SimTime::ns(static_cast<int64_t>(cursor_));
  }

  // Removes the earliest pending event into `out`; false when empty.
  bool pop(Event& out) { return pop_not_after(SimTime::max(), out); }

  // Removes the earliest pending event into `out` if its time is <= limit;
  // false (and nothing removed) when empty or when it lies beyond the limit.
  // One call does the work of peek_time() and pop().
  bool pop_not_after(SimTime limit, Event& out) {
    if (live_ == 0) return false;
    const auto limit_ns = static_cast<uint64_t>(limit.count_ns());
    if (!early_.empty()) {
      discard_cancelled_early();
      if (!early_.empty()) {
        const WheelEntry top = early_.front().entry;
        if (top.time > limit_ns) return false;
        pop_early();
        deliver(top, out);
        return true;
      }
    }
    std::vector<WheelEntry>* bucket = &wheel_[0][cursor_ & kDigitMask];
    // Fast paths: the cursor's bucket still holds a live entry, or the next
    // occupied level-0 bucket does; otherwise settle() cascades.
    if (head_ >= bucket->size() || !is_live((*bucket)[head_])) [[unlikely]] {
      if (head_ < bucket->size() || level_count_[0] == 0 || !advance_to_next_level0()) {
        settle();
      }
      bucket = &wheel_[0][cursor_ & kDigitMask];
    }
    if (cursor_ > limit_ns) return false;
    const WheelEntry top = (*bucket)[head_];
    advance_head(*bucket);
    deliver(top, out);
    return true;
  }

  // Drops every pending event; ids handed out before stay stale.
  void clear();

  // Called with each live entry a cascade from a level <= near_level moves
  // down (level 2: the events of the next 65 us or so): its owner may
  // prefetch what handling it will touch, so that the cache misses of many
  // events overlap instead of each event waiting for its own. The order and
  // contents of the queue do not depend on it.
  using NearHook = void (*)(void* context, const Event& event);
  void set_near_hook(NearHook hook, void* context, int near_level) {
    near_hook_ = hook;
    near_context_ = context;
    near_level_ = near_level;
  }

 private:
  static constexpr int kLevels = 8;
  static constexpr int kDigitBits = 8;
  static constexpr size_t kSlotsPerLevel = size_t{1} << kDigitBits;
  static constexpr uint64_t kDigitMask = kSlotsPerLevel - 1;
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  struct WheelEntry {
    uint64_t time;
    uint64_t data;
    HandlerId handler;
    EventKind kind;
    uint32_t slot;  // kNoSlot for events that cannot be cancelled
  };
  static_assert(sizeof(WheelEntry) == 24);
  struct EarlyEntry {
    WheelEntry entry;
    uint64_t seq;
  };
  // A slot is free (state = next free slot or kNoSlot), held by a pending
  // event (kPending), or held by a cancelled entry not yet reached
  // (kCancelled). Its generation moves on when its event fires or is
  // cancelled, so an EventId matches only while its event is pending.
  struct Slot {
    uint32_t generation;
    uint32_t state;
  };
  static constexpr uint32_t kPending = UINT32_MAX - 1;
  static constexpr uint32_t kCancelled = UINT32_MAX - 2;

  // Entries without a slot cannot be cancelled and are always live.
  bool is_live(const WheelEntry& e) const {
    return e.slot == kNoSlot || slots_[e.slot].state != kCancelled;
  }

  static WheelEntry entry_of(const Event& event, uint32_t slot) {
    return WheelEntry{static_cast<uint64_t>(event.time.count_ns()), event.data, event.handler,
                      event.kind, slot};
  }

  void insert(const WheelEntry& entry) {
    if (entry.time >= cursor_) [[likely]] {
      place(entry);
    } else {
      // Only early entries need an explicit sequence: they are ordered
      // among themselves, and all come before every wheel entry.
      push_early(EarlyEntry{entry, early_seq_++});
    }
    ++live_;
  }

  // Drops a dead (cancelled) entry that has been taken out of the queue.
  void discard(const WheelEntry& e) { free_slot(e.slot); }
  // Which slots of one level hold entries.
  struct Occupancy {
    std::array<uint64_t, kSlotsPerLevel / 64> words{};
    void set(size_t i) { words[i >> 6] |= uint64_t{1} << (i & 63); }
    void reset(size_t i) { words[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
    // Lowest occupied index >= from, or kSlotsPerLevel.
    size_t first_from(size_t from) const {
      size_t w = from >> 6;
      uint64_t bits = words[w] & (~uint64_t{0} << (from & 63));
      for (;;) {
        if (bits != 0) return (w << 6) + static_cast<size_t>(std::countr_zero(bits));
        if (++w == words.size()) return kSlotsPerLevel;
        bits = words[w];
      }
    }
  };

  static int level_of(uint64_t time, uint64_t cursor) {
    const uint64_t diff = time ^ cursor;
    return diff == 0 ? 0 : (63 - std::countl_zero(diff)) / kDigitBits;
  }

  void place(const WheelEntry& e) {
    const int level = level_of(e.time, cursor_);
    const size_t index = (e.time >> (level * kDigitBits)) & kDigitMask;
    std::vector<WheelEntry>& bucket = wheel_[level][index];
    if (level >= kSpareLevel && bucket.capacity() == 0 && !spare_.empty()) [[unlikely]] {
      spare_entries_ -= spare_.back().capacity();
      bucket.swap(spare_.back());
      spare_.pop_back();
    }
    bucket.push_back(e);
    occupancy_[level].set(index);
    ++level_count_[level];
  }

  void deliver(const WheelEntry& e, Event& out) {
    out = Event{SimTime::ns(static_cast<int64_t>(e.time)), e.data, e.handler, e.kind};
    if (e.slot != kNoSlot) {
      ++slots_[e.slot].generation;  // the id of this event is now stale
      free_slot(e.slot);
    }
    --live_;
  }

  // Pops the front of the current level-0 bucket.
  void advance_head(std::vector<WheelEntry>& bucket) {
    --level_count_[0];
    if (++head_ == bucket.size()) {
      bucket.clear();
      head_ = 0;
      occupancy_[0].reset(cursor_ & kDigitMask);
    }
  }

  // The cursor's bucket is empty and level 0 is not: moves the cursor to the
  // next occupied level-0 bucket. True if its front entry is live.
  bool advance_to_next_level0() {
    const size_t index = occupancy_[0].first_from(cursor_ & kDigitMask);
    cursor_ = (cursor_ & ~kDigitMask) | index;
    head_ = 0;
    return is_live(wheel_[0][index].front());
  }

  // Makes the current level-0 bucket's front the earliest live wheel entry.
  // Precondition: the wheel holds at least one live entry.
  void settle();

  void push_early(const EarlyEntry& e);
  void pop_early();
  void discard_cancelled_early();

  uint32_t allocate_slot() {
    uint32_t slot = free_head_;
    if (slot != kNoSlot) {
      free_head_ = slots_[slot].state;
    } else {
      slot = grow_slab();
    }
    slots_[slot].state = kPending;
    return slot;
  }
  void free_slot(uint32_t slot) {
    slots_[slot].state = free_head_;
    free_head_ = slot;
  }
  uint32_t grow_slab();

  std::array<std::array<std::vector<WheelEntry>, kSlotsPerLevel>, kLevels> wheel_;
  std::array<Occupancy, kLevels> occupancy_{};
  std::array<size_t, kLevels> level_count_{};
  // Next entry to deliver in the level-0 bucket of the cursor.
  size_t head_ = 0;
  // Every wheel entry has time >= cursor_, and shares with it all bytes above
  // its level.
  uint64_t cursor_ = 0;
  // Emptied buffers of levels >= kSpareLevel, most recently emptied last. A
  // bucket there that starts filling takes the hottest one, so the memory
  // the wheel touches stays about the size of what is pending instead of
  // every bucket's peak. (Lower levels span at most 64 us; their buckets are
  // small and reused soon, so recycling them would cost more than it saves.)
  static constexpr int kSpareLevel = 2;
  // The pool holds at most as many entries as are pending, plus
  // kSpareSlack: a buffer keeps the capacity of the largest burst it ever
  // held, and without a bound the pool would keep every burst's (98,304
  // ranks: 0.7 GB of buffers for 150,000 pending events).
  std::vector<std::vector<WheelEntry>> spare_;
  size_t spare_entries_ = 0;  // their capacities, summed
  static constexpr size_t kSpareSlack = size_t{1} << 16;
  std::vector<EarlyEntry> early_;  // binary min-heap on (time, seq)
  std::vector<Slot> slots_;
  uint32_t free_head_ = kNoSlot;
  uint64_t early_seq_ = 0;
  size_t live_ = 0;
  NearHook near_hook_ = nullptr;
  void* near_context_ = nullptr;
  int near_level_ = 0;
};

}  // namespace clustersim::sim
