#include "collectives/max_min_fairness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "sim/check.h"
#include "sim/random_stream.h"

namespace clustersim::collectives {
namespace {

using sim::InvariantError;
using sim::RandomStream;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

FlowId add(MaxMinFairness& mmf, std::vector<LinkLoad> loads,
           double max_rate_Bps = MaxMinFairness::kUnlimited) {
  return mmf.add_flow(loads, max_rate_Bps);
}

std::vector<FlowId> ids(std::initializer_list<FlowId> list) { return list; }

TEST(MaxMinFairness, OneFlowOnOneLinkGetsTheCapacity) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const FlowId flow = add(mmf, {{link, 1.0}});
  EXPECT_EQ(mmf.rate(flow), 100);
  EXPECT_EQ(mmf.last_changed(), ids({flow}));
  EXPECT_EQ(mmf.link_load(link), 100);
}

TEST(MaxMinFairness, OneFlowRateIsCapacityOverCoefficient) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const FlowId flow = add(mmf, {{link, 2.0}});
  EXPECT_EQ(mmf.rate(flow), 50);
}

// A collective's busbw factor scales its shared footprint. Alone, the flow
// runs at the least capacity over scaled coefficient: link a allows
// 100 / (0.5 x 2) = 100, link b, whose two loads are summed after scaling,
// 90 / (0.25 x 2 + 0.5 x 2) = 60 (unscaled it would be 120).
TEST(MaxMinFairness, CoefficientScaleMultipliesEveryLoadBeforeTheyAreSummed) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(100);
  const LinkId b = mmf.add_link(90);
  const std::vector<LinkLoad> loads{{a, 0.5}, {b, 0.25}, {b, 0.5}};
  const FlowId flow = mmf.add_flow(loads, MaxMinFairness::kUnlimited, 2.0);
  EXPECT_DOUBLE_EQ(mmf.rate(flow), 60);
  EXPECT_DOUBLE_EQ(mmf.link_load(a), 60);
  EXPECT_DOUBLE_EQ(mmf.link_load(b), 90);
  EXPECT_THROW(mmf.add_flow(loads, MaxMinFairness::kUnlimited, 0.0), InvariantError);
}

TEST(MaxMinFairness, TwoEqualFlowsShareALinkEqually) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const FlowId a = add(mmf, {{link, 1.0}});
  const FlowId b = add(mmf, {{link, 1.0}});
  EXPECT_EQ(mmf.rate(a), 50);
  EXPECT_EQ(mmf.rate(b), 50);
  EXPECT_EQ(mmf.last_changed(), ids({a, b}));
}

TEST(MaxMinFairness, SolveCountsCountComponentsAndTheirFlows) {
  // Adding a flow solves it (its component of one); the second flow on the
  // link couples both (a component of two); removing the first re-solves the
  // second alone; a flow on a link of its own removed leaves nothing to solve.
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const LinkId own = mmf.add_link(100);
  const FlowId a = add(mmf, {{link, 1.0}});
  add(mmf, {{link, 1.0}});
  mmf.remove_flow(a);
  const FlowId c = add(mmf, {{own, 1.0}});
  mmf.remove_flow(c);
  EXPECT_EQ(mmf.solve_counts().components, 4u);  // a, {a, b}, b, c
  EXPECT_EQ(mmf.solve_counts().flows, 5u);
  EXPECT_EQ(mmf.solve_counts().largest, 2u);
}

// Link A (10) carries f1, f2; link B (8) carries f2, f3. Filling: A would
// saturate at 10/2 = 5, B at 8/2 = 4, so B saturates first and freezes f2 and
// f3 at 4; f1 then takes what f2 leaves on A: 10 - 4 = 6.
TEST(MaxMinFairness, ThreeFlowsTwoBottlenecks) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(10);
  const LinkId b = mmf.add_link(8);
  const FlowId f1 = add(mmf, {{a, 1.0}});
  const FlowId f2 = add(mmf, {{a, 1.0}, {b, 1.0}});
  const FlowId f3 = add(mmf, {{b, 1.0}});
  EXPECT_EQ(mmf.rate(f1), 6);
  EXPECT_EQ(mmf.rate(f2), 4);
  EXPECT_EQ(mmf.rate(f3), 4);
  EXPECT_EQ(mmf.link_load(a), 10);
  EXPECT_EQ(mmf.link_load(b), 8);
}

