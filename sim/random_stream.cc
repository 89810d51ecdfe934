#include "sim/random_stream.h"

namespace clustersim::sim {
namespace {

// FNV-1a 64's prime as published (the offset basis is in the header).
constexpr uint64_t kFnvPrime = 0x100000001b3u;

// SplitMix64's output function (Steele, Lea, Flood, OOPSLA'14; constants as
// in Vigna's splitmix64.c): a bijection with full avalanche, so nearby seeds
// and entity ids give unrelated keys.
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

PhiloxKey split_key(uint64_t k) {
  return {static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)};
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t hash) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

uint64_t derive_stream_key(uint64_t seed, std::string_view stream_name, uint64_t entity_id) {
  // Chained, not XORed together, so that swapping seed and entity (or the
  // name hash) gives a different key.
  uint64_t k = splitmix64(seed);
  k = splitmix64(k ^ fnv1a64(stream_name));
  return splitmix64(k ^ entity_id);
}

RandomStream::RandomStream(uint64_t seed, std::string_view stream_name, uint64_t entity_id)
    : key_(split_key(derive_stream_key(seed, stream_name, entity_id))) {}

}  // namespace clustersim::sim
