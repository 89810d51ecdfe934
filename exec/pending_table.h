// A flat hash of the dependencies still missing for partly ready nodes of a
// DAG execution, keyed by (rank, node): open addressing with linear probing
// and backward-shift deletion. Only the frontier of each rank's graph is
// stored, so N ranks of a large graph cost what their partly ready nodes
// cost, not N copies of the graph. An entry also keeps the cause its node's
// idle gap will be charged to (step_accounts.h).
//
// Thread safety: none; one per simulation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "exec/step_accounts.h"

namespace clustersim::workloads {

struct Pending {
  uint64_t key = kEmpty;
  int32_t remaining = 0;
  step_accounts::Account account =
      step_accounts::kIdle;  // the latest non-host cause so far (has_cause)
  bool has_cause = false;
  int64_t group_start_ns = 0;
  int64_t end_ns = 0;
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
};

class PendingTable {
 public:
  PendingTable() { slots_.resize(1024); }

  // The entry of `key`, inserted with `indegree` missing if absent.
  Pending& find_or_insert(uint64_t key, int32_t indegree) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = home(key);
    while (slots_[i].key != Pending::kEmpty) {
      if (slots_[i].key == key) return slots_[i];
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = Pending{};
    slots_[i].key = key;
    slots_[i].remaining = indegree;
    ++size_;
    return slots_[i];
  }

  Pending* find(uint64_t key) {
    size_t i = home(key);
    while (slots_[i].key != Pending::kEmpty) {
      if (slots_[i].key == key) return &slots_[i];
      i = (i + 1) & (slots_.size() - 1);
    }
    return nullptr;
  }

  void erase(Pending& entry) {
    size_t hole = static_cast<size_t>(&entry - slots_.data());
    const size_t mask = slots_.size() - 1;
    size_t i = hole;
    while (true) {
      i = (i + 1) & mask;
      if (slots_[i].key == Pending::kEmpty) break;
      const size_t h = home(slots_[i].key);
      // Move entry i into the hole unless its home lies cyclically in (hole, i].
      const bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
      if (!stays) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Pending{};
    --size_;
  }

  // Every entry, sorted by key (for reports).
  std::vector<Pending> entries() const {
    std::vector<Pending> out;
    for (const Pending& p : slots_) {
      if (p.key != Pending::kEmpty) out.push_back(p);
    }
    std::sort(out.begin(), out.end(),
              [](const Pending& a, const Pending& b) { return a.key < b.key; });
    return out;
  }

 private:
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void grow() {
    std::vector<Pending> old = std::move(slots_);
    slots_.assign(old.size() * 2, Pending{});
    --shift_;
    size_ = 0;
    for (const Pending& p : old) {
      if (p.key == Pending::kEmpty) continue;
      Pending& e = find_or_insert(p.key, p.remaining);
      e = p;
    }
  }

  std::vector<Pending> slots_;
  size_t size_ = 0;
  int shift_ = 64 - 10;
};

}  // namespace clustersim::workloads