TEST(MaxMinFairness, RemovingAFlowRestoresTheOthers) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(10);
  const LinkId b = mmf.add_link(8);
  const FlowId f1 = add(mmf, {{a, 1.0}});
  const FlowId f2 = add(mmf, {{a, 1.0}, {b, 1.0}});
  const FlowId f3 = add(mmf, {{b, 1.0}});
  mmf.remove_flow(f2);
  EXPECT_EQ(mmf.rate(f1), 10);
  EXPECT_EQ(mmf.rate(f3), 8);
  EXPECT_EQ(mmf.last_changed(), ids({f1, f3}));
  EXPECT_EQ(mmf.num_flows(), 2u);
  EXPECT_EQ(mmf.link_load(a), 10);
}

// Two 8-rank ring all-reduces (each link carries 2(n-1)/n = 1.75 bytes per
// byte of buffer) on their own NVLink-class links, both crossing one
// oversubscribed 25 GB/s uplink: each gets half of it.
TEST(MaxMinFairness, TwoAllReducesShareAnOversubscribedUplink) {
  MaxMinFairness mmf;
  constexpr double kCoef = 2.0 * 7.0 / 8.0;
  const LinkId uplink = mmf.add_link(25e9);
  std::vector<FlowId> rings;
  for (int r = 0; r < 2; ++r) {
    std::vector<LinkLoad> loads{{uplink, kCoef}};
    for (int i = 0; i < 7; ++i) loads.push_back({mmf.add_link(450e9), kCoef});
    rings.push_back(add(mmf, loads));
    if (r == 0) {
      EXPECT_DOUBLE_EQ(mmf.rate(rings[0]), 25e9 / kCoef);
    }
  }
  EXPECT_DOUBLE_EQ(mmf.rate(rings[0]), 12.5e9 / kCoef);
  EXPECT_DOUBLE_EQ(mmf.rate(rings[1]), 12.5e9 / kCoef);
  EXPECT_DOUBLE_EQ(mmf.link_load(uplink), 25e9);
}

TEST(MaxMinFairness, OwnMaximumBindsBeforeTheLink) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const FlowId capped = add(mmf, {{link, 1.0}}, 30);
  EXPECT_EQ(mmf.rate(capped), 30);
  const FlowId other = add(mmf, {{link, 1.0}});
  EXPECT_EQ(mmf.rate(capped), 30);
  EXPECT_EQ(mmf.rate(other), 70);
  // Only the new flow changed.
  EXPECT_EQ(mmf.last_changed(), ids({other}));
}

// Link A (12) carries f1 (coef 1) and f2 (coef 2); f2 also crosses B (1) with
// coef 0.5. A alone would freeze both at 12/3 = 4, but B saturates at
// 1/0.5 = 2 first; f1 then gets (12 - 2*2)/1 = 8.
TEST(MaxMinFairness, CoefficientsOtherThanOne) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(12);
  const FlowId f1 = add(mmf, {{a, 1.0}});
  const FlowId f2 = add(mmf, {{a, 2.0}});
  EXPECT_EQ(mmf.rate(f1), 4);
  EXPECT_EQ(mmf.rate(f2), 4);
  const LinkId b = mmf.add_link(1);
  mmf.remove_flow(f2);
  const FlowId f2b = add(mmf, {{a, 2.0}, {b, 0.5}});
  EXPECT_EQ(f2b, f2);  // the id is recycled
  EXPECT_EQ(mmf.rate(f2b), 2);
  EXPECT_EQ(mmf.rate(f1), 8);
  EXPECT_EQ(mmf.link_load(a), 12);
  EXPECT_EQ(mmf.link_load(b), 1);
}

TEST(MaxMinFairness, LoadsOnTheSameLinkAreSummed) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(90);
  const FlowId flow = add(mmf, {{link, 1.0}, {link, 2.0}});
  EXPECT_EQ(mmf.rate(flow), 30);
}

