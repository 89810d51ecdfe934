// FlatHashMap against std::map under random inserts, lookups and erases,
// with a hash that sends every key to a few slots so that runs wrap around
// the table and erase's backward shift is exercised.
#include "exec/flat_hash_map.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

namespace clustersim::workloads {
namespace {

// Four hash values in all: long collision runs.
struct CrowdedHash {
  size_t operator()(int64_t k) const { return static_cast<size_t>(k % 4); }
};

struct SpreadHash {
  size_t operator()(int64_t k) const { return static_cast<size_t>(k); }
};

template <class Hash>
void agrees_with_std_map(int keys, int ops) {
  FlatHashMap<int64_t, int64_t, Hash> flat;
  std::map<int64_t, int64_t> reference;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> key(0, keys - 1);
  for (int i = 0; i < ops; ++i) {
    const int64_t k = key(rng);
    const auto it = reference.find(k);
    const int64_t* v = flat.find(k);
    ASSERT_EQ(v != nullptr, it != reference.end()) << "op " << i << " key " << k;
    if (v != nullptr && it != reference.end()) {
      ASSERT_EQ(*v, it->second);
      if (rng() % 2 == 0) {
        EXPECT_TRUE(flat.erase(k));
        EXPECT_FALSE(flat.erase(k));
        reference.erase(it);
      }
    } else {
      const int64_t value = static_cast<int64_t>(rng() % 1000);
      const int64_t* inserted = flat.insert(k, value);
      ASSERT_TRUE(inserted != nullptr && *inserted == value);
      reference.emplace(k, value);
    }
    ASSERT_EQ(flat.size(), reference.size());
  }
  for (const auto& [k, v] : reference) {
    const int64_t* found = flat.find(k);
    ASSERT_TRUE(found != nullptr && *found == v) << k;
  }
}

TEST(FlatHashMap, AgreesWithStdMapUnderCollisions) { agrees_with_std_map<CrowdedHash>(200, 20000); }

TEST(FlatHashMap, AgreesWithStdMapWhenGrowing) { agrees_with_std_map<SpreadHash>(100000, 200000); }

TEST(FlatHashMap, EmptyFindsAndErasesNothing) {
  FlatHashMap<int64_t, int64_t, SpreadHash> flat;
  EXPECT_EQ(flat.find(3), nullptr);
  EXPECT_FALSE(flat.erase(3));
  EXPECT_EQ(flat.size(), 0U);
}

}  // namespace
}  // namespace clustersim::workloads
