// How many tokens each expert of one mixture-of-experts layer receives, and
// so what each expert-parallel (EP) rank computes: the load the grouped
// GEMMs are timed at and the slowest EP rank that gates the all-to-all.
//
// N tokens enter the layer across the EP group (each rank's T, times ep),
// each routed to top_k of E experts, so N * top_k assignments; expert e
// lives on EP rank e / (E / ep) (Megatron-Core's contiguous placement).
// Routing modes:
//  * kUniform: every expert gets N * top_k / E (the first (N * top_k) mod E
//    one more): the ideal a perfectly balanced router reaches.
//  * kRandom: each token picks top_k distinct experts uniformly at random,
//    as Megatron-Core's --moe-router-force-load-balancing does with random
//    logits (NVIDIA's published MoE benchmarks: "we force-balance the token
//    distribution among experts"). Balanced in expectation, not exactly:
//    each token picks a given expert with probability k/E, independently of
//    the other tokens, so an expert's count has mean N k/E and variance
//    N (k/E)(1 - k/E), and the slowest EP rank takes a few percent more than
//    its share.
//  * kSkewed: expert popularity follows Zipf's law with exponent `skew`
//    (p proportional to 1 / rank^skew over a seeded random order of the
//    experts per layer), each assignment drawn from it: what an unbalanced
//    router does, the slowest rank gating the layer.
// Counts are sampled per assignment when N * top_k <= kExactDraws, else from
// the normal approximation of the multinomial (each count mean + sd * z,
// rounded, then corrected to sum exactly, largest remainders first), which
// is within a fraction of a token's standard deviation at those sizes.
//
// Capacity (capacity_factor > 0, Megatron-Core's --moe-expert-capacity-factor
// with drop policy "probs"): each expert keeps at most
// ceil(capacity_factor * N * top_k / E) tokens and drops the rest (taken
// here over the whole EP group; Megatron computes it per source rank on its
// local tokens, which drops slightly more when ranks differ); with
// pad_to_capacity every expert computes exactly that many (padded).
// capacity_factor 0: dropless.
//
// Determinism: every draw comes from sim::RandomStream("moe.routing",
// layer) under `seed`: the same (spec, layer) gives the same counts on any
// thread or machine.
// Units: tokens. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace clustersim::workloads {

enum class MoeRouting { kUniform, kRandom, kSkewed };
std::string_view moe_routing_name(MoeRouting routing);  // "uniform", "random", "skewed"

struct MoeRoutingSpec {
  MoeRouting routing = MoeRouting::kUniform;
  double skew = 0;             // kSkewed: Zipf exponent, >= 0 (0 = uniform popularity)
  double capacity_factor = 0;  // > 0: token dropping at that capacity; 0: dropless
  bool pad_to_capacity = false;
  uint64_t seed = 0;
};

// Above this many assignments, counts come from the normal approximation.
inline constexpr int64_t kExactDraws = 1 << 16;

struct ExpertLoad {
  std::vector<int64_t> tokens;       // kept tokens per expert (padded with pad_to_capacity)
  std::vector<int64_t> rank_tokens;  // per EP rank, its experts' tokens
  int64_t capacity = 0;              // per expert; 0 when dropless
  int64_t dropped = 0;               // assignments dropped by the capacity
  int64_t max_rank_tokens() const;
  // The slowest rank's tokens over the mean rank's (1 = balanced).
  double imbalance() const;
};

// Preconditions (InvariantError): tokens >= 0, 1 <= top_k <= experts,
// ep >= 1 dividing experts, skew >= 0, capacity_factor >= 0.
ExpertLoad route_tokens(int64_t tokens, int64_t top_k, int64_t experts, int64_t ep,
                        const MoeRoutingSpec& spec, int64_t layer);

}  // namespace clustersim::workloads