TEST(MaxMinFairness, FlowWithoutLinksRunsAtItsMaximum) {
  MaxMinFairness mmf;
  const FlowId flow = add(mmf, {}, 7);
  EXPECT_EQ(mmf.rate(flow), 7);
  EXPECT_EQ(mmf.last_changed(), ids({flow}));
}

TEST(MaxMinFairness, SetLinkCapacityResolves) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  const FlowId a = add(mmf, {{link, 1.0}});
  const FlowId b = add(mmf, {{link, 1.0}}, 10);
  mmf.set_link_capacity(link, 40);
  EXPECT_EQ(mmf.rate(a), 30);
  EXPECT_EQ(mmf.rate(b), 10);
  EXPECT_EQ(mmf.last_changed(), ids({a}));
  EXPECT_EQ(mmf.link_capacity(link), 40);
}

TEST(MaxMinFairness, IdsAreRecycledSmallestFirst) {
  MaxMinFairness mmf;
  const LinkId link = mmf.add_link(100);
  std::vector<FlowId> flows;
  for (int i = 0; i < 4; ++i) flows.push_back(add(mmf, {{link, 1.0}}));
  mmf.remove_flow(flows[3]);
  mmf.remove_flow(flows[1]);
  EXPECT_EQ(add(mmf, {{link, 1.0}}), flows[1]);
  EXPECT_EQ(add(mmf, {{link, 1.0}}), flows[3]);
  EXPECT_EQ(add(mmf, {{link, 1.0}}), FlowId{4});
}

// Three components on disjoint links: a change in one leaves the others'
// rates bit-identical, out of last_changed(), and unvisited.
TEST(MaxMinFairness, DisjointComponentsAreUnaffected) {
  MaxMinFairness mmf;
  std::vector<std::vector<FlowId>> groups(3);
  std::vector<LinkId> shared;
  for (int g = 0; g < 3; ++g) {
    shared.push_back(mmf.add_link(10.0 * (g + 1)));
    for (int i = 0; i < 3; ++i) {
      const LinkId own = mmf.add_link(3.0 + i);
      groups[static_cast<std::size_t>(g)].push_back(
          add(mmf, {{shared.back(), 1.0 + i}, {own, 1.0}}));
    }
  }
  std::vector<double> before;
  for (const auto& group : groups) {
    for (const FlowId f : group) before.push_back(mmf.rate(f));
  }
  const FlowId extra = add(mmf, {{shared[1], 1.0}});
  EXPECT_EQ(mmf.last_solved_flows(), 4u);
  for (const FlowId f : mmf.last_changed()) {
    EXPECT_TRUE(f == extra || std::find(groups[1].begin(), groups[1].end(), f) != groups[1].end());
  }
  std::size_t k = 0;
  for (std::size_t g = 0; g < 3; ++g) {
    for (const FlowId f : groups[g]) {
      if (g != 1) {
        EXPECT_EQ(mmf.rate(f), before[k]);
      }
      ++k;
    }
  }
  mmf.remove_flow(extra);
  EXPECT_EQ(mmf.last_solved_flows(), 3u);
  k = 0;
  for (const auto& group : groups) {
    for (const FlowId f : group) EXPECT_EQ(mmf.rate(f), before[k++]);
  }
}

// Max-min rates are not monotone in the set of flows. A (10) carries f1, f2;
// B (10) carries f2, f3: all get 5. f4 joins A: A now saturates at 10/3,
// freezing f1, f2, f4 there, and f3 takes the rest of B: 10 - 10/3 = 20/3 > 5.
// So a start can speed a flow up, and an end can slow one down; the caller
// must reschedule every flow in last_changed(), not only the slower ones.
TEST(MaxMinFairness, AddingAFlowCanSpeedAnotherUp) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(10);
  const LinkId b = mmf.add_link(10);
  const FlowId f1 = add(mmf, {{a, 1.0}});
  const FlowId f2 = add(mmf, {{a, 1.0}, {b, 1.0}});
  const FlowId f3 = add(mmf, {{b, 1.0}});
  EXPECT_EQ(mmf.rate(f3), 5);
  const FlowId f4 = add(mmf, {{a, 1.0}});
  EXPECT_DOUBLE_EQ(mmf.rate(f1), 10.0 / 3);
  EXPECT_DOUBLE_EQ(mmf.rate(f2), 10.0 / 3);
  EXPECT_DOUBLE_EQ(mmf.rate(f4), 10.0 / 3);
  EXPECT_DOUBLE_EQ(mmf.rate(f3), 20.0 / 3);
  EXPECT_EQ(mmf.last_changed(), ids({f1, f2, f3, f4}));
  mmf.remove_flow(f4);
  EXPECT_EQ(mmf.rate(f3), 5);  // and the end slows f3 down again
}

