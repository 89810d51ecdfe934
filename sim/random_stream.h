// RandomStream: a named, counter-based stream of random 64-bit integers.
//
// Generator: Philox4x32-10 from J. K. Salmon, M. A. Moraes, R. O. Dror and
// D. E. Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11, with the
// multipliers and Weyl key increments published there (and in the Random123
// reference library). Draw number i of a stream is a pure function of
// (key, i): the stream holds no state beyond its key and position, so it can
// seek anywhere in O(1).
//
// Determinism: the key is derived from (seed, stream name, entity id) by a
// stable hash implemented here (FNV-1a 64 over the name bytes, mixed with the
// seed and the entity by SplitMix64's finaliser). The draws of ("failures.gpu",
// 17) therefore never depend on which other streams exist, in which order they
// were created, or on the thread that uses them. The output is the same on
// every platform (only fixed-width integer arithmetic; the byte order of the
// host does not enter).
//
// Layout: draw i is 64-bit word (i mod 2) of Philox block i / 2, whose counter
// is {lo32(i / 2), hi32(i / 2), 0, 0}; word 0 = out[1]:out[0], word 1 =
// out[3]:out[2] (high:low 32-bit halves). A stream has 2^64 draws; running
// past that is a broken invariant that is not checked per draw.
//
// Thread safety: a copyable value type without global state. One object must
// not be used by two threads at once; copies are independent (and replay the
// same draws).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/check.h"

namespace clustersim::sim {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Salmon et al., SC'11, table 2 and section 4.3 (Random123: PHILOX_M4x32_*,
// PHILOX_W32_*).
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

// The raw Philox4x32-10 block function: 10 rounds, key bumped between rounds,
// exactly as Random123's philox4x32_R(10, ctr, key). Exposed for the
// known-answer tests.
constexpr PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    const uint64_t p0 = uint64_t{kPhiloxM0} * ctr[0];
    const uint64_t p1 = uint64_t{kPhiloxM1} * ctr[2];
    ctr = {static_cast<uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<uint32_t>(p0)};
  }
  return ctr;
}

// FNV-1a 64 (Fowler, Noll, Vo) of `bytes`, continuing from `hash` (the
// offset basis for a fresh hash), so that a long key can be hashed in
// pieces: fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b). Stable across platforms.
inline constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325u;
uint64_t fnv1a64(std::string_view bytes, uint64_t hash = kFnvOffsetBasis);

// The stable key derivation RandomStream uses; exposed so that tools can
// document or reproduce a stream's key.
uint64_t derive_stream_key(uint64_t seed, std::string_view stream_name, uint64_t entity_id);

class RandomStream {
 public:
  RandomStream(uint64_t seed, std::string_view stream_name, uint64_t entity_id);

  // Uniform over all 2^64 values.
  uint64_t next_u64() {
    if ((position_ & 1) == 0) refill(position_ >> 1);
    return buffer_[position_++ & 1];
  }

  // Uniform in [0, 1): the top 53 bits as a multiple of 2^-53.
  double next_unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform in (0, 1), never 0 nor 1 (safe for log): the midpoint of one of
  // 2^52 equal cells, so in [2^-53, 1 - 2^-53], all exactly representable.
  double next_open_unit() { return (static_cast<double>(next_u64() >> 12) + 0.5) * 0x1.0p-52; }

  // Uniform in [0, n), exactly unbiased (Lemire, "Fast random integer
  // generation in an interval", 2019: multiply-shift with rejection). Consumes
  // one draw, occasionally more (probability < n / 2^64 per draw). n > 0.
  uint64_t next_below(uint64_t n) {
    CLUSTERSIM_CHECK(n > 0, "next_below needs a non-empty range");
    uint64_t x = next_u64();
    Wide m = static_cast<Wide>(x) * n;
    if (static_cast<uint64_t>(m) < n) {
      const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
      while (static_cast<uint64_t>(m) < threshold) {
        x = next_u64();
        m = static_cast<Wide>(x) * n;
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Number of 64-bit values drawn so far (next_unit etc. draw one each).
  uint64_t position() const { return position_; }

  // Jumps so that the next draw is draw number `position`, in O(1).
  void seek(uint64_t position) {
    position_ = position;
    if ((position_ & 1) != 0) refill(position_ >> 1);
  }

  // The derived 64-bit Philox key, as key[1]:key[0].
  uint64_t key() const { return (uint64_t{key_[1]} << 32) | key_[0]; }

 private:
  // GCC/Clang 128-bit integer; __extension__ keeps -Wpedantic quiet.
  __extension__ typedef unsigned __int128 Wide;

  // One block per refill is enough: consecutive refills do not depend on
  // each other, so out-of-order execution already overlaps their multiply
  // chains (an explicit four-block batch measured slower, not faster).
  void refill(uint64_t block) {
    const PhiloxCounter out = philox4x32_10(
        {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}, key_);
    buffer_[0] = (uint64_t{out[1]} << 32) | out[0];
    buffer_[1] = (uint64_t{out[3]} << 32) | out[2];
  }

  PhiloxKey key_;
  uint64_t position_ = 0;
  // Block position_ / 2, valid whenever position_ is odd.
  std::array<uint64_t, 2> buffer_{};
};

}  // namespace clustersim::sim
