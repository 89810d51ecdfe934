// cli/progress: the text of progress lines (counts, durations, the
// percentage held below 100 until the end, the ETA from the measured rate),
// their cadence on a terminal and off one with an injected clock (no test
// sleeps), --quiet, and the files-written text.
#include "cli/progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace clustersim::cli {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

// A clock the test moves by hand.
struct FakeClock {
  steady_clock::time_point t{};
  SteadyNow now() {
    return [this] { return t; };
  }
  void at(double s) {
    t = steady_clock::time_point{} +
        std::chrono::duration_cast<steady_clock::duration>(std::chrono::duration<double>(s));
  }
};

TEST(ProgressText, CountsAsAPersonReadsThem) {
  EXPECT_EQ(count_text(0), "0");
  EXPECT_EQ(count_text(9999), "9,999");
  EXPECT_EQ(count_text(12345), "12.3 k");
  EXPECT_EQ(count_text(999'949), "999.9 k");
  EXPECT_EQ(count_text(999'950), "1.0 M");
  EXPECT_EQ(count_text(33'184'350), "33.2 M");
  EXPECT_EQ(count_text(2.1e9), "2.1 G");
}

TEST(ProgressText, DurationsInSecondsMinutesOrHours) {
  EXPECT_EQ(duration_text(0), "0 s");
  EXPECT_EQ(duration_text(-3), "0 s");
  EXPECT_EQ(duration_text(59.4), "59 s");
  EXPECT_EQ(duration_text(59.6), "1 min 00 s");
  EXPECT_EQ(duration_text(65), "1 min 05 s");
  EXPECT_EQ(duration_text(3599), "59 min 59 s");
  EXPECT_EQ(duration_text(3600), "1 h 00 min");
  EXPECT_EQ(duration_text(7830), "2 h 11 min");  // 130.5 min rounds up
}

TEST(ProgressText, PercentIsFlooredAndHeldAt99) {
  EXPECT_EQ(percent_done(0), 0);
  EXPECT_EQ(percent_done(-0.5), 0);
  EXPECT_EQ(percent_done(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(percent_done(0.456), 45);
  EXPECT_EQ(percent_done(0.999), 99);
  // Work at or past its total before the end is 99%: only the last line says 100.
  EXPECT_EQ(percent_done(1.0), 99);
  EXPECT_EQ(percent_done(1.7), 99);
}

TEST(ProgressText, LineWithEtaOrWithout) {
  EXPECT_EQ(ProgressMeter::text("", 0.35, "7 of 20 points", 6, 13.0),
            "35%, 7 of 20 points, 6 s elapsed, ETA 13 s");
  EXPECT_EQ(ProgressMeter::text("step ", 0.02, "1.0 M events, 1.0 M events/s", 1, std::nullopt),
            "step 2%, 1.0 M events, 1.0 M events/s, 1 s elapsed, ETA unknown");
}

TEST(ProgressText, FilesWrittenNamedOrCounted) {
  EXPECT_EQ(files_text({"r.json"}, "r.*"), "r.json");
  EXPECT_EQ(files_text({"t.rank0.json", "t.rank8.json", "t.rank9.json"}, "t.rank*.json"),
            "t.rank0.json, t.rank8.json, t.rank9.json");
  const std::vector<std::string> many(64, "d/n.0.et");
  EXPECT_EQ(files_text(many, "d/n.*.et"), "64 files d/n.*.et");
}

TEST(ProgressText, StepWorkAsEstimated) {
  workloads::StepWork work;
  work.ranks = 16384;
  work.tasks_per_rank = 7475;
  EXPECT_EQ(step_work_text(work), "simulating 16,384 ranks x 7,475 tasks (122.5 M tasks)");
}

// Off a terminal: a line every kLineInterval, the first one interval after
// the start, so that work that ends sooner prints nothing.
TEST(StatusLine, OffATerminalOneLineEveryFiveSeconds) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim run", StatusMode::kLines, clock.now());
  CountMeter meter(line, 10, "points");
  for (int done = 0; done < 5; ++done) {
    clock.at(0.9 * done);
    meter.update(done);
  }
  EXPECT_EQ(err.str(), "");
  clock.at(5);
  meter.update(5);
  // 5 points in the 5 s since the first report (at 0 points): 5 s to go.
  EXPECT_EQ(err.str(), "clustersim run: 50%, 5 of 10 points, 5 s elapsed, ETA 5 s\n");
  clock.at(9.9);
  meter.update(6);
  EXPECT_EQ(err.str(), "clustersim run: 50%, 5 of 10 points, 5 s elapsed, ETA 5 s\n");
  clock.at(10);
  meter.update(7);
  clock.at(12.5);
  meter.finish(10);
  EXPECT_EQ(err.str(),
            "clustersim run: 50%, 5 of 10 points, 5 s elapsed, ETA 5 s\n"
            "clustersim run: 70%, 7 of 10 points, 10 s elapsed, ETA 4 s\n"
            "clustersim run: 100%, 10 points in 13 s\n");
}

TEST(StatusLine, ShortWorkPrintsNothing) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim run", StatusMode::kLines, clock.now());
  EngineMeter meter(line);
  clock.at(4.9);
  meter(workloads::EngineProgress{1 << 20, 900, 1000});
  meter.finish(1'200'000);
  EXPECT_EQ(err.str(), "");
}

// On a terminal: one line redrawn ("\r") twice a second, padded over a
// longer previous one, ended by the last line or by a note.
TEST(StatusLine, OnATerminalOneLineRedrawn) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim sweep", StatusMode::kTerminal, clock.now());
  CountMeter meter(line, 100, "points");
  meter.update(0);
  clock.at(0.4);
  meter.update(10);
  EXPECT_EQ(err.str(), "");
  clock.at(0.6);
  meter.update(10);
  const std::string first = "clustersim sweep: 10%, 10 of 100 points, 1 s elapsed, ETA 5 s";
  EXPECT_EQ(err.str(), "\r" + first);
  clock.at(1.2);
  meter.update(20);
  const std::string second = "clustersim sweep: 20%, 20 of 100 points, 1 s elapsed, ETA 5 s";
  EXPECT_EQ(err.str(), "\r" + first + "\r" + second);
  line.note("wrote out.csv");
  EXPECT_EQ(err.str(), "\r" + first + "\r" + second + "\nclustersim sweep: wrote out.csv\n");
}

TEST(StatusLine, ARedrawnLineIsPaddedOverALongerOne) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "c", StatusMode::kTerminal, clock.now());
  clock.at(1);
  ASSERT_TRUE(line.due());
  line.show("long text");
  clock.at(2);
  ASSERT_TRUE(line.due());
  line.show("short");
  line.finish("done");
  EXPECT_EQ(err.str(), "\rc: long text\rc: short    \rc: done \n");
}

TEST(StatusLine, QuietPrintsNothing) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim run", StatusMode::kQuiet, clock.now());
  EngineMeter meter(line);
  EXPECT_FALSE(meter.callback());  // the engine is not even asked
  line.note("simulating 8 ranks x 4 tasks (32 tasks)");
  for (int s = 1; s <= 20; ++s) {
    clock.at(s);
    meter(workloads::EngineProgress{uint64_t{1} << 20, s, 100});
  }
  meter.finish(123);
  line.note("wrote r.json");
  EXPECT_EQ(err.str(), "");
}

