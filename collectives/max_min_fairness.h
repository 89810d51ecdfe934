// MaxMinFairness: the flow-level contention solver of the collective model.
//
// Model. Links have a capacity (bytes/s). A flow is one active collective: it
// progresses at a rate r_f (bytes of its buffer per second) and loads each
// link l it uses with a coefficient coef(f, l) > 0, the bytes that cross l per
// byte of progress (a ring all-reduce over n ranks loads each of its links
// with 2(n-1)/n). A flow may also have its own maximum rate (latency- or
// protocol-bound). The rates are the max-min fair allocation, found by
// progressive filling: all unfrozen flows grow at the same rate; a flow
// freezes when its own maximum is reached or when a link it loads saturates
// (sum_f coef(f, l) * r_f == capacity(l)). So every link's load is at most
// its capacity and no flow can go faster without slowing a flow whose rate is
// smaller or equal.
//
// Incremental. add_flow, remove_flow and set_link_capacity re-solve only the
// connected component touched (flows and links reachable through shared
// links; after a removal, the union of the pieces the flow connected), in
// O(L + (F + S + sum of loads) log(F + S)) for a component of F flows, L links
// and S links shared by two or more flows (a link used by one flow only is
// folded into that flow's bound). Flows on disjoint links are not visited,
// nor are flows whose only shared links are slack: a link whose flows, all at
// their own maximum rates, would still not fill it can never bind, so it
// does not couple them (on non-blocking fabrics most shared links are slack,
// which keeps components small at 100k GPUs).
// last_changed() names the flows whose rate changed, so that the caller
// reschedules only their completion events. Note that max-min rates are not
// monotone: a start can speed another flow up and an end can slow one down
// (tests: AddingAFlowCanSpeedAnotherUp), so reschedule all of them.
//
// Determinism. Per-link flow lists are kept sorted by flow id and every
// computation runs in id order, so rates are a function of the current flows
// (with their ids) alone, never of hash order or of the add/remove history.
// Ties between equal levels are broken by id.
//
// Ids are dense indices, recycled after remove_flow (the smallest free id
// first); a FlowId must not be used after its flow is removed (a recycled id
// names the new flow). Links are never removed.
//
// Errors: bad arguments (capacity not positive and finite, unknown or removed
// id, coefficient not positive and finite, a flow with no load and no maximum
// rate) are bugs in the caller and fail a CLUSTERSIM_CHECK (InvariantError).
//
// Ownership and threads: a value type with no global state; one object must
// not be used by two threads at once.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace clustersim::collectives {

enum class LinkId : uint32_t {};
enum class FlowId : uint32_t {};

// One term of a flow's footprint: bytes crossing `link` per byte of progress.
struct LinkLoad {
  LinkId link;
  double coefficient;
};

class MaxMinFairness {
 public:
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  // A new link with the given capacity (bytes/s, > 0 and finite).
  LinkId add_link(double capacity_Bps);

  // Changes a link's capacity (a degraded or repaired link) and re-solves its
  // component.
  void set_link_capacity(LinkId link, double capacity_Bps);

  // Adds a flow and re-solves its component. Each load's coefficient is
  // multiplied by coefficient_scale (a collective's busbw factor: a shared
  // footprint serves every size of the collective without a copy per
  // start), then loads on the same link are summed. max_rate_Bps > 0; it may
  // be kUnlimited if `loads` is not empty.
  FlowId add_flow(std::span<const LinkLoad> loads, double max_rate_Bps = kUnlimited,
                  double coefficient_scale = 1);

  // Removes a flow and re-solves the component(s) it was part of.
  void remove_flow(FlowId flow);

  // Batches: between begin_batch() and end_batch(), add_flow, remove_flow
  // and set_link_capacity only record what changed; end_batch() re-solves
  // the union of the touched components once (so many collectives starting
  // at the same instant cost one solve, not one per start). rate() of a flow
  // added in an open batch is NaN until end_batch(); last_changed() then
  // lists every flow whose rate changed in the whole batch.
  void begin_batch();
  void end_batch();
  bool batch_open() const { return batch_open_; }
  // The open batch only added flows no link couples to another and removed
  // none that was coupled: end_batch() would solve nothing (each new flow
  // runs at its own bound), so it may as well end now.
  bool batch_trivial() const;

  // The flow's max-min fair rate, bytes of progress per second.
  double rate(FlowId flow) const;

  // Sum over active flows of coefficient * rate on `link`, bytes/s.
  double link_load(LinkId link) const;
  double link_capacity(LinkId link) const;

