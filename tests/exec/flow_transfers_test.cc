// exec/flow_transfers.h's bundles: a bundle's flows move as one transfer;
// merged, only its first flow is solved, and only where that is exact --
// the copies disjoint, or sharing only links that cannot bind; by link
// class, the quotient is solved where the classes keep it exact.
#include "exec/flow_transfers.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "collectives/collective_flows.h"
#include "sim/simulator.h"
#include "tests/support/step_fixtures.h"

namespace clustersim::workloads {
namespace {

constexpr sim::EventKind kEnd = 0;
constexpr sim::EventKind kSolve = 1;
constexpr double kBytes = 1e9;

// Starts bundles of GPU pairs on one HGX H100 node (each pair's footprint:
// its two GPUs' NVLink ports) at time 0 and records when each ends.
class Bundles : public sim::EventHandler {
 public:
  explicit Bundles(bool merge)
      : Bundles(merge ? FlowTransfers::Mode::kClaims : FlowTransfers::Mode::kEachFlow) {}
  explicit Bundles(FlowTransfers::Mode mode)
      : cluster_(test_support::hgx_h100(1)),
        flows_(cluster_, test_support::h100()),
        transfers_(sim_, flows_) {
    handler_ = sim_.add_handler(*this);
    transfers_.bind(handler_, kEnd, kSolve);
    transfers_.set_mode(mode);
  }

  // A bundle of the pairs, each flow at most `alone_Bps` (busbw factor 1).
  void start(const std::vector<std::array<int64_t, 2>>& pairs, double alone_Bps, uint64_t id) {
    std::vector<const collectives::Footprint*> bundle;
    for (const std::array<int64_t, 2>& p : pairs) {
      auto at = footprints_.find(p);
      if (at == footprints_.end()) at = footprints_.emplace(p, flows_.footprint(p)).first;
      bundle.push_back(&at->second);
    }
    transfers_.start(bundle, 1.0, alone_Bps, kBytes, id);
  }
  void run() { sim_.run(); }
  int64_t end_ns(uint64_t id) const { return ends_.at(id); }
  // A GPU's NVLink port capacity (B/s) as the solver has it.
  double port_Bps() {
    return flows_.link_capacity(flows_.footprint(std::array<int64_t, 2>{0, 1}).loads[0].link);
  }
  size_t flows_in_solver() const { return peak_flows_; }
  size_t link_classes() const { return transfers_.link_classes(); }

  void on_event(sim::Simulator& sim, const sim::Event& event) override {
    (void)sim;
    if (event.kind == kSolve) {
      transfers_.on_solve_event();
      return;
    }
    peak_flows_ = std::max(peak_flows_, flows_.active_flows());
    const uint64_t id = transfers_.finish(static_cast<uint32_t>(event.data));
    ends_[id] = sim_.now().count_ns();
  }