TEST(MaxMinFairness, RemovalThatSplitsAComponentSolvesBothPieces) {
  MaxMinFairness mmf;
  const LinkId a = mmf.add_link(10);
  const LinkId b = mmf.add_link(8);
  const FlowId f1 = add(mmf, {{a, 1.0}});
  const FlowId f2 = add(mmf, {{a, 1.0}, {b, 1.0}});
  const FlowId f3 = add(mmf, {{b, 1.0}});
  const FlowId f4 = add(mmf, {{b, 1.0}});
  EXPECT_EQ(mmf.rate(f1), 10 - 8.0 / 3);
  mmf.remove_flow(f2);
  EXPECT_EQ(mmf.last_solved_flows(), 3u);
  EXPECT_EQ(mmf.rate(f1), 10);
  EXPECT_EQ(mmf.rate(f3), 4);
  EXPECT_EQ(mmf.rate(f4), 4);
}

TEST(MaxMinFairness, BadInputFailsChecks) {
  MaxMinFairness mmf;
  EXPECT_THROW(mmf.add_link(0), InvariantError);
  EXPECT_THROW(mmf.add_link(-1), InvariantError);
  EXPECT_THROW(mmf.add_link(kNaN), InvariantError);
  EXPECT_THROW(mmf.add_link(kInf), InvariantError);
  const LinkId link = mmf.add_link(10);
  EXPECT_THROW(add(mmf, {{LinkId{7}, 1.0}}), InvariantError);
  EXPECT_THROW(add(mmf, {{link, kNaN}}), InvariantError);
  EXPECT_THROW(add(mmf, {{link, 0.0}}), InvariantError);
  EXPECT_THROW(add(mmf, {{link, -1.0}}), InvariantError);
  EXPECT_THROW(add(mmf, {{link, kInf}}), InvariantError);
  EXPECT_THROW(add(mmf, {{link, 1.0}}, 0), InvariantError);
  EXPECT_THROW(add(mmf, {{link, 1.0}}, kNaN), InvariantError);
  EXPECT_THROW(add(mmf, {}), InvariantError);
  EXPECT_THROW(mmf.set_link_capacity(link, 0), InvariantError);
  EXPECT_THROW(mmf.set_link_capacity(LinkId{3}, 1), InvariantError);
  EXPECT_EQ(mmf.num_flows(), 0u);
  const FlowId flow = add(mmf, {{link, 1.0}});
  mmf.remove_flow(flow);
  EXPECT_THROW(mmf.remove_flow(flow), InvariantError);
  EXPECT_THROW(mmf.rate(flow), InvariantError);
  EXPECT_THROW(mmf.rate(FlowId{99}), InvariantError);
  EXPECT_THROW(mmf.link_load(LinkId{99}), InvariantError);
}

// --- Property tests over random instances ---------------------------------

struct FlowSpec {
  std::vector<LinkLoad> loads;
  double max_rate_Bps;
};

