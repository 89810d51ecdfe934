// Collective transfers sharing the links by max-min fairness, on the event
// engine: the bookkeeping the step simulator and the Chakra replay share.
//
// A transfer moves its bytes at the rate collectives::CollectiveFlows gives
// its flow. Transfers starting or ending at one instant are solved together,
// once, after every event of that instant queued so far (the owner's
// `solve_kind` event) -- unless the batch is trivial (no flow it touches is
// coupled to another), which is solved at once. When a solve changes a
// flow's rate, its progress is brought up to date at the old rate and its
// end is rescheduled at the new one (an `end_kind` event carrying the
// transfer's slot; end times round up to the nanosecond).
//
// A transfer may be a bundle of flows on several footprints that move at
// one rate (the members of a timeline, exec/timelines.h): one end event for
// all, at the first flow's rate. Their rates must stay equal (same_rate);
// when a solve gives them different rates it throws RatesApart. With
// merge_bundles(), a bundle's first flow alone is solved, where that is
// exact: every bundle's footprints are copies of its first under one map of
// links per member index, and no link serves two member indices, bundles
// of two sizes or a flow outside the bundles' scheme (then the max-min
// problem is disjoint copies of the first members', with equal rates) --
// except links that cannot bind: where the flows on a link could all move
// at their full rates at once (the sum of their loads at full rate, its
// "potential", within its capacity), the link constrains nobody, and what
// loads it does not matter. The check is of what is in flight: a link is
// claimed while a transfer that loads it moves and is free again once none
// does, so bundles whose member indices mean different things (a replica
// group's copies are shard positions, a shard group's replica positions)
// keep the symmetry while they do not overlap. A link whose claims
// disagree (or whose copies' maps do) must stay within its capacity at
// full rates while they do; the first start that breaks this throws
// BundlesCoupled.
//
// With solve_by_link_class() (exec/flow_transfers_quotient.cc), copies may
// share links that bind: the max-min problem is solved on its quotient. A
// link's class is its capacity and its row -- each transfer in flight on it
// with the summed coefficient of that transfer's flows there; the quotient
// has one link per class and one flow per transfer, loading each class its
// first flow crosses with the class's coefficient for it. That is exact
// where the classes are an equitable partition of the problem: links of one
// class carry the same loads of the same transfers (by construction), and
// every flow of a transfer crosses the classes that can bind that the
// others do. Progressive filling then keeps a transfer's flows at one rate
// throughout, and each class's links saturate at once. A class that can
// bind (its flows' full rates overfill it) but that some flows of a
// transfer cross and others do not is left out of the quotient and checked
// after the solve instead: where its links hold the solved rates within
// capacity, the solution of the problem without them is that of the whole
// (max-min fairness is leximin-optimal: an optimum of a larger feasible set
// that lies in a smaller one is its optimum); where they do not, the solve
// throws QuotientBroken. (ECMP hashes a few more flows onto some spine
// links than onto others: the links that could bind but do not.)
// The rates agree with solving every flow to rounding (a class's load is
// summed once per class, not once per flow), not necessarily bit for bit;
// every solve is the owner's `solve_kind` event (none is trivial), and a
// footprint's address is part of its shape's key: footprints must not move
// while a transfer of theirs moves.
//
// The owner (an event handler) forwards its `solve_kind` events to
// on_solve_event() and its `end_kind` events to finish(), which returns the
// value the transfer was started with.
// Thread safety: none; one per simulation.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "collectives/collective_flows.h"
#include "collectives/max_min_fairness.h"
#include "sim/simulator.h"

namespace clustersim::workloads {

// Whether two rates of copies of one flow are the same rate. The max-min
// solver sums a link's loads in the order its flows came, so copies on
// links loaded in different orders come out a few ulps apart (seen: 64
// copies of a send/recv, 31,333,333,333.333336 against ...332 B/s); a
// relative 1e-12 is far above that noise and moves the end of a transfer
// of up to 1,000 s by under a nanosecond.
inline bool same_rate(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(a, b); }

class FlowTransfers {
 public:
  FlowTransfers(sim::Simulator& sim, collectives::CollectiveFlows& flows)
      : sim_(sim), flows_(flows) {}

  // Where end and solve events go; call once the owner's handler exists.
  void bind(sim::HandlerId handler, sim::EventKind end_kind, sim::EventKind solve_kind) {
    handler_ = handler;
    end_kind_ = end_kind;
    solve_kind_ = solve_kind;
  }

  // Thrown by a solve that gives a bundle's flows different rates.
  struct RatesApart {};
  // Thrown with merge_bundles() by a start that breaks the symmetry above.
  struct BundlesCoupled {};
  // Thrown with solve_by_link_class() by a solve whose quotient is not
  // exact (see above).
  struct QuotientBroken {};

