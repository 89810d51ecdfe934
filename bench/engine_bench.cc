// Engine benchmark: the classic hold model.
//
// N events are pending; processing one schedules exactly one new event at
// now + Exponential(mean 1 ms), so the queue stays at N. items_per_second is
// events processed per second.
//
// BM_Hold runs it on the engine (Simulator, EventQueue, RandomStream);
// BM_HoldBaseline runs the same model the way a simulator is often first
// written: a std::priority_queue of (time, seq, std::function) events. Both
// draw from the same RandomStream and Exponential, so the difference is the
// engine's. BM_HoldTableDelays runs the engine with the delays drawn before
// timing: the queue and the dispatch alone.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/distributions.h"
#include "sim/random_stream.h"
#include "sim/simulator.h"

namespace {

using clustersim::sim::Event;
using clustersim::sim::EventHandler;
using clustersim::sim::Exponential;
using clustersim::sim::HandlerId;
using clustersim::sim::RandomStream;
using clustersim::sim::SimTime;
using clustersim::sim::Simulator;

constexpr double kMeanDelayNs = 1e6;

SimTime draw_delay(const Exponential& delay, RandomStream& rng) {
  return SimTime::from_ns_rounded(delay(rng));
}

class HoldHandler : public EventHandler {
 public:
  explicit HoldHandler(Simulator& sim)
      : rng_(1, "bench.hold", 0), delay_(kMeanDelayNs), id_(sim.add_handler(*this)) {}

  void seed(Simulator& sim, int64_t pending) {
    for (int64_t i = 0; i < pending; ++i) {
      sim.schedule_in(draw_delay(delay_, rng_), id_, 0, static_cast<uint64_t>(i));
    }
  }

  void on_event(Simulator& sim, const Event& event) override {
    sim.schedule_in(draw_delay(delay_, rng_), id_, 0, event.data);
  }

 private:
  RandomStream rng_;
  Exponential delay_;
  HandlerId id_;
};

// The hold model on the engine with `Handler` scheduling its events.
template <class Handler>
void run_hold(benchmark::State& state) {
  Simulator sim;
  Handler hold(sim);
  hold.seed(sim, state.range(0));
  // Warm up: let the queue reach its steady state (and grow its buffers).
  for (int64_t i = 0; i < state.range(0); ++i) sim.step();
  for (auto _ : state) sim.step();
  state.SetItemsProcessed(state.iterations());
}

void BM_Hold(benchmark::State& state) { run_hold<HoldHandler>(state); }

// The same hold model with its delays drawn once, before timing, into a
// table that events cycle through: what the queue costs without a random
// draw per event (the engine's own events draw nothing).
class TableHoldHandler : public EventHandler {
 public:
  explicit TableHoldHandler(Simulator& sim) : id_(sim.add_handler(*this)) {
    RandomStream rng(1, "bench.hold", 0);
    const Exponential delay(kMeanDelayNs);
    delays_.resize(kTableSize);
    for (SimTime& d : delays_) d = draw_delay(delay, rng);
  }

  void seed(Simulator& sim, int64_t pending) {
    for (int64_t i = 0; i < pending; ++i) sim.schedule_in(next(), id_, 0, static_cast<uint64_t>(i));
  }

  void on_event(Simulator& sim, const Event& event) override {
    sim.schedule_in(next(), id_, 0, event.data);
  }

 private:
  static constexpr size_t kTableSize = size_t{1} << 16;
  SimTime next() { return delays_[next_++ & (kTableSize - 1)]; }

  std::vector<SimTime> delays_;
  size_t next_ = 0;
  HandlerId id_;
};

void BM_HoldTableDelays(benchmark::State& state) { run_hold<TableHoldHandler>(state); }

// The baseline: one std::function per event, in a binary heap.
class BaselineSimulator {
 public:
  void schedule_in(SimTime delay, std::function<void()> action) {
    queue_.push(Item{now_ + delay, seq_++, std::move(action)});
  }
  void step() {
    Item item = queue_.top();  // top() is const: the closure is copied
    queue_.pop();
    now_ = item.time;
    item.action();
  }

 private:
  struct Item {
    SimTime time;
    uint64_t seq;
    std::function<void()> action;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.time > b.time || (a.time == b.time && a.seq > b.seq);
    }
  };
  std::priority_queue<Item, std::vector<Item>, Later> queue_;
  SimTime now_ = SimTime::zero();
  uint64_t seq_ = 0;
};

class BaselineHold {
 public:
  explicit BaselineHold(BaselineSimulator& sim)
      : sim_(sim), rng_(1, "bench.hold", 0), delay_(kMeanDelayNs) {}
  void schedule(uint64_t entity) {
    sim_.schedule_in(draw_delay(delay_, rng_), [this, entity] { schedule(entity); });
  }

 private:
  BaselineSimulator& sim_;
  RandomStream rng_;
  Exponential delay_;
};

void BM_HoldBaseline(benchmark::State& state) {
  BaselineSimulator sim;
  BaselineHold hold(sim);
  for (int64_t i = 0; i < state.range(0); ++i) hold.schedule(static_cast<uint64_t>(i));
  for (int64_t i = 0; i < state.range(0); ++i) sim.step();
  for (auto _ : state) sim.step();
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_Hold)->RangeMultiplier(10)->Range(1'000, 1'000'000);
BENCHMARK(BM_HoldTableDelays)->RangeMultiplier(10)->Range(1'000, 1'000'000);
BENCHMARK(BM_HoldBaseline)->RangeMultiplier(10)->Range(1'000, 1'000'000);

}  // namespace

BENCHMARK_MAIN();
