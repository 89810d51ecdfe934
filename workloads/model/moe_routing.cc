#include "workloads/model/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/check.h"
#include "sim/random_stream.h"

namespace clustersim::workloads {

namespace {

// A standard normal draw (Box-Muller on two open-interval uniforms).
double normal(sim::RandomStream& rng) {
  const double u = rng.next_open_unit();
  const double v = rng.next_open_unit();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

// Expert popularity: Zipf over a seeded random order of the experts.
std::vector<double> popularity(int64_t experts, double skew, sim::RandomStream& rng) {
  std::vector<int64_t> order(static_cast<size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t i = experts - 1; i > 0; --i) {  // Fisher-Yates
    const auto j = static_cast<int64_t>(rng.next_below(static_cast<uint64_t>(i + 1)));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  std::vector<double> p(static_cast<size_t>(experts));
  double sum = 0;
  for (int64_t r = 0; r < experts; ++r) {
    const double w = std::pow(static_cast<double>(r + 1), -skew);
    p[static_cast<size_t>(order[static_cast<size_t>(r)])] = w;
    sum += w;
  }
  for (double& x : p) x /= sum;
  return p;
}

// Each of `tokens` tokens picks top_k distinct experts, expert e with weight p[e]
// (successive draws without replacement).
std::vector<int64_t> sample_exact(int64_t tokens, int64_t top_k, const std::vector<double>& p,
                                  sim::RandomStream& rng) {
  std::vector<int64_t> counts(p.size(), 0);
  std::vector<bool> taken(p.size(), false);
  std::vector<size_t> picked;
  for (int64_t t = 0; t < tokens; ++t) {
    picked.clear();
    double left = 1.0;
    for (int64_t j = 0; j < top_k; ++j) {
      double x = rng.next_unit() * left;
      size_t chosen = p.size();
      for (size_t e = 0; e < p.size(); ++e) {
        if (taken[e]) continue;
        chosen = e;
        if (x < p[e]) break;
        x -= p[e];
      }
      taken[chosen] = true;
      picked.push_back(chosen);
      left -= p[chosen];
    }
    for (const size_t e : picked) {
      ++counts[e];
      taken[e] = false;
    }
  }
  return counts;
}

// The normal approximation (the header): each expert taken with probability
// q_e = min(1, k p_e) per token, variance tokens q (1 - q), rounded to sum to
// tokens * k exactly.
std::vector<int64_t> sample_normal(int64_t tokens, int64_t top_k, const std::vector<double>& p,
                                   sim::RandomStream& rng) {
  const auto n = static_cast<double>(tokens);
  const int64_t total = tokens * top_k;
  std::vector<double> x(p.size());
  for (size_t e = 0; e < p.size(); ++e) {
    const double q = std::min(1.0, static_cast<double>(top_k) * p[e]);
    x[e] = std::clamp(n * q + std::sqrt(n * q * (1 - q)) * normal(rng), 0.0, n);
  }
  // Scale to the total, floor, then hand out the remainder by largest fraction.
  const double sum = std::accumulate(x.begin(), x.end(), 0.0);
  std::vector<int64_t> counts(p.size());
  int64_t assigned = 0;
  for (size_t e = 0; e < p.size(); ++e) {
    x[e] = sum > 0 ? x[e] * static_cast<double>(total) / sum : 0;
    counts[e] = std::min(tokens, static_cast<int64_t>(std::floor(x[e])));
    assigned += counts[e];
  }
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return x[a] - std::floor(x[a]) > x[b] - std::floor(x[b]);
  });
  for (size_t i = 0; assigned < total; i = (i + 1) % order.size()) {
    if (counts[order[i]] < tokens) {
      ++counts[order[i]];
      ++assigned;
    }
  }
  return counts;
}

}  // namespace

std::string_view moe_routing_name(MoeRouting routing) {
  switch (routing) {
    case MoeRouting::kUniform:
      return "uniform";
    case MoeRouting::kRandom:
      return "random";
    case MoeRouting::kSkewed:
      return "skewed";
  }
  return "?";
}

int64_t ExpertLoad::max_rank_tokens() const {
  return rank_tokens.empty() ? 0 : *std::max_element(rank_tokens.begin(), rank_tokens.end());
}

double ExpertLoad::imbalance() const {
  const int64_t sum = std::accumulate(rank_tokens.begin(), rank_tokens.end(), int64_t{0});
  if (sum == 0) return 1.0;
  return static_cast<double>(max_rank_tokens()) * static_cast<double>(rank_tokens.size()) /
         static_cast<double>(sum);
}

ExpertLoad route_tokens(int64_t tokens, int64_t top_k, int64_t experts, int64_t ep,
                        const MoeRoutingSpec& spec, int64_t layer) {
  CLUSTERSIM_CHECK(tokens >= 0 && top_k >= 1 && top_k <= experts && ep >= 1 && experts % ep == 0,
                   "route_tokens: tokens >= 0, 1 <= top_k <= experts, ep divides experts");
  CLUSTERSIM_CHECK(spec.skew >= 0 && spec.capacity_factor >= 0,
                   "route_tokens: skew and capacity_factor >= 0");
  ExpertLoad load;
  const int64_t assignments = tokens * top_k;
  if (spec.routing == MoeRouting::kUniform) {
    load.tokens.assign(static_cast<size_t>(experts), assignments / experts);
    for (int64_t e = 0; e < assignments % experts; ++e) ++load.tokens[static_cast<size_t>(e)];
  } else {
    sim::RandomStream rng(spec.seed, "moe.routing", static_cast<uint64_t>(layer));
    const double skew = spec.routing == MoeRouting::kSkewed ? spec.skew : 0.0;
    const std::vector<double> p = popularity(experts, skew, rng);
    load.tokens = assignments <= kExactDraws ? sample_exact(tokens, top_k, p, rng)
                                             : sample_normal(tokens, top_k, p, rng);
  }
  if (spec.capacity_factor > 0) {
    load.capacity = static_cast<int64_t>(std::ceil(
        spec.capacity_factor * static_cast<double>(assignments) / static_cast<double>(experts)));
    for (int64_t& t : load.tokens) {
      load.dropped += std::max<int64_t>(0, t - load.capacity);
      t = spec.pad_to_capacity ? load.capacity : std::min(t, load.capacity);
    }
  }
  const int64_t per_rank = experts / ep;
  load.rank_tokens.assign(static_cast<size_t>(ep), 0);
  for (int64_t e = 0; e < experts; ++e) {
    load.rank_tokens[static_cast<size_t>(e / per_rank)] += load.tokens[static_cast<size_t>(e)];
  }
  return load;
}

}  // namespace clustersim::workloads