  // How bundles are solved; set before the first start. kEachFlow: every
  // flow; kClaims: one flow per bundle where claims allow (merge_bundles());
  // kQuotient: the quotient by link class (solve_by_link_class()).
  enum class Mode { kEachFlow, kClaims, kQuotient };
  void set_mode(Mode mode) { mode_ = mode; }
  Mode mode() const { return mode_; }
  void merge_bundles() { mode_ = Mode::kClaims; }
  void solve_by_link_class() { mode_ = Mode::kQuotient; }

  // The solver's re-solves so far (the quotient's with solve_by_link_class()).
  const collectives::MaxMinFairness::SolveCounts& solve_counts() const {
    return mode_ == Mode::kQuotient ? quotient_.solve_counts() : flows_.solve_counts();
  }
  // Link classes met so far (solve_by_link_class()).
  size_t link_classes() const { return classes_.size(); }
  // Starts moving `bytes` over `footprint` (see CollectiveFlows::start);
  // `owner` comes back from finish().
  void start(const collectives::Footprint& footprint, double busbw_factor, double alone_Bps,
             double bytes, uint64_t owner) {
    const collectives::Footprint* one = &footprint;
    start(std::span<const collectives::Footprint* const>(&one, 1), busbw_factor, alone_Bps, bytes,
          owner);
  }
  // The same over each of `footprints` at once, as one transfer.
  void start(std::span<const collectives::Footprint* const> footprints, double busbw_factor,
             double alone_Bps, double bytes, uint64_t owner);

  // The owner's `solve_kind` event.
  void on_solve_event();

  // The owner's `end_kind` event for `transfer` (its event's data): the
  // transfer is done; the others are re-solved. Returns its owner value.
  uint64_t finish(uint32_t transfer);

 private:
  struct Transfer {
    uint64_t owner = 0;
    double remaining_bytes = 0;
    double rate_Bps = 0;
    int64_t last_ns = 0;
    sim::EventId event;
    uint64_t solved = 0;                     // the solve that last looked at it
    std::vector<collectives::FlowId> flows;  // its flows (kept between uses)
    // With merge_bundles(): its footprints, whose links it claims, and the
    // load of a flow of coefficient 1 at its full rate (B/s).
    std::vector<const collectives::Footprint*> footprints;
    double load_scale = 0;
    // With solve_by_link_class(): its shape and instance (see Shape), its
    // quotient flow's loads (kept to skip a reload that changes nothing),
    // the classes that can bind that some of its flows cross and others do
    // not, the classes its first flow crosses that can bind, the solve that
    // last marked it, and whether it still moves.
    uint32_t shape = 0;
    uint32_t instance = 0;
    std::vector<collectives::LinkLoad> quotient_loads;
    std::vector<int32_t> uneven;
    std::vector<int32_t> first_classes;
    uint64_t marked = 0;
    bool counted = false;  // its classes counted since it was last marked
    bool moving = false;
  };

  int64_t now() const { return sim_.now().count_ns(); }
  void open_batch();
  void close_or_defer_batch();
  // Schedules the owner's solve event for now, once per instant.
  void defer_solve();
  void solve();
  void schedule_end(uint32_t transfer);

  sim::Simulator& sim_;
  collectives::CollectiveFlows& flows_;
  sim::HandlerId handler_ = 0;
  sim::EventKind end_kind_ = 0;
  sim::EventKind solve_kind_ = 0;
  std::vector<Transfer> transfers_;  // by slot
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> slot_of_flow_;  // by flow id
  uint64_t solves_ = 0;
  // merge_bundles() (exec/flow_transfers_claims.cc): the links in use, by
  // link id: how many flows in flight load it, the member index whose flows
  // do (-1 none, -2 a flow outside the bundles) and their bundles' size, the
  // member-0 link it copies (itself for member 0), whether claims disagree
  // there, its potential (B/s), and how many links in use copy it (itself
  // included: one per member of its bundles when no member has two).
  std::vector<int32_t> link_refs_;
  std::vector<int32_t> link_member_;
  std::vector<int32_t> link_bundle_size_;
  std::vector<int64_t> copy_of_;
  std::vector<uint8_t> link_apart_;
  std::vector<double> link_potential_;
  std::vector<int32_t> link_copies_;
  std::vector<double> link_capacity_;  // the solver's, read once (NaN: not yet)
  std::vector<size_t> apart_now_;  // scratch of claim(): links to check
  // Claims the links of a transfer's footprints, each flow loading
  // coefficient x load_scale at full rate; false where that breaks the
  // symmetry (the run is abandoned: claims made so far stay).
  bool claim(std::span<const collectives::Footprint* const> footprints, double load_scale);
  void release(std::span<const collectives::Footprint* const> footprints, double load_scale);
  void grow_links(size_t link) {
    if (link >= link_refs_.size()) grow_links_to(link);
  }
  void grow_links_to(size_t link);
  // (Every link set_apart() or capacity() is given has been claimed, and so
  // grown.)
  double capacity(size_t link);
  // Marks a link whose claims disagree; claim() checks it cannot bind.
  void set_apart(size_t link);
  bool flush_scheduled_ = false;  // a solve event is pending for now
  Mode mode_ = Mode::kEachFlow;

