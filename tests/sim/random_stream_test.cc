#include "sim/random_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/check.h"

namespace clustersim::sim {
namespace {

std::vector<uint64_t> first_draws(RandomStream rng, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(rng.next_u64());
  return out;
}

// Random123's kat_vectors for philox4x32 10.
TEST(Philox4x32_10, KnownAnswerZero) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(Philox4x32_10, KnownAnswerAllOnes) {
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
}

TEST(Philox4x32_10, KnownAnswerPi) {
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox4x32_10, IsConstexpr) {
  static_assert(philox4x32_10({0, 0, 0, 0}, {0, 0})[0] == 0x6627e8d5);
}

// Pins the whole chain (key derivation, counter layout, word packing) across
// platforms and compilers. If this changes, every scenario's results change.
TEST(RandomStream, GoldenValues) {
  RandomStream rng(42, "test", 7);
  EXPECT_EQ(rng.next_u64(), 0xd71fccfeb3ae5368u);
  EXPECT_EQ(rng.next_u64(), 0x7ac9817c69281a13u);
  EXPECT_EQ(rng.next_u64(), 0xcc2e97c902b93164u);
}

TEST(RandomStream, DrawsFollowDocumentedLayout) {
  RandomStream rng(1, "layout", 2);
  const PhiloxKey key{static_cast<uint32_t>(rng.key()), static_cast<uint32_t>(rng.key() >> 32)};
  const PhiloxCounter block0 = philox4x32_10({0, 0, 0, 0}, key);
  const PhiloxCounter block1 = philox4x32_10({1, 0, 0, 0}, key);
  EXPECT_EQ(rng.next_u64(), (uint64_t{block0[1]} << 32) | block0[0]);
  EXPECT_EQ(rng.next_u64(), (uint64_t{block0[3]} << 32) | block0[2]);
  EXPECT_EQ(rng.next_u64(), (uint64_t{block1[1]} << 32) | block1[0]);
  rng.seek(uint64_t{2} * 0x1'0000'0005 + 1);
  const PhiloxCounter far = philox4x32_10({5, 1, 0, 0}, key);
  EXPECT_EQ(rng.next_u64(), (uint64_t{far[3]} << 32) | far[2]);
}

TEST(RandomStream, SameIdentitySameSequence) {
  EXPECT_EQ(first_draws(RandomStream(123, "failures.gpu", 17), 100),
            first_draws(RandomStream(123, "failures.gpu", 17), 100));
}

TEST(RandomStream, AnyIdentityChangeGivesAnotherSequence) {
  const auto base = first_draws(RandomStream(123, "failures.gpu", 17), 8);
  EXPECT_NE(base, first_draws(RandomStream(124, "failures.gpu", 17), 8));
  EXPECT_NE(base, first_draws(RandomStream(123, "failures.gpx", 17), 8));
  EXPECT_NE(base, first_draws(RandomStream(123, "failures.gpu", 18), 8));
  EXPECT_NE(base, first_draws(RandomStream(123, "failures.gp", 17), 8));
  // Seed and entity play different roles.
  EXPECT_NE(first_draws(RandomStream(1, "x", 2), 8), first_draws(RandomStream(2, "x", 1), 8));
}

TEST(RandomStream, KeysOfManyEntitiesAreDistinct) {
  std::vector<uint64_t> keys;
  for (uint64_t e = 0; e < 10000; ++e) keys.push_back(derive_stream_key(0, "rank", e));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST(RandomStream, IndependentOfCreationOrderAndOtherStreams) {
  const auto expected = first_draws(RandomStream(9, "failures.gpu", 17), 50);

  std::vector<RandomStream> many;
  many.emplace_back(9, "failures.nic", 17);
  for (uint64_t e = 40; e-- > 0;) many.emplace_back(9, "failures.gpu", e);
  for (auto& s : many) s.next_u64();  // the others are in use
  RandomStream& gpu17 = many[1 + (39 - 17)];
  gpu17.seek(0);
  EXPECT_EQ(first_draws(gpu17, 50), expected);
}

TEST(RandomStream, SeekMatchesSequentialDraws) {
  const auto sequential = first_draws(RandomStream(5, "seek", 0), 64);
  for (uint64_t k : {0u, 1u, 2u, 3u, 17u, 32u, 63u}) {
    RandomStream rng(5, "seek", 0);
    rng.seek(k);
    EXPECT_EQ(rng.position(), k);
    EXPECT_EQ(rng.next_u64(), sequential[k]) << "k = " << k;
    EXPECT_EQ(rng.position(), k + 1);
  }
  // Backwards, and from a partly consumed buffer.
  RandomStream rng(5, "seek", 0);
  for (int i = 0; i < 11; ++i) rng.next_u64();
  rng.seek(4);
  EXPECT_EQ(rng.next_u64(), sequential[4]);
  EXPECT_EQ(rng.next_u64(), sequential[5]);
}

TEST(RandomStream, CopiesReplayTheSameDraws) {
  RandomStream a(3, "copy", 1);
  a.next_u64();  // copy with a half-consumed buffer
  RandomStream b = a;
  EXPECT_EQ(first_draws(a, 20), first_draws(b, 20));
}

TEST(RandomStream, UnitIsInHalfOpenInterval) {
  RandomStream rng(11, "unit", 0);
  double lo = 1;
  double hi = 0;
  double sum = 0;
  constexpr int kN = 1'000'000;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.next_unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  EXPECT_LT(lo, 1e-4);
  EXPECT_GT(hi, 1 - 1e-4);
  // Mean 1/2, standard error sqrt(1/12 / n); 5 sigma.
  EXPECT_NEAR(sum / kN, 0.5, 5 * std::sqrt(1.0 / 12 / kN));
}

TEST(RandomStream, UnitExtremes) {
  // next_unit is exactly the top 53 bits; next_open_unit is a cell midpoint.
  RandomStream rng(11, "unit", 0);
  const uint64_t raw = RandomStream(11, "unit", 0).next_u64();
  EXPECT_EQ(rng.next_unit(), std::ldexp(static_cast<double>(raw >> 11), -53));
  EXPECT_EQ((static_cast<double>(uint64_t{0}) + 0.5) * 0x1.0p-52, 0x1.0p-53);
  EXPECT_LT((static_cast<double>(~uint64_t{0} >> 12) + 0.5) * 0x1.0p-52, 1.0);
}

TEST(RandomStream, OpenUnitIsInOpenInterval) {
  RandomStream rng(12, "open", 0);
  for (int i = 0; i < 1'000'000; ++i) {
    const double u = rng.next_open_unit();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// Chi-square against uniform over `buckets`: with k - 1 degrees of freedom
// the statistic has mean k - 1 and stddev sqrt(2 (k - 1)); allow 5 sigma.
void expect_uniform_buckets(const std::vector<uint64_t>& counts, uint64_t draws) {
  const double k = static_cast<double>(counts.size());
  const double expected = static_cast<double>(draws) / k;
  double chi2 = 0;
  for (uint64_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    chi2 += d * d / expected;
  }
  EXPECT_LT(chi2, (k - 1) + 5 * std::sqrt(2 * (k - 1)));
}

TEST(RandomStream, NextBelowSmallRangeIsUniform) {
  RandomStream rng(13, "below", 0);
  constexpr uint64_t kN = 10;
  constexpr uint64_t kDraws = 1'000'000;
  std::vector<uint64_t> counts(kN, 0);
  for (uint64_t i = 0; i < kDraws; ++i) {
    const uint64_t v = rng.next_below(kN);
    ASSERT_LT(v, kN);
    ++counts[v];
  }
  expect_uniform_buckets(counts, kDraws);
}

TEST(RandomStream, NextBelowHugeRangeIsUnbiased) {
  // n = 3 * 2^62: without rejection, multiply-shift would put half of the
  // draws in the first third (and modulo would too).
  RandomStream rng(14, "below", 0);
  constexpr uint64_t kN = uint64_t{3} << 62;
  constexpr uint64_t kDraws = 300'000;
  std::vector<uint64_t> counts(3, 0);
  for (uint64_t i = 0; i < kDraws; ++i) {
    const uint64_t v = rng.next_below(kN);
    ASSERT_LT(v, kN);
    ++counts[v >> 62];
  }
  expect_uniform_buckets(counts, kDraws);
  // Rejection happens with probability 1/4 per draw, so ~kDraws / 3 extra.
  EXPECT_GT(rng.position(), kDraws + kDraws / 4);
}

TEST(RandomStream, NextBelowEdgeCases) {
  RandomStream rng(15, "below", 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rng.next_below(1), 0u);
  EXPECT_THROW(rng.next_below(0), InvariantError);
  const uint64_t before = rng.position();
  rng.next_below(uint64_t{1} << 63);  // power of two: never rejects
  EXPECT_EQ(rng.position(), before + 1);
}

}  // namespace
}  // namespace clustersim::sim
