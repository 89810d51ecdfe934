#include "sim/event_queue.h"

#include <algorithm>

#include "sim/check.h"

namespace clustersim::sim {

namespace {

// Min-heap order on (time, seq) for std::push_heap/pop_heap, which build
// max-heaps: "a comes after b".
template <class Entry>
bool later(const Entry& a, const Entry& b) {
  return a.entry.time > b.entry.time || (a.entry.time == b.entry.time && a.seq > b.seq);
}

}  // namespace

bool EventQueue::cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || s.state != kPending) return false;
  ++s.generation;
  s.state = kCancelled;
  --live_;
  return true;
}

void EventQueue::settle() {
  for (;;) {
    if (level_count_[0] != 0) {
      // All level-0 entries share every byte but the lowest with the cursor,
      // so the first occupied slot at or after the cursor's byte is earliest.
      const size_t index = occupancy_[0].first_from(cursor_ & kDigitMask);
      if (index != (cursor_ & kDigitMask)) head_ = 0;
      cursor_ = (cursor_ & ~kDigitMask) | index;
      std::vector<WheelEntry>& bucket = wheel_[0][index];
      const WheelEntry& front = bucket[head_];
      if (is_live(front)) return;
      discard(front);  // cancelled: drop it and look again
      advance_head(bucket);
      continue;
    }
    int level = 1;
    while (level_count_[level] == 0) {
      ++level;
      CLUSTERSIM_CHECK(level < kLevels, "settle() on a queue with no wheel entries");
    }
    const size_t from = ((cursor_ >> (level * kDigitBits)) & kDigitMask) + 1;
    const size_t index = occupancy_[level].first_from(from);
    CLUSTERSIM_CHECK(index < kSlotsPerLevel, "occupied level with no occupied slot");
    std::vector<WheelEntry>& bucket = wheel_[level][index];
    uint64_t earliest = bucket.front().time;
    for (const WheelEntry& e : bucket) earliest = std::min(earliest, e.time);
    // Moving the cursor to the earliest time sends every entry of this
    // bucket to a lower level, in bucket order (= sequence order).
    cursor_ = earliest;
    head_ = 0;
    level_count_[level] -= bucket.size();
    occupancy_[level].reset(index);
    for (const WheelEntry& e : bucket) place(e);
    if (near_hook_ != nullptr && level <= near_level_) {
      for (const WheelEntry& e : bucket) {
        if (is_live(e)) {
          near_hook_(near_context_, Event{SimTime::ns(static_cast<int64_t>(e.time)), e.data,
                                          e.handler, e.kind});
        }
      }
    }
    bucket.clear();
    if (level >= kSpareLevel) {
      if (spare_entries_ + bucket.capacity() <= live_ + kSpareSlack) {
        spare_entries_ += bucket.capacity();
        spare_.emplace_back().swap(bucket);
      } else {
        std::vector<WheelEntry>().swap(bucket);  // release it
      }
    }
  }
}

void EventQueue::push_early(const EarlyEntry& e) {
  early_.push_back(e);
  std::push_heap(early_.begin(), early_.end(), later<EarlyEntry>);
}

void EventQueue::pop_early() {
  std::pop_heap(early_.begin(), early_.end(), later<EarlyEntry>);
  early_.pop_back();
}

void EventQueue::discard_cancelled_early() {
  while (!early_.empty() && !is_live(early_.front().entry)) {
    discard(early_.front().entry);
    pop_early();
  }
}

void EventQueue::clear() {
  // Keep the slots (and their generations) so that ids handed out before the
  // clear stay stale rather than matching a later event in the same slot.
  for (Slot& s : slots_) ++s.generation;
  spare_.clear();
  spare_entries_ = 0;
  for (auto& level : wheel_) {
    for (auto& bucket : level) bucket.clear();
  }
  occupancy_ = {};
  level_count_ = {};
  head_ = 0;
  cursor_ = 0;
  early_.clear();
  free_head_ = kNoSlot;
  for (size_t i = slots_.size(); i-- > 0;) free_slot(static_cast<uint32_t>(i));
  live_ = 0;
}

uint32_t EventQueue::grow_slab() {
  CLUSTERSIM_CHECK(slots_.size() < kCancelled, "more than 2^32-3 cancellable events pending");
  // Generations start at 1 so that a default EventId{0, 0} never matches.
  slots_.push_back(Slot{1, kNoSlot});
  return static_cast<uint32_t>(slots_.size() - 1);
}

}  // namespace clustersim::sim