  // solve_by_link_class() (exec/flow_transfers_quotient.cc). A shape is a
  // transfer's footprints, busbw factor and full rate: transfers of one
  // shape recur (every layer's all-gather of a group), and so do the rows
  // they make; an instance tells apart transfers of one shape in flight at
  // once. A row entry: a transfer (shape, instance) and the summed
  // coefficient of its flows on the link. A class: a capacity and a row,
  // interned; it can bind where its flows' full rates overfill it.
  struct Shape {
    std::vector<const collectives::Footprint*> footprints;
    double busbw_factor = 0;
    double alone_Bps = 0;
    std::vector<uint32_t> slot_of_instance;  // kNoSlot where free
  };
  struct RowEntry {
    uint32_t shape;
    uint32_t instance;
    double coefficient;
  };
  struct LinkClass {
    double capacity_Bps = 0;
    std::vector<RowEntry> row;  // sorted by (shape, instance)
    bool can_bind = false;
    int64_t quotient_link = -1;  // its link in quotient_, once used
    int64_t links = 0;           // links of this class now
    int32_t uneven_for = 0;      // transfers some of whose flows cross it, not all
    uint32_t copies = 0;         // scratch of quotient_count
    uint64_t seen = 0;           // scratch of quotient_count
  };
  static constexpr uint32_t kNoSlot = 0xffffffffU;
  void quotient_start(uint32_t slot, std::span<const collectives::Footprint* const> footprints,
                      double busbw_factor, double alone_Bps);
  void quotient_finish(uint32_t slot);
  // Reloads the marked transfers' quotient flows.
  void quotient_reload();
  // Counts a transfer's classes (Transfer::uneven, first_classes).
  void quotient_count(uint32_t slot);
  // Throws QuotientBroken where a class left out of the quotient overfills.
  void quotient_check();
  double quotient_rate(const Transfer& tr) const;
  uint32_t intern_shape(std::span<const collectives::Footprint* const> footprints,
                        double busbw_factor, double alone_Bps);
  int32_t intern_class(double capacity_Bps, const std::vector<RowEntry>& row);
  int32_t class_of(size_t link);
  // A link moves from class `from` to `to`: marks the transfers in flight
  // on it where either can bind.
  void move_link(size_t link, int32_t from, int32_t to);
  // Marks the transfers in flight of a class's row (recount: their classes
  // changed, not only whether they load one).
  void mark_row(const LinkClass& c, bool recount);
  void mark(uint32_t slot);
  collectives::MaxMinFairness quotient_;
  std::vector<Shape> shapes_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> shape_index_;  // by hash
  std::vector<LinkClass> classes_;
  std::unordered_map<uint64_t, std::vector<int32_t>> class_index_;  // by hash
  struct Step {
    int32_t from;
    uint32_t shape;
    uint32_t instance;
    uint64_t coefficient_bits;
    bool operator==(const Step&) const = default;
  };
  struct StepHash {
    size_t operator()(const Step& s) const;
  };
  std::unordered_map<Step, int32_t, StepHash> steps_;
  struct RecentStep {
    Step step{-1, 0, 0, 0};
    int32_t to = -1;
  };
  std::vector<RecentStep> recent_steps_ = std::vector<RecentStep>(1 << 14);
  RecentStep last_step_;  // the step next_class took last
  // The class a link of class `from` has once (shape, instance) adds
  // `coefficient` to it (coefficient < 0: once the transfer leaves it).
  // Consecutive links of a footprint mostly take the step the last took:
  // checked here, inline, before the caches of look_up_step.
  int32_t next_class(int32_t from, uint32_t shape, uint32_t instance, double coefficient) {
    const Step step{from, shape, instance, std::bit_cast<uint64_t>(coefficient)};
    if (step == last_step_.step) return last_step_.to;
    return look_up_step(step);
  }
  int32_t look_up_step(const Step& step);
  std::vector<int32_t> link_class_;  // by link id; -1 untouched
  std::vector<uint32_t> marked_;     // transfers to reload at the next solve
  std::vector<uint32_t> reloading_;  // scratch of quotient_reload
  uint64_t marks_ = 1;               // stamp of the marks of the next solve
  uint64_t seen_ = 0;                // stamp of quotient_count's flows
  std::vector<int32_t> left_out_;    // classes with uneven_for > 0 (some stale)
  std::vector<collectives::LinkLoad> loads_scratch_;
};

}  // namespace clustersim::workloads