// Independent dense reference: progressive filling recomputing every level
// from scratch each round, freezing everything within a relative 1e-12 of it.
std::map<uint32_t, double> reference_solve(const std::vector<double>& capacities,
                                           const std::map<uint32_t, FlowSpec>& flows) {
  std::map<uint32_t, double> rate;
  std::map<uint32_t, bool> frozen;
  for (const auto& [id, spec] : flows) {
    rate[id] = 0;
    frozen[id] = false;
  }
  for (;;) {
    std::vector<double> used(capacities.size(), 0), weight(capacities.size(), 0);
    bool any = false;
    for (const auto& [id, spec] : flows) {
      for (const LinkLoad& l : spec.loads) {
        const auto li = static_cast<std::size_t>(l.link);
        if (frozen[id]) {
          used[li] += l.coefficient * rate[id];
        } else {
          weight[li] += l.coefficient;
        }
      }
      any = any || !frozen[id];
    }
    if (!any) break;
    double level = kInf;
    for (const auto& [id, spec] : flows) {
      if (!frozen[id]) level = std::min(level, spec.max_rate_Bps);
    }
    std::vector<double> link_level(capacities.size(), kInf);
    for (std::size_t l = 0; l < capacities.size(); ++l) {
      if (weight[l] > 0) link_level[l] = (capacities[l] - used[l]) / weight[l];
      level = std::min(level, link_level[l]);
    }
    const double slack = level * (1 + 1e-12);
    for (const auto& [id, spec] : flows) {
      if (frozen[id]) continue;
      bool stop = spec.max_rate_Bps <= slack;
      for (const LinkLoad& l : spec.loads) {
        stop = stop || link_level[static_cast<std::size_t>(l.link)] <= slack;
      }
      if (stop) {
        frozen[id] = true;
        rate[id] = level;
      }
    }
  }
  return rate;
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

class MaxMinFairnessProperty : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    num_links_ = 4 + rng_.next_below(24);
    for (std::size_t l = 0; l < num_links_; ++l) {
      capacities_.push_back(1 + 99 * rng_.next_unit());
      mmf_.add_link(capacities_.back());
    }
  }

  FlowSpec random_flow() {
    FlowSpec spec;
    const uint64_t n = 1 + rng_.next_below(4);
    for (uint64_t i = 0; i < n; ++i) {
      spec.loads.push_back({LinkId{static_cast<uint32_t>(rng_.next_below(num_links_))},
                            0.1 + 2.9 * rng_.next_unit()});
    }
    spec.max_rate_Bps = rng_.next_unit() < 0.3 ? 0.5 + 20 * rng_.next_unit() : kInf;
    return spec;
  }

  // Link loads within capacity; every flow bottlenecked; matches reference.
  void check_allocation() {
    std::vector<double> load(num_links_, 0), top_rate(num_links_, 0);
    for (const auto& [id, spec] : flows_) {
      const double r = mmf_.rate(FlowId{id});
      ASSERT_TRUE(r > 0 && std::isfinite(r));
      ASSERT_LE(r, spec.max_rate_Bps);
      for (const LinkLoad& l : spec.loads) {
        load[static_cast<std::size_t>(l.link)] += l.coefficient * r;
        top_rate[static_cast<std::size_t>(l.link)] =
            std::max(top_rate[static_cast<std::size_t>(l.link)], r);
      }
    }
    for (std::size_t l = 0; l < num_links_; ++l) {
      ASSERT_LE(load[l], capacities_[l] * (1 + 1e-9)) << "link " << l;
    }
    const auto reference = reference_solve(capacities_, flows_);
    for (const auto& [id, spec] : flows_) {
      const double r = mmf_.rate(FlowId{id});
      bool bottlenecked = r >= spec.max_rate_Bps * (1 - 1e-9);
      for (const LinkLoad& l : spec.loads) {
        const auto li = static_cast<std::size_t>(l.link);
        bottlenecked = bottlenecked ||
                       (load[li] >= capacities_[li] * (1 - 1e-9) && r >= top_rate[li] * (1 - 1e-9));
      }
      EXPECT_TRUE(bottlenecked) << "flow " << id;
      EXPECT_TRUE(near(r, reference.at(id)))
          << "flow " << id << ": " << r << " vs reference " << reference.at(id);
    }
  }

  std::map<uint32_t, double> rates() const {
    std::map<uint32_t, double> out;
    for (const auto& [id, spec] : flows_) out[id] = mmf_.rate(FlowId{id});
    return out;
  }

  // The smallest rate in `rates` among the flows named in `which`.
  static double min_rate(const std::map<uint32_t, double>& which,
                         const std::map<uint32_t, double>& rates) {
    double lowest = kInf;
    for (const auto& [id, r] : which) lowest = std::min(lowest, rates.at(id));
    return lowest;
  }

  // last_changed() is exactly the set of surviving flows whose rate changed
  // (bitwise), plus `added`.
  void check_last_changed(const std::map<uint32_t, double>& before, FlowId added) {
    std::vector<FlowId> expected;
    for (const auto& [id, spec] : flows_) {
      const auto it = before.find(id);
      if (FlowId{id} == added || it == before.end() || it->second != mmf_.rate(FlowId{id})) {
        expected.push_back(FlowId{id});
      }
    }
    EXPECT_EQ(mmf_.last_changed(), expected);
    EXPECT_LE(mmf_.last_changed().size(), mmf_.last_solved_flows());
  }

  RandomStream rng_{GetParam(), "test.max_min_fairness", 0};
  MaxMinFairness mmf_;
  std::size_t num_links_ = 0;
  std::vector<double> capacities_;
  std::map<uint32_t, FlowSpec> flows_;
};

