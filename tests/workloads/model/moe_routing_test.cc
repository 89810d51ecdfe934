// Tokens per expert of a mixture-of-experts layer: exact shares, the
// spread of random routing against its binomial variance, Zipf skew against
// its popularity, capacity dropping and padding, determinism.
#include "workloads/model/moe_routing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sim/check.h"

namespace clustersim::workloads {
namespace {

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

TEST(MoeRouting, UniformSharesExactlyWithTheRemainderOnTheFirstExperts) {
  // 1000 tokens x top-2 over 16 experts: 125 each; 1001 x 2 = 2002: 125, two get 126.
  const ExpertLoad even = route_tokens(1000, 2, 16, 4, {}, 0);
  for (const int64_t t : even.tokens) EXPECT_EQ(t, 125);
  EXPECT_EQ(even.rank_tokens, (std::vector<int64_t>{500, 500, 500, 500}));
  EXPECT_DOUBLE_EQ(even.imbalance(), 1.0);
  const ExpertLoad odd = route_tokens(1001, 2, 16, 4, {}, 0);
  EXPECT_EQ(odd.tokens[0], 126);
  EXPECT_EQ(odd.tokens[1], 126);
  EXPECT_EQ(odd.tokens[2], 125);
  EXPECT_EQ(odd.rank_tokens[0], 502);
}

// Random top-k (Megatron's forced balance): every assignment lands, no
// expert twice per token (at most N per expert), and the counts spread as
// binomials: sd sqrt(N q (1 - q)), q = k / E.
TEST(MoeRouting, RandomRoutingSpreadsAsBinomials) {
  MoeRoutingSpec spec;
  spec.routing = MoeRouting::kRandom;
  spec.seed = 7;
  for (const int64_t tokens : {int64_t{4096}, int64_t{262144}}) {  // exact, then normal
    SCOPED_TRACE(tokens);
    const ExpertLoad load = route_tokens(tokens, 8, 256, 64, spec, 3);
    EXPECT_EQ(sum(load.tokens), tokens * 8);
    const double q = 8.0 / 256.0;
    const double mean = static_cast<double>(tokens) * q;
    double var = 0;
    for (const int64_t t : load.tokens) {
      EXPECT_LE(t, tokens);
      var += (static_cast<double>(t) - mean) * (static_cast<double>(t) - mean);
    }
    const double sd = std::sqrt(var / 255.0);
    const double expected = std::sqrt(static_cast<double>(tokens) * q * (1 - q));
    // 256 samples: the sample sd is within 15% of the true one with > 99% odds.
    EXPECT_NEAR(sd / expected, 1.0, 0.15);
    EXPECT_GT(load.imbalance(), 1.0);
  }
}

// The DeepSeek-V3 layout's EP 64: 4096 tokens a rank, 4 experts a rank.
// A rank's load is a sum of 4 binomials (sd 2 x 89.1 = 178 on 32,768); the
// slowest of 64 sits about 2.4 sd up: ~1.3%.
TEST(MoeRouting, ForcedBalanceStillLeavesTheSlowestEpRankAPercentOver) {
  MoeRoutingSpec spec;
  spec.routing = MoeRouting::kRandom;
  double worst = 0;
  double mean = 0;
  for (int64_t layer = 0; layer < 20; ++layer) {
    const double imbalance = route_tokens(4096 * 64, 8, 256, 64, spec, layer).imbalance();
    worst = std::max(worst, imbalance);
    mean += imbalance / 20;
  }
  EXPECT_GT(mean, 1.008);
  EXPECT_LT(mean, 1.02);
  EXPECT_LT(worst, 1.03);
}

// Zipf with exponent 1 over 8 experts: the favourite's popularity is
// 1 / H_8 = 0.3679; with top-2 a token takes it with probability 0.7358, so
// with one expert per rank the slowest rank holds ~0.7358 N.
TEST(MoeRouting, SkewedRoutingLoadsTheFavouriteExpertAsZipfSays) {
  MoeRoutingSpec spec;
  spec.routing = MoeRouting::kSkewed;
  spec.skew = 1.0;
  const int64_t tokens = 1 << 20;
  const ExpertLoad load = route_tokens(tokens, 2, 8, 8, spec, 0);
  EXPECT_EQ(sum(load.tokens), 2 * tokens);
  const double harmonic = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4 + 1.0 / 5 + 1.0 / 6 + 1.0 / 7 + 1.0 / 8;
  EXPECT_NEAR(static_cast<double>(load.max_rank_tokens()) / static_cast<double>(tokens),
              2.0 / harmonic, 0.01);
  // The mean rank holds 2N / 8: imbalance 0.7358 / 0.25.
  EXPECT_NEAR(load.imbalance(), 8.0 / harmonic, 0.05);
}

TEST(MoeRouting, CapacityDropsTheOverflowAndPaddingFillsToIt) {
  MoeRoutingSpec spec;
  spec.routing = MoeRouting::kSkewed;
  spec.skew = 1.0;
  spec.capacity_factor = 1.25;
  const ExpertLoad free = route_tokens(4000, 2, 8, 4, MoeRoutingSpec{MoeRouting::kSkewed, 1.0}, 5);
  const ExpertLoad capped = route_tokens(4000, 2, 8, 4, spec, 5);
  // ceil(1.25 x 8000 / 8) = 1250 per expert.
  EXPECT_EQ(capped.capacity, 1250);
  int64_t dropped = 0;
  for (size_t e = 0; e < 8; ++e) {
    EXPECT_EQ(capped.tokens[e], std::min<int64_t>(free.tokens[e], 1250));
    dropped += std::max<int64_t>(0, free.tokens[e] - 1250);
  }
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(capped.dropped, dropped);
  spec.pad_to_capacity = true;
  const ExpertLoad padded = route_tokens(4000, 2, 8, 4, spec, 5);
  for (const int64_t t : padded.tokens) EXPECT_EQ(t, 1250);
  EXPECT_EQ(padded.dropped, dropped);
  EXPECT_DOUBLE_EQ(padded.imbalance(), 1.0);
}

TEST(MoeRouting, SameSeedAndLayerSameCountsAnotherLayerOthers) {
  MoeRoutingSpec spec;
  spec.routing = MoeRouting::kRandom;
  spec.seed = 11;
  EXPECT_EQ(route_tokens(3000, 4, 32, 8, spec, 2).tokens,
            route_tokens(3000, 4, 32, 8, spec, 2).tokens);
  EXPECT_NE(route_tokens(3000, 4, 32, 8, spec, 2).tokens,
            route_tokens(3000, 4, 32, 8, spec, 3).tokens);
  spec.seed = 12;
  EXPECT_NE(
      route_tokens(3000, 4, 32, 8, spec, 2).tokens,
      route_tokens(3000, 4, 32, 8, MoeRoutingSpec{MoeRouting::kRandom, 0, 0, false, 11}, 2).tokens);
}

TEST(MoeRouting, PreconditionsAreChecked) {
  EXPECT_THROW(route_tokens(10, 9, 8, 1, {}, 0), sim::InvariantError);
  EXPECT_THROW(route_tokens(10, 2, 8, 3, {}, 0), sim::InvariantError);
}

}  // namespace
}  // namespace clustersim::workloads