// The engine's operations done of its total are the percentage; the ETA
// is the rate since the first report, which leaves out the setup before it.
TEST(EngineMeter, PercentOfOperationsAndEtaFromTheMeasuredRate) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim run", StatusMode::kLines, clock.now());
  EngineMeter meter(line);
  clock.at(2);  // two seconds building the step
  meter(workloads::EngineProgress{1'000'000, 100, 1000});
  clock.at(6);
  meter(workloads::EngineProgress{5'000'000, 450, 1000});
  // 350 operations in 4 s: 550 more take 6.3 s (not the 7.3 s of 450 in 6 s).
  EXPECT_EQ(err.str(),
            "clustersim run: 45%, 5.0 M events, 833.3 k events/s, 6 s elapsed, ETA 6 s\n");
  clock.at(30);
  meter(workloads::EngineProgress{20'000'000, 1000, 1000});  // all done, not yet finished
  meter.finish(21'000'000);
  EXPECT_EQ(err.str(),
            "clustersim run: 45%, 5.0 M events, 833.3 k events/s, 6 s elapsed, ETA 6 s\n"
            "clustersim run: 99%, 20.0 M events, 666.7 k events/s, 30 s elapsed, ETA 0 s\n"
            "clustersim run: 100%, 21.0 M events in 30 s\n");
}

// A fraction reported lower than before (a sum of credits rounding down)
// never takes the percentage back.
TEST(ProgressMeter, NeverGoesBack) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "c", StatusMode::kLines, clock.now());
  CountMeter meter(line, 10, "points");
  meter.update(0, 0.0);
  clock.at(1);
  meter.update(3, 0.30);
  clock.at(5);
  meter.update(3, 0.29999999);
  EXPECT_EQ(err.str(), "c: 30%, 3 of 10 points, 5 s elapsed, ETA 12 s\n");
}

TEST(CountMeter, AnUpperBoundIsSaid) {
  FakeClock clock;
  std::ostringstream err;
  StatusLine line(err, "clustersim validate", StatusMode::kLines, clock.now());
  CountMeter meter(line, 98, "steps", /*at_most=*/true);
  clock.at(5);
  meter.update(12);
  EXPECT_EQ(err.str(), "clustersim validate: 12%, 12 of at most 98 steps, 5 s elapsed, ETA 36 s\n");
}

}  // namespace
}  // namespace clustersim::cli