TEST_P(MaxMinFairnessProperty, AddAndRemoveKeepTheAllocationMaxMinFair) {
  const std::size_t num_flows = 1 + rng_.next_below(40);
  for (std::size_t i = 0; i < num_flows; ++i) {
    const auto before = rates();
    FlowSpec spec = random_flow();
    const FlowId id = mmf_.add_flow(spec.loads, spec.max_rate_Bps);
    flows_[static_cast<uint32_t>(id)] = spec;
    // Adding a flow can speed some others up (see AddingAFlowCanSpeedAnotherUp)
    // but never raises the slowest of them: their new rates are feasible
    // without the new flow, and the old allocation maximised the minimum.
    EXPECT_LE(min_rate(before, rates()), min_rate(before, before) * (1 + 1e-9));
    check_last_changed(before, id);
    check_allocation();
  }
  while (!flows_.empty()) {
    const auto before = rates();
    auto it = flows_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng_.next_below(flows_.size())));
    mmf_.remove_flow(FlowId{it->first});
    flows_.erase(it);
    // The mirror image: removing a flow never lowers the slowest survivor.
    const auto after = rates();
    EXPECT_GE(min_rate(after, after), min_rate(after, before) * (1 - 1e-9));
    check_last_changed(before, FlowId{std::numeric_limits<uint32_t>::max()});
    check_allocation();
    // Sometimes add one back, so ids are recycled mid-run.
    if (rng_.next_unit() < 0.3) {
      const auto before_add = rates();
      FlowSpec spec = random_flow();
      const FlowId id = mmf_.add_flow(spec.loads, spec.max_rate_Bps);
      flows_[static_cast<uint32_t>(id)] = spec;
      check_last_changed(before_add, id);
      check_allocation();
    }
  }
  EXPECT_EQ(mmf_.num_flows(), 0u);
}

// Rates depend only on the current flows and their ids, not on history: a
// fresh solver fed the surviving flows (with the same ids) agrees bitwise.
TEST_P(MaxMinFairnessProperty, IncrementalEqualsFromScratch) {
  const std::size_t num_flows = 2 + rng_.next_below(40);
  std::vector<FlowSpec> specs;
  for (std::size_t i = 0; i < num_flows; ++i) {
    specs.push_back(random_flow());
    mmf_.add_flow(specs.back().loads, specs.back().max_rate_Bps);
  }
  // Remove a random half, then add the same specs back in increasing id order
  // (smallest-first recycling gives each its old id back).
  std::vector<uint32_t> removed;
  for (uint32_t id = 0; id < num_flows; ++id) {
    if (rng_.next_unit() < 0.5) {
      mmf_.remove_flow(FlowId{id});
      removed.push_back(id);
    }
  }
  for (const uint32_t id : removed) {
    const auto& s = specs[id];
    ASSERT_EQ(mmf_.add_flow(s.loads, s.max_rate_Bps), FlowId{id});
  }
  MaxMinFairness scratch;
  for (const double c : capacities_) scratch.add_link(c);
  for (const auto& s : specs) scratch.add_flow(s.loads, s.max_rate_Bps);
  for (uint32_t id = 0; id < num_flows; ++id) {
    EXPECT_EQ(mmf_.rate(FlowId{id}), scratch.rate(FlowId{id})) << "flow " << id;
  }
}

