#include "collectives/max_min_fairness.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "sim/check.h"

namespace clustersim::collectives {

namespace {

uint32_t index_of(LinkId link) { return static_cast<uint32_t>(link); }
uint32_t index_of(FlowId flow) { return static_cast<uint32_t>(flow); }

bool valid_capacity(double capacity_Bps) { return capacity_Bps > 0 && std::isfinite(capacity_Bps); }

}  // namespace

void MaxMinFairness::check_link(LinkId link) const {
  CLUSTERSIM_CHECK(index_of(link) < links_.size(),
                   "unknown link id " + std::to_string(index_of(link)));
}

void MaxMinFairness::check_flow(FlowId flow) const {
  CLUSTERSIM_CHECK(index_of(flow) < flows_.size() && flows_[index_of(flow)].active,
                   "unknown or removed flow id " + std::to_string(index_of(flow)));
}

LinkId MaxMinFairness::add_link(double capacity_Bps) {
  CLUSTERSIM_CHECK(valid_capacity(capacity_Bps), "link capacity must be positive and finite, got " +
                                                     std::to_string(capacity_Bps));
  CLUSTERSIM_CHECK(links_.size() < std::numeric_limits<uint32_t>::max(), "too many links");
  links_.emplace_back();
  links_.back().capacity_Bps = capacity_Bps;
  solving_.emplace_back();
  return LinkId{static_cast<uint32_t>(links_.size() - 1)};
}

void MaxMinFairness::set_link_capacity(LinkId link, double capacity_Bps) {
  check_link(link);
  CLUSTERSIM_CHECK(valid_capacity(capacity_Bps), "link capacity must be positive and finite, got " +
                                                     std::to_string(capacity_Bps));
  links_[index_of(link)].capacity_Bps = capacity_Bps;
  if (batch_open_) {
    pending_links_.push_back(index_of(link));
    return;
  }
  begin_component();
  seed_users_of(index_of(link));
  solve_component();
}

FlowId MaxMinFairness::add_flow(std::span<const LinkLoad> loads, double max_rate_Bps,
                                double coefficient_scale) {
  CLUSTERSIM_CHECK(max_rate_Bps > 0,
                   "a flow's maximum rate must be positive, got " + std::to_string(max_rate_Bps));
  CLUSTERSIM_CHECK(!loads.empty() || std::isfinite(max_rate_Bps),
                   "a flow with no link load needs a finite maximum rate");
  CLUSTERSIM_CHECK(
      coefficient_scale > 0 && std::isfinite(coefficient_scale),
      "coefficient scale must be positive and finite, got " + std::to_string(coefficient_scale));
  for (const LinkLoad& load : loads) {
    check_link(load.link);
    CLUSTERSIM_CHECK(load.coefficient > 0 && std::isfinite(load.coefficient),
                     "load coefficient must be positive and finite, got " +
                         std::to_string(load.coefficient) + " on link " +
                         std::to_string(index_of(load.link)));
  }

  uint32_t id;
  if (free_flows_.empty()) {
    CLUSTERSIM_CHECK(flows_.size() < std::numeric_limits<uint32_t>::max(), "too many flows");
    id = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
  } else {
    std::pop_heap(free_flows_.begin(), free_flows_.end(), std::greater<>());
    id = free_flows_.back();
    free_flows_.pop_back();
  }
  Flow& flow = flows_[id];
  flow.active = true;
  flow.max_rate_Bps = max_rate_Bps;
  flow.rate_Bps = std::numeric_limits<double>::quiet_NaN();  // so that it counts as changed
  flow.loads.assign(loads.begin(), loads.end());
  if (coefficient_scale != 1) {
    for (LinkLoad& load : flow.loads) load.coefficient *= coefficient_scale;
  }
  // Sorted by link, duplicates summed in the caller's order (stable sort;
  // skipped when the caller passes them sorted already).
  const auto by_link = [](const LinkLoad& a, const LinkLoad& b) {
    return index_of(a.link) < index_of(b.link);
  };
  if (!std::is_sorted(flow.loads.begin(), flow.loads.end(), by_link)) {
    std::stable_sort(flow.loads.begin(), flow.loads.end(), by_link);
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < flow.loads.size(); ++i) {
    if (kept > 0 && flow.loads[kept - 1].link == flow.loads[i].link) {
      flow.loads[kept - 1].coefficient += flow.loads[i].coefficient;
    } else {
      flow.loads[kept++] = flow.loads[i];
    }
  }
  flow.loads.resize(kept);

  flow.coupled_at_add = false;
  for (std::size_t i = 0; i < flow.loads.size(); ++i) {
    prefetch_links(flow.loads, i);
    const LinkLoad& load = flow.loads[i];
    std::vector<User>& users = links_[index_of(load.link)].users;
    const auto at = std::lower_bound(users.begin(), users.end(), id,
                                     [](const User& u, uint32_t f) { return u.flow < f; });
    users.insert(at, User{id, load.coefficient});
    add_potential(index_of(load.link), load.coefficient * flow.max_rate_Bps);
    flow.coupled_at_add = flow.coupled_at_add || couples(links_[index_of(load.link)]);
  }

  if (batch_open_) {
    pending_flows_.push_back(id);
    return FlowId{id};
  }
  begin_component();
  flow.stamp = stamp_;
  component_flows_.push_back(id);  // covers a flow with no links
  collect_from_flow(id);
  solve_component();
  return FlowId{id};
}

void MaxMinFairness::remove_flow(FlowId flow_id) {
  check_flow(flow_id);
  const uint32_t id = index_of(flow_id);
  Flow& flow = flows_[id];
  // A flow that no link couples to another one took nothing from anybody:
  // removing it changes no other rate, so nothing is re-solved.
  bool coupled = false;
  for (std::size_t i = 0; i < flow.loads.size(); ++i) {
    prefetch_links(flow.loads, i);
    const LinkLoad& load = flow.loads[i];
    coupled = coupled || couples(links_[index_of(load.link)]);
    std::vector<User>& users = links_[index_of(load.link)].users;
    const auto at = std::lower_bound(users.begin(), users.end(), id,
                                     [](const User& u, uint32_t f) { return u.flow < f; });
    CLUSTERSIM_CHECK(at != users.end() && at->flow == id,
                     "a flow is listed on every link it loads");
    users.erase(at);
    add_potential(index_of(load.link), -load.coefficient * flow.max_rate_Bps);
  }
  flow.active = false;
  flow.rate_Bps = 0;
  if (!coupled) {
    flow.loads.clear();
    free_flows_.push_back(id);
    std::push_heap(free_flows_.begin(), free_flows_.end(), std::greater<>());
    if (!batch_open_) {
      last_changed_.clear();
      last_solved_flows_ = 0;
    }
    return;
  }
  if (batch_open_) {
    for (const LinkLoad& load : flow.loads) pending_links_.push_back(index_of(load.link));
    flow.loads.clear();
    free_flows_.push_back(id);
    std::push_heap(free_flows_.begin(), free_flows_.end(), std::greater<>());
    return;
  }

  // Every flow that shared a link with the removed one is re-solved, even
  // where that link no longer couples them: it may have coupled them before.
  begin_component();
  flow.stamp = stamp_;
  for (const LinkLoad& load : flow.loads) seed_users_of(index_of(load.link));
  flow.loads.clear();  // keeps its capacity for the next flow with this id
  free_flows_.push_back(id);
  std::push_heap(free_flows_.begin(), free_flows_.end(), std::greater<>());
  solve_component();
}

void MaxMinFairness::begin_batch() {
  CLUSTERSIM_CHECK(!batch_open_, "batches do not nest");
  batch_open_ = true;
}

bool MaxMinFairness::batch_trivial() const {
  if (!pending_links_.empty()) return false;
  return std::none_of(pending_flows_.begin(), pending_flows_.end(), [this](uint32_t id) {
    return flows_[id].active && flows_[id].coupled_at_add;
  });
}

void MaxMinFairness::end_batch() {
  CLUSTERSIM_CHECK(batch_open_, "end_batch() after begin_batch()");
  batch_open_ = false;
  begin_component();
  // A new flow that no link couples to another runs at its own bound: it
  // needs no solve (unless a removal's neighbourhood reaches it below).
  isolated_.clear();
  for (const uint32_t id : pending_flows_) {
    Flow& flow = flows_[id];
    if (!flow.active || flow.stamp == stamp_) continue;  // removed again, or reached already
    // Isolated when added; a later flow of the batch that couples to it
    // reaches it through that link and solves it with its component.
    if (!flow.coupled_at_add) {
      isolated_.push_back(id);
      continue;
    }
    flow.stamp = stamp_;
    component_flows_.push_back(id);
    collect_from_flow(id);
  }
  for (const uint32_t link : pending_links_) seed_users_of(link);
  pending_flows_.clear();
  pending_links_.clear();
  solve_component();
  bool appended = false;
  for (const uint32_t id : isolated_) {
    Flow& flow = flows_[id];
    if (flow.stamp == stamp_) continue;  // solved with a component after all
    double bound = flow.max_rate_Bps;
    for (const LinkLoad& load : flow.loads) {
      bound = std::min(bound, links_[index_of(load.link)].capacity_Bps / load.coefficient);
    }
    if (!(flow.rate_Bps == bound)) {
      flow.rate_Bps = bound;
      last_changed_.push_back(FlowId{id});
      appended = true;
    }
  }
  if (appended) std::sort(last_changed_.begin(), last_changed_.end());
}

double MaxMinFairness::rate(FlowId flow) const {
  check_flow(flow);
  return flows_[index_of(flow)].rate_Bps;
}

double MaxMinFairness::link_load(LinkId link) const {
  check_link(link);
  double load = 0;
  for (const User& user : links_[index_of(link)].users) {
    load += user.coefficient * flows_[user.flow].rate_Bps;
  }
  return load;
}

double MaxMinFairness::link_capacity(LinkId link) const {
  check_link(link);
  return links_[index_of(link)].capacity_Bps;
}

void MaxMinFairness::begin_component() {
  if (++stamp_ == 0) {  // wrapped after 2^32 solves: clear the old marks once
    for (Link& link : links_) link.stamp = 0;
    for (Flow& flow : flows_) flow.stamp = 0;
    stamp_ = 1;
  }
  component_flows_.clear();
  component_links_.clear();
}

void MaxMinFairness::add_potential(uint32_t id, double load) {
  Link& link = links_[id];
  if (std::isinf(load)) {
    link.unlimited_users += load > 0 ? 1 : -1;
  } else {
    link.potential_load += load;
  }
  // Exact again whenever the link empties, so rounding cannot accumulate.
  if (link.users.empty()) link.potential_load = 0;
}

// A large footprint's links are scattered over links_ (a few thousand of
// them for a collective of a thousand ranks): walking one is a cache miss
// per link, then one per link's user list. Fetch the link kPrefetchLinks
// ahead and its user list (whose address the link holds, fetched by then) a
// quarter of that ahead: the 98,304-GPU HSDP step x0.92. Small footprints
// (a node's TP group) are left alone.
void MaxMinFairness::prefetch_links(const std::vector<LinkLoad>& loads, std::size_t i) const {
  constexpr std::size_t kPrefetchLinks = 16;
  if (loads.size() <= kPrefetchLinks) return;
  if (i + kPrefetchLinks < loads.size()) {
    __builtin_prefetch(&links_[index_of(loads[i + kPrefetchLinks].link)]);
  }
  if (i + kPrefetchLinks / 4 < loads.size()) {
    __builtin_prefetch(links_[index_of(loads[i + kPrefetchLinks / 4].link)].users.data());
  }
}

bool MaxMinFairness::couples(const Link& link) const {
  return link.users.size() > 1 &&
         (link.unlimited_users > 0 || !(link.potential_load <= link.capacity_Bps));
}

void MaxMinFairness::seed_users_of(uint32_t id) {
  for (const User& user : links_[id].users) {
    Flow& flow = flows_[user.flow];
    if (flow.stamp == stamp_) continue;
    flow.stamp = stamp_;
    component_flows_.push_back(user.flow);
    collect_from_flow(user.flow);
  }
}

void MaxMinFairness::collect_from_flow(uint32_t seed) {
  // Depth-first over flows; a link joins the component (and spreads it) only
  // where it couples its flows.
  stack_.assign(1, seed);
  while (!stack_.empty()) {
    const uint32_t id = stack_.back();
    stack_.pop_back();
    for (const LinkLoad& load : flows_[id].loads) {
      Link& link = links_[index_of(load.link)];
      if (link.stamp == stamp_ || !couples(link)) continue;
      link.stamp = stamp_;
      component_links_.push_back(index_of(load.link));
      for (const User& user : link.users) {
        Flow& flow = flows_[user.flow];
        if (flow.stamp == stamp_) continue;
        flow.stamp = stamp_;
        component_flows_.push_back(user.flow);
        stack_.push_back(user.flow);
      }
    }
  }
}

namespace {

// Min-heap order on (level, kind, id): equal levels resolve flow maxima before
// links and lower ids first.
template <typename Entry>
bool heap_after(const Entry& a, const Entry& b) {
  if (a.level != b.level) return a.level > b.level;
  if (a.kind != b.kind) return a.kind > b.kind;
  return a.id > b.id;
}

}  // namespace

void MaxMinFairness::push_link(uint32_t id, double floor_level) {
  Link& link = links_[id];
  LinkSolve& x = solving_[id];
  ++x.version;
  if (x.unfrozen == 0 || id == saturating_link_) return;
  if (x.unfrozen_coefficient < 1e-3 * x.coefficient_reference) {
    x.unfrozen_coefficient = 0;
    for (const User& user : link.users) {
      if (!flows_[user.flow].frozen) x.unfrozen_coefficient += user.coefficient;
    }
    x.coefficient_reference = x.unfrozen_coefficient;
  }
  // Rounding may leave the remaining capacity a hair below what the frozen
  // flows already took; levels never go down in exact arithmetic.
  const double level =
      std::max(floor_level, (link.capacity_Bps - x.frozen_load) / x.unfrozen_coefficient);
  heap_.push_back(HeapEntry{level, 1, id, x.version});
  std::push_heap(heap_.begin(), heap_.end(), heap_after<HeapEntry>);
}

void MaxMinFairness::freeze(uint32_t id, double level) {
  Flow& flow = flows_[id];
  flow.frozen = true;
  flow.rate_Bps = level;
  for (const LinkLoad& load : flow.loads) {
    Link& link = links_[index_of(load.link)];
    if (link.stamp != stamp_) continue;  // does not couple: cannot saturate
    LinkSolve& x = solving_[index_of(load.link)];
    x.frozen_load += load.coefficient * level;
    x.unfrozen_coefficient -= load.coefficient;
    --x.unfrozen;
    push_link(index_of(load.link), level);
  }
}

void MaxMinFairness::solve_component() {
  // Pop order is a total order on (level, kind, id), so the order in which
  // entries are pushed does not matter; flows are sorted for last_changed().
  std::sort(component_flows_.begin(), component_flows_.end());
  last_solved_flows_ = component_flows_.size();
  if (!component_flows_.empty()) {
    ++solve_counts_.components;
    solve_counts_.flows += component_flows_.size();
    solve_counts_.largest = std::max<uint64_t>(solve_counts_.largest, component_flows_.size());
  }
  last_changed_.clear();
  old_rates_.clear();
  heap_.clear();

  for (const uint32_t id : component_links_) {
    Link& link = links_[id];
    LinkSolve& x = solving_[id];
    x.frozen_load = 0;
    x.unfrozen = static_cast<uint32_t>(link.users.size());
    x.unfrozen_coefficient = 0;
    for (const User& user : link.users) x.unfrozen_coefficient += user.coefficient;
    x.coefficient_reference = x.unfrozen_coefficient;
    ++x.version;
    heap_.push_back(HeapEntry{link.capacity_Bps / x.unfrozen_coefficient, 1, id, x.version});
  }
  for (const uint32_t id : component_flows_) {
    Flow& flow = flows_[id];
    old_rates_.push_back(flow.rate_Bps);
    flow.frozen = false;
    double bound = flow.max_rate_Bps;
    for (const LinkLoad& load : flow.loads) {
      const Link& link = links_[index_of(load.link)];
      if (link.stamp != stamp_) bound = std::min(bound, link.capacity_Bps / load.coefficient);
    }
    if (std::isfinite(bound)) heap_.push_back(HeapEntry{bound, 0, id, 0});
  }
  std::make_heap(heap_.begin(), heap_.end(), heap_after<HeapEntry>);

  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), heap_after<HeapEntry>);
    const HeapEntry entry = heap_.back();
    heap_.pop_back();
    if (entry.kind == 0) {
      if (!flows_[entry.id].frozen) freeze(entry.id, entry.level);
      continue;
    }
    Link& link = links_[entry.id];
    const LinkSolve& x = solving_[entry.id];
    if (entry.version != x.version || x.unfrozen == 0) continue;
    // The link saturates: every flow still growing on it stops here. Index
    // loop: freeze() pushes to heap_ but does not touch link.users.
    saturating_link_ = entry.id;
    for (std::size_t i = 0; i < link.users.size(); ++i) {
      const uint32_t flow = link.users[i].flow;
      if (!flows_[flow].frozen) freeze(flow, entry.level);
    }
    saturating_link_ = kNoLink;
  }

  for (std::size_t i = 0; i < component_flows_.size(); ++i) {
    const Flow& flow = flows_[component_flows_[i]];
    CLUSTERSIM_CHECK(flow.frozen, "progressive filling freezes every flow of the component");
    if (!(flow.rate_Bps == old_rates_[i])) last_changed_.push_back(FlowId{component_flows_[i]});
  }
}

}  // namespace clustersim::collectives