 private:
  topology::Cluster cluster_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  collectives::CollectiveFlows flows_;
  FlowTransfers transfers_;
  std::map<std::array<int64_t, 2>, collectives::Footprint>
      footprints_;  // by pair, as the engine keeps them
  std::map<uint64_t, int64_t> ends_;
  size_t peak_flows_ = 0;
};

int64_t at_rate_ns(double rate_Bps) {
  return static_cast<int64_t>(std::ceil(kBytes / rate_Bps * 1e9));
}

TEST(FlowTransfers, DisjointCopiesMergedSolveTheFirstFlowAlone) {
  // Pairs {0,1} and {2,3}: member 1's ports are its own. Each moves at its
  // cap, 100 GB/s, merged or not; merged, the solver holds one flow.
  for (const bool merge : {false, true}) {
    SCOPED_TRACE(merge ? "merged" : "each flow solved");
    Bundles b(merge);
    b.start({{0, 1}, {2, 3}}, 100e9, 1);
    b.run();
    EXPECT_EQ(b.end_ns(1), at_rate_ns(100e9));
    EXPECT_EQ(b.flows_in_solver(), merge ? 1U : 2U);
  }
}

TEST(FlowTransfers, CopiesSharingALinkThatCannotBindStayMerged) {
  // Bundle A: pairs {0,1} (member 0) and {2,3} (member 1); bundle B: {4,5}
  // and {2,6}. Member 1's flows share GPU 2's ports where member 0's share
  // nothing: not copies of each other. At 40% of a port each, the two
  // flows on GPU 2 fit within it at full rate: the port cannot bind, and
  // the merged run is exact -- every transfer at its cap.
  Bundles probe(false);
  const double port = probe.port_Bps();
  for (const bool merge : {false, true}) {
    SCOPED_TRACE(merge ? "merged" : "each flow solved");
    Bundles b(merge);
    b.start({{0, 1}, {2, 3}}, 0.4 * port, 1);
    b.start({{4, 5}, {2, 6}}, 0.4 * port, 2);
    b.run();
    EXPECT_EQ(b.end_ns(1), at_rate_ns(0.4 * port));
    EXPECT_EQ(b.end_ns(2), at_rate_ns(0.4 * port));
    EXPECT_EQ(b.flows_in_solver(), merge ? 2U : 4U);
  }
}

TEST(FlowTransfers, CopiesSharingALinkThatBindsAreRefused) {
  // The same bundles at 60% of a port: GPU 2's two flows would need 120%
  // of it. Solving every flow, member 1's flows get half a port each and
  // member 0's their caps: the bundles' rates come apart. Merged, the start
  // of bundle B is refused before any of that is solved.
  Bundles probe(false);
  const double port = probe.port_Bps();
  Bundles each(false);
  each.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  each.start({{4, 5}, {2, 6}}, 0.6 * port, 2);
  EXPECT_THROW(each.run(), FlowTransfers::RatesApart);
  Bundles merged(true);
  merged.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  EXPECT_THROW(merged.start({{4, 5}, {2, 6}}, 0.6 * port, 2), FlowTransfers::BundlesCoupled);
}

TEST(FlowTransfers, ALinkIsFreeAgainOnceTheTransfersLoadingItEnd) {
  // Bundle A ({0,1}, {2,3}) at a whole port ends before bundle B ({4,5},
  // {2,6}) starts: GPU 2's ports are free again, and B's binding claim
  // would have been refused only while A moved.
  Bundles probe(false);
  const double port = probe.port_Bps();
  Bundles b(true);
  b.start({{0, 1}, {2, 3}}, port, 1);
  b.run();
  EXPECT_NO_THROW(b.start({{4, 5}, {2, 6}}, port, 2));
  b.run();
  EXPECT_EQ(b.end_ns(2), 2 * b.end_ns(1));
}

using Mode = FlowTransfers::Mode;

TEST(FlowTransfers, CopiesSharingBindingLinksEvenlyAreSolvedByLinkClass) {
  // Bundle A: pairs {0,1} and {2,3}; bundle B: {1,2} and {3,0}. Each of
  // GPUs 0-3's ports carries one flow of A and one of B, of different
  // member indices: claims disagree on links that bind (60% of a port
  // each), and the merged start is refused. The ports are one class; both
  // bundles cross it with every flow: the quotient is exact, half a port
  // each, as solving every flow gives.
  Bundles probe(false);
  const double port = probe.port_Bps();
  Bundles merged(Mode::kClaims);
  merged.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  EXPECT_THROW(merged.start({{1, 2}, {3, 0}}, 0.6 * port, 2), FlowTransfers::BundlesCoupled);
  for (const Mode mode : {Mode::kEachFlow, Mode::kQuotient}) {
    SCOPED_TRACE(mode == Mode::kQuotient ? "by link class" : "each flow solved");
    Bundles b(mode);
    b.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
    b.start({{1, 2}, {3, 0}}, 0.6 * port, 2);
    b.run();
    EXPECT_EQ(b.end_ns(1), at_rate_ns(0.5 * port));
    EXPECT_EQ(b.end_ns(2), at_rate_ns(0.5 * port));
  }
}

TEST(FlowTransfers, AClassSomeCopiesCrossIsCheckedAfterTheSolve) {
  // A ({0,1}, {2,3}) at 45% of a port; B ({0,4}, {1,5}) and E ({4,6},
  // {5,7}) at 60% and 90%. GPUs 0 and 1's ports carry A's member 0 and a
  // flow of B: a class that could bind (105% at full rates) crossed by A's
  // member 0 and not its member 1. GPUs 4 and 5's ports hold B and E to
  // half a port each, so B leaves room: A at its cap, 95% on GPU 0's
  // port. The class is left out of the quotient and found slack: exact.
  Bundles probe(false);
  const double port = probe.port_Bps();
  for (const Mode mode : {Mode::kEachFlow, Mode::kQuotient}) {
    SCOPED_TRACE(mode == Mode::kQuotient ? "by link class" : "each flow solved");
    Bundles b(mode);
    b.start({{0, 1}, {2, 3}}, 0.45 * port, 1);
    b.start({{0, 4}, {1, 5}}, 0.6 * port, 2);
    b.start({{4, 6}, {5, 7}}, 0.9 * port, 3);
    b.run();
    EXPECT_EQ(b.end_ns(1), at_rate_ns(0.45 * port));
    EXPECT_EQ(b.end_ns(2), at_rate_ns(0.5 * port));
    // E: half a port until B ends, then its cap for the rest.
    const double rest = kBytes - 0.5 * port * static_cast<double>(b.end_ns(2)) * 1e-9;
    EXPECT_NEAR(static_cast<double>(b.end_ns(3)),
                static_cast<double>(b.end_ns(2)) + rest / (0.9 * port) * 1e9, 2.0);
  }
}

TEST(FlowTransfers, AClassThatBindsSomeCopiesOnlyBreaksTheQuotient) {
  // The same A and B at 60% each, without E: GPU 0's port binds at half a
  // port for A's member 0, which member 1 does not share. Solving every
  // flow, A's flows come apart; by link class, the solve that finds the
  // left-out class overfilled (120% at the quotient's rates) throws.
  Bundles probe(false);
  const double port = probe.port_Bps();
  Bundles each(Mode::kEachFlow);
  each.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  each.start({{0, 4}, {1, 5}}, 0.6 * port, 2);
  EXPECT_THROW(each.run(), FlowTransfers::RatesApart);
  Bundles quotient(Mode::kQuotient);
  quotient.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  quotient.start({{0, 4}, {1, 5}}, 0.6 * port, 2);
  EXPECT_THROW(quotient.run(), FlowTransfers::QuotientBroken);
}

TEST(FlowTransfers, LinkClassesRecurAsTransfersOfOneShapeRecur) {
  // The same bundle twice, one after the other: its links pass through the
  // same classes (interned), and it moves at its cap each time.
  Bundles probe(false);
  const double port = probe.port_Bps();
  Bundles b(Mode::kQuotient);
  b.start({{0, 1}, {2, 3}}, 0.6 * port, 1);
  b.run();
  const size_t classes = b.link_classes();
  b.start({{0, 1}, {2, 3}}, 0.6 * port, 2);
  b.run();
  EXPECT_EQ(b.end_ns(1), at_rate_ns(0.6 * port));
  EXPECT_EQ(b.end_ns(2), 2 * b.end_ns(1));
  EXPECT_EQ(b.link_classes(), classes);
  EXPECT_EQ(b.flows_in_solver(), 0U);  // the quotient's solver is its own
}

}  // namespace
}  // namespace clustersim::workloads