// A shared link that the flows' own maxima cannot fill never binds, so it
// does not couple them: adding the second flow re-solves it alone.
TEST(MaxMinFairness, SlackSharedLinkDoesNotCoupleFlows) {
  MaxMinFairness mmf;
  const LinkId shared = mmf.add_link(100);
  const LinkId a_only = mmf.add_link(100);
  const LinkId b_only = mmf.add_link(100);
  const LinkLoad a_loads[] = {{shared, 1}, {a_only, 1}};
  const LinkLoad b_loads[] = {{shared, 1}, {b_only, 1}};
  const FlowId a = mmf.add_flow(a_loads, 40);
  const FlowId b = mmf.add_flow(b_loads, 60);  // 40 + 60 <= 100: slack
  EXPECT_EQ(mmf.last_solved_flows(), 1u);
  EXPECT_EQ(mmf.rate(a), 40);
  EXPECT_EQ(mmf.rate(b), 60);
  // A third flow makes the link bind: all three are solved together and
  // share what the maxima leave (100 / 3 each, a's 40 not reached).
  const LinkLoad c_loads[] = {{shared, 1}};
  const FlowId c = mmf.add_flow(c_loads, 1000);
  EXPECT_EQ(mmf.last_solved_flows(), 3u);
  EXPECT_DOUBLE_EQ(mmf.rate(a), 100.0 / 3);
  EXPECT_DOUBLE_EQ(mmf.rate(b), 100.0 / 3);
  EXPECT_DOUBLE_EQ(mmf.rate(c), 100.0 / 3);
  // Removing it frees both again, though the link no longer couples them.
  mmf.remove_flow(c);
  EXPECT_EQ(mmf.last_solved_flows(), 2u);
  EXPECT_EQ(mmf.rate(a), 40);
  EXPECT_EQ(mmf.rate(b), 60);
}

// Starts and finishes batched together end with the rates the same changes
// made one at a time give; rates of flows started in the batch are unknown
// until it ends.
TEST(MaxMinFairness, BatchSolvesLikeOneChangeAtATime) {
  const auto build = [](MaxMinFairness& m) {
    const LinkId a = m.add_link(100);
    const LinkId b = m.add_link(60);
    const LinkId c = m.add_link(1000);
    return std::array<LinkId, 3>{a, b, c};
  };
  MaxMinFairness one;
  MaxMinFairness batched;
  const auto l1 = build(one);
  const auto l2 = build(batched);
  const auto flows = [](const std::array<LinkId, 3>& l) {
    return std::vector<std::vector<LinkLoad>>{
        {{l[0], 1}, {l[1], 1}}, {{l[0], 2}}, {{l[1], 1}, {l[2], 1}}, {{l[2], 1}}};
  };
  const std::vector<double> maxima = {80, MaxMinFairness::kUnlimited, 30, 5};
  std::vector<FlowId> a_ids, b_ids;
  for (size_t i = 0; i < 4; ++i) a_ids.push_back(one.add_flow(flows(l1)[i], maxima[i]));
  batched.begin_batch();
  for (size_t i = 0; i < 4; ++i) b_ids.push_back(batched.add_flow(flows(l2)[i], maxima[i]));
  EXPECT_TRUE(std::isnan(batched.rate(b_ids[0])));
  batched.end_batch();
  EXPECT_EQ(batched.last_changed().size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(batched.rate(b_ids[i]), one.rate(a_ids[i])) << i;
  // The isolated flow (link c is slack) runs at its own maximum.
  EXPECT_DOUBLE_EQ(batched.rate(b_ids[3]), 5);
  one.remove_flow(a_ids[1]);
  batched.begin_batch();
  batched.remove_flow(b_ids[1]);
  batched.end_batch();
  for (const size_t i : {0u, 2u, 3u}) {
    EXPECT_DOUBLE_EQ(batched.rate(b_ids[i]), one.rate(a_ids[i])) << i;
  }
  EXPECT_DOUBLE_EQ(batched.rate(b_ids[0]), 30);  // link b: 60 shared with flow 2's 30
}

INSTANTIATE_TEST_SUITE_P(MaxMinFairnessSeeds, MaxMinFairnessProperty,
                         ::testing::Range<uint64_t>(1, 41));

}  // namespace
}  // namespace clustersim::collectives
