// Per-rank dependency counters of a DAG execution: a zeroed uint16_t array.
//
// Ownership: owns its memory (not copyable). Thread safety: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace clustersim::workloads {

// Zeroed uint16_t counters, on transparent huge pages where Linux offers
// them (THP "madvise" mode): with 16,384 ranks of an 8k-node graph the
// counters span ~130 MiB, visited rank after rank, and the counter load was
// the hottest instruction of the replay (perf); 2 MiB pages cut its TLB
// misses (--scale-to 16384 of the 8B FSDP export: ~25.6 s -> ~22 s). The
// contents, and so the results, do not depend on the page size.
class CounterArray {
 public:
  explicit CounterArray(size_t n) : size_(n) {
    if (n == 0) return;
    constexpr size_t kHuge = size_t{2} << 20;
    bytes_ = (n * sizeof(uint16_t) + kHuge - 1) / kHuge * kHuge;
#if defined(__linux__)
    if (bytes_ >= kHuge) {
      void* p =
          mmap(nullptr, bytes_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        map_bytes_ = bytes_ + kHuge;
        const auto base = reinterpret_cast<uintptr_t>(p);
        const uintptr_t aligned = (base + kHuge - 1) / kHuge * kHuge;
        data_ = reinterpret_cast<uint16_t*>(aligned);
        madvise(data_, bytes_, MADV_HUGEPAGE);  // a hint: failure only costs speed
        return;                                 // anonymous mappings read as zero
      }
    }
#endif
    fallback_.assign(n, 0);
    data_ = fallback_.data();
  }
  ~CounterArray() {
#if defined(__linux__)
    if (map_ != nullptr) munmap(map_, map_bytes_);
#endif
  }
  CounterArray(const CounterArray&) = delete;
  CounterArray& operator=(const CounterArray&) = delete;

  uint16_t& operator[](size_t i) { return data_[i]; }
  uint16_t operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
  size_t bytes_ = 0;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint16_t* data_ = nullptr;
  std::vector<uint16_t> fallback_;
};

}  // namespace clustersim::workloads