  // Flows (other than a removed one) whose rate changed in the last
  // add_flow / remove_flow / set_link_capacity, sorted by id; includes the
  // flow just added.
  const std::vector<FlowId>& last_changed() const { return last_changed_; }

  // Size of the last re-solve, for benchmarks and tests of incrementality.
  std::size_t last_solved_flows() const { return last_solved_flows_; }
  // Re-solves of a component with at least one flow since construction,
  // the flows they solved in all, and the largest component.
  struct SolveCounts {
    uint64_t components = 0;
    uint64_t flows = 0;
    uint64_t largest = 0;
  };
  const SolveCounts& solve_counts() const { return solve_counts_; }

  std::size_t num_links() const { return links_.size(); }
  std::size_t num_flows() const { return flows_.size() - free_flows_.size(); }

 private:
  struct User {
    uint32_t flow;
    double coefficient;
  };
  // What add/remove and component searches touch; 48 bytes.
  struct Link {
    double capacity_Bps = 0;
    std::vector<User> users;  // active flows loading this link, sorted by flow id
    // Sum of coefficient * max rate over its flows with a finite maximum,
    // and the number without one.
    double potential_load = 0;
    int32_t unlimited_users = 0;
    // Marks membership in the component of the current solve.
    uint32_t stamp = 0;
  };
  // Scratch of progressive filling, for the links of the component solved.
  struct LinkSolve {
    uint32_t version = 0;   // bumps when the link's heap entry goes stale
    uint32_t unfrozen = 0;  // flows on the link not yet frozen
    double frozen_load = 0;
    double unfrozen_coefficient = 0;
    // unfrozen_coefficient is kept by subtraction; when it has fallen far
    // below this value it is summed afresh, so cancellation stays harmless.
    double coefficient_reference = 0;
  };
  struct Flow {
    std::vector<LinkLoad> loads;  // sorted by link id, one entry per link
    double max_rate_Bps = kUnlimited;
    double rate_Bps = 0;
    bool active = false;
    bool frozen = false;
    bool coupled_at_add = false;  // a link coupled it to another flow when it was added
    uint32_t stamp = 0;
  };

  void check_link(LinkId link) const;
  void check_flow(FlowId flow) const;
  // Starts a new component (fresh stamp, empty lists).
  void begin_component();
  // Adds `load` (coefficient * max rate, may be -load or +-infinity) to the
  // link's potential as a flow joins or leaves it.
  void add_potential(uint32_t link, double load);
  // Prefetches the links of loads[i + ahead] (add_flow, remove_flow).
  void prefetch_links(const std::vector<LinkLoad>& loads, std::size_t i) const;
  // The link can bind: two or more flows whose maxima together exceed it.
  bool couples(const Link& link) const;
  // Adds `flow`'s component (flows reachable through coupling links).
  void collect_from_flow(uint32_t flow);
  // Adds every flow on `link`, and their components.
  void seed_users_of(uint32_t link);
  // Progressive filling over the collected component; fills last_changed_.
  void solve_component();
  void freeze(uint32_t flow, double level);
  void push_link(uint32_t link, double floor_level);

  std::vector<Link> links_;
  std::vector<LinkSolve> solving_;  // parallel to links_
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;  // min-heap of recyclable flow ids
  uint32_t stamp_ = 0;

  // Scratch, reused between solves so that a re-solve does not allocate.
  std::vector<uint32_t> component_flows_;
  std::vector<uint32_t> component_links_;
  std::vector<uint32_t> stack_;
  std::vector<double> old_rates_;  // parallel to component_flows_
  struct HeapEntry {
    double level;
    uint32_t kind;  // 0: a flow's own maximum, 1: a link saturates
    uint32_t id;
    uint32_t version;
  };
  std::vector<HeapEntry> heap_;
  // The link whose saturation is freezing its flows: no heap entries for it.
  static constexpr uint32_t kNoLink = std::numeric_limits<uint32_t>::max();
  uint32_t saturating_link_ = kNoLink;
  std::vector<FlowId> last_changed_;
  std::size_t last_solved_flows_ = 0;
  SolveCounts solve_counts_;
  bool batch_open_ = false;
  std::vector<uint32_t> pending_flows_;  // added in the open batch
  std::vector<uint32_t> pending_links_;  // whose flows or capacity changed in it
  std::vector<uint32_t> isolated_;       // scratch of end_batch()
};

}  // namespace clustersim::collectives
