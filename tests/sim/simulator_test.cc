#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "sim/check.h"
#include "sim/distributions.h"
#include "sim/random_stream.h"

namespace clustersim::sim {
namespace {

// Records (time, kind, data) of every event it receives.
class Recorder : public EventHandler {
 public:
  struct Seen {
    int64_t time_ns;
    EventKind kind;
    uint64_t data;
    bool operator==(const Seen&) const = default;
  };
  void on_event(Simulator&, const Event& e) override {
    seen.push_back(Seen{e.time.count_ns(), e.kind, e.data});
  }
  std::vector<Seen> seen;
};

TEST(Simulator, DeliversToTheNamedHandlerInOrder) {
  Simulator sim;
  Recorder a;
  Recorder b;
  const HandlerId ha = sim.add_handler(a);
  const HandlerId hb = sim.add_handler(b);
  sim.schedule_at(SimTime::us(2), hb, 1, 20);
  sim.schedule_at(SimTime::us(1), ha, 2, 10);
  sim.schedule_at(SimTime::us(2), ha, 3, 11);
  EXPECT_EQ(sim.run(), RunOutcome::kQueueEmpty);
  EXPECT_EQ(a.seen, (std::vector<Recorder::Seen>{{1000, 2, 10}, {2000, 3, 11}}));
  EXPECT_EQ(b.seen, (std::vector<Recorder::Seen>{{2000, 1, 20}}));
  EXPECT_EQ(sim.now(), SimTime::us(2));
  EXPECT_EQ(sim.events_processed(), 3u);
}

// A handler that schedules a chain: each event at now + 10 ns, up to a count.
class Chain : public EventHandler {
 public:
  explicit Chain(Simulator& sim) : id(sim.add_handler(*this)) {}
  void on_event(Simulator& sim, const Event& e) override {
    times.push_back(sim.now().count_ns());
    if (e.data > 0) sim.schedule_in(SimTime::ns(10), id, 0, e.data - 1);
    if (stop_at_ns >= 0 && sim.now().count_ns() == stop_at_ns) sim.stop();
  }
  HandlerId id;
  std::vector<int64_t> times;
  int64_t stop_at_ns = -1;
};

TEST(Simulator, RunUntilStopsAtTheLimitAndResumes) {
  Simulator sim;
  Chain chain(sim);
  sim.schedule_at(SimTime::ns(0), chain.id, 0, 9);  // fires at 0, 10, ..., 90
  EXPECT_EQ(sim.run_until(SimTime::ns(35)), RunOutcome::kTimeLimit);
  EXPECT_EQ(chain.times, (std::vector<int64_t>{0, 10, 20, 30}));
  EXPECT_EQ(sim.now(), SimTime::ns(35));
  EXPECT_EQ(sim.pending(), 1u);
  // An event between now and the next pending one still runs first.
  Recorder r;
  const HandlerId hr = sim.add_handler(r);
  sim.schedule_at(SimTime::ns(38), hr, 0, 1);
  EXPECT_EQ(sim.run_until(SimTime::ns(40)), RunOutcome::kTimeLimit);
  EXPECT_EQ(r.seen, (std::vector<Recorder::Seen>{{38, 0, 1}}));
  EXPECT_EQ(chain.times.back(), 40);
  EXPECT_EQ(sim.run(), RunOutcome::kQueueEmpty);
  EXPECT_EQ(chain.times.back(), 90);
  EXPECT_EQ(sim.run_until(SimTime::ns(500)), RunOutcome::kQueueEmpty);
  EXPECT_EQ(sim.now(), SimTime::ns(500)) << "the world idles until the limit";
}

TEST(Simulator, StopEndsTheRunAfterTheCurrentEvent) {
  Simulator sim;
  Chain chain(sim);
  chain.stop_at_ns = 20;
  sim.schedule_at(SimTime::ns(0), chain.id, 0, 9);
  EXPECT_EQ(sim.run(), RunOutcome::kStopped);
  EXPECT_EQ(sim.now(), SimTime::ns(20));
  EXPECT_EQ(chain.times.size(), 3u);
  EXPECT_EQ(sim.run(), RunOutcome::kQueueEmpty);
  EXPECT_EQ(chain.times.size(), 10u);
}

TEST(Simulator, CancelledEventsDoNotFire) {
  Simulator sim;
  Recorder r;
  const HandlerId h = sim.add_handler(r);
  const EventId keep = sim.schedule_cancellable_at(SimTime::ns(5), h, 0, 1);
  const EventId drop = sim.schedule_cancellable_in(SimTime::ns(7), h, 0, 2);
  EXPECT_TRUE(sim.cancel(drop));
  EXPECT_EQ(sim.pending(), 1u);
  sim.run();
  EXPECT_EQ(r.seen, (std::vector<Recorder::Seen>{{5, 0, 1}}));
  EXPECT_FALSE(sim.cancel(keep));
}

TEST(Simulator, StepProcessesOneEvent) {
  Simulator sim;
  Recorder r;
  const HandlerId h = sim.add_handler(r);
  sim.schedule_at(SimTime::ns(3), h, 0, 1);
  sim.schedule_at(SimTime::ns(4), h, 0, 2);
  EXPECT_TRUE(sim.step());
  EXPECT_EQ(sim.now(), SimTime::ns(3));
  EXPECT_TRUE(sim.step());
  EXPECT_FALSE(sim.step());
  EXPECT_EQ(r.seen.size(), 2u);
}

TEST(Simulator, SchedulingIntoThePastIsABrokenInvariant) {
  Simulator sim;
  Recorder r;
  const HandlerId h = sim.add_handler(r);
  sim.schedule_at(SimTime::ns(10), h);
  sim.run();
  EXPECT_THROW(sim.schedule_at(SimTime::ns(9), h), InvariantError);
  EXPECT_THROW(sim.schedule_in(SimTime::ns(-1), h), InvariantError);
  EXPECT_THROW(sim.schedule_at(SimTime::ns(20), h + 1), InvariantError);
  EXPECT_THROW(sim.run_until(SimTime::ns(5)), InvariantError);
}

// The hold model twice with the same seed gives the same trajectory; a
// different seed a different one.
class Hold : public EventHandler {
 public:
  Hold(Simulator& sim, uint64_t seed)
      : rng_(seed, "test.hold", 0), delay_(1000.0), id_(sim.add_handler(*this)) {
    for (uint64_t i = 0; i < 100; ++i) {
      sim.schedule_in(SimTime::from_ns_rounded(delay_(rng_)), id_, 0, i);
    }
  }
  void on_event(Simulator& sim, const Event& e) override {
    trace.push_back(e.time.count_ns() * 1000 + static_cast<int64_t>(e.data));
    sim.schedule_in(SimTime::from_ns_rounded(delay_(rng_)), id_, 0, e.data);
  }
  std::vector<int64_t> trace;

 private:
  RandomStream rng_;
  Exponential delay_;
  HandlerId id_;
};

TEST(Simulator, SameSeedSameTrajectory) {
  Simulator a;
  Simulator b;
  Simulator c;
  Hold ha(a, 7);
  Hold hb(b, 7);
  Hold hc(c, 8);
  a.run_until(SimTime::ms(1));
  b.run_until(SimTime::ms(1));
  c.run_until(SimTime::ms(1));
  EXPECT_GT(ha.trace.size(), 50'000u);
  EXPECT_EQ(ha.trace, hb.trace);
  EXPECT_NE(ha.trace, hc.trace);
  // Time never goes backwards.
  for (size_t i = 1; i < ha.trace.size(); ++i) {
    ASSERT_LE(ha.trace[i - 1] / 1000, ha.trace[i] / 1000);
  }
}

}  // namespace
}  // namespace clustersim::sim
