// The sweep runner without the command: rows in grid order, the HSDP group
// size derived, the journal written as points finish and read back on
// resume, and the rows of other ranks gathered at rank 0.
#include "sweep/sweep_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "sweep/sweep_journal.h"
#include "sweep/sweep_points.h"
#include "sweep/sweep_rows.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::read_all;
using test_support::ScratchDir;

const char* const kScenario = CLUSTERSIM_SOURCE_DIR "/tests/scripts/sweep_small.yaml";

SweepSettings settings_of(const std::string& output) {
  SweepSettings s;
  s.path = kScenario;
  s.threads = 2;
  s.output = output;
  return s;
}

SweepOutcome sweep(const SweepSettings& s, const SweepRanks& ranks) {
  const SweepScenario scenario = load_sweep_scenario(s);
  return run_sweep(s, scenario, scenario_sweep_axes(scenario.values, scenario.schema), ranks,
                   nullptr);
}

// The status column of each row.
std::vector<std::string> statuses(const SweepOutcome& outcome) {
  std::vector<std::string> out;
  for (const std::string& row : outcome.rows) out.push_back(csv_split(row)[2 + kStatus]);
  return out;
}

// The tally a progress line is drawn from: the points to simulate and their
// estimated work first, then after each point; the work done grows to 1 and
// weighs each point by its estimated tasks x ranks, not its count (here 8,
// 16 and 32 ranks of one schedule: 1/7, 3/7, 1 rather than 1/3, 2/3, 1).
TEST(SweepRunner, ProgressTalliesThePointsWeighedByTheirWork) {
  SweepSettings s = settings_of("");
  s.threads = 1;  // the points finish in grid order
  const SweepScenario scenario = load_sweep_scenario(s);
  const std::vector<SweepAxis> axes = {*parse_sweep_axis("cluster.nodes=1,2,4").value};
  std::vector<SweepTally> seen;
  const SweepOutcome outcome = run_sweep(s, scenario, axes, SingleProcess(),
                                         [&seen](const SweepTally& t) { seen.push_back(t); });
  ASSERT_EQ(seen.size(), 4u);  // before the 3 points, then after each
  EXPECT_EQ(seen[0].points_done, 0u);
  EXPECT_EQ(seen[0].work_done, 0.0);
  const int64_t per_rank = seen[0].task_timelines / (8 + 16 + 32);
  EXPECT_EQ(seen[0].task_timelines, per_rank * (8 + 16 + 32));
  EXPECT_GT(per_rank, 100);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].points, 3u);
    EXPECT_EQ(seen[i].points_done, i);
    EXPECT_EQ(seen[i].task_timelines, seen[0].task_timelines);
  }
  EXPECT_NEAR(seen[1].work_done, 1.0 / 7, 1e-12);
  EXPECT_NEAR(seen[2].work_done, 3.0 / 7, 1e-12);
  EXPECT_EQ(seen[3].work_done, 1.0);
  // Watching changes no row.
  EXPECT_EQ(outcome.rows, run_sweep(s, scenario, axes, SingleProcess(), nullptr).rows);
}

TEST(SweepRunner, DivisorsTimesTpInGridOrderWithTheReplicaSizeDerived) {
  // 16 GPUs: shard = every divisor of 16 / tp, for tp 1, 2 and 3 (3 does not
  // divide 16: one skipped point for it).
  const SweepOutcome outcome = sweep(settings_of(""), SingleProcess());
  ASSERT_EQ(outcome.points.size(), 10u);
  EXPECT_TRUE(outcome.header_line.starts_with(
      "workload.parallelism.shard_group_size,workload.parallelism.tp,status,reason,"))
      << outcome.header_line;
  EXPECT_EQ(outcome.resumed, 0u);
  const std::vector<std::string> s = statuses(outcome);
  EXPECT_EQ(std::count(s.begin(), s.end(), "ok"), 9);
  EXPECT_EQ(outcome.rows[0].substr(0, 12), ",3,skipped,\"");
  EXPECT_EQ(outcome.points[1].values, (std::vector<std::string>{"1", "1"}));
}

TEST(SweepRunner, ResumeKeepsTheJournalsRowsAndWritesTheSameCsv) {
  const ScratchDir dir;
  const SweepSettings clean = settings_of(dir.file("clean.csv"));
  const SweepOutcome full = sweep(clean, SingleProcess());
  write_sweep_csv(clean, full);
  EXPECT_FALSE(std::filesystem::exists(clean.journal_path()));

  SweepSettings resumed = settings_of(dir.file("out.csv"));
  resumed.resume = true;
  const std::string first = "# clustersim sweep partial v1; points 10; " + full.header_line;
  // Point 3 kept verbatim (even tampered: copied, not recomputed), point 5
  // cut by the interruption.
  const std::string tampered = full.rows[3] + "x";
  dir.write("out.csv.partial", first + "\n3," + tampered + "\n5," + full.rows[5].substr(0, 4));
  SweepOutcome outcome = sweep(resumed, SingleProcess());
  std::vector<std::string> want = full.rows;
  want[3] = tampered;
  EXPECT_EQ(outcome.rows, want);

  dir.write("out.csv.partial", first + "\n3," + full.rows[3] + "\n5,");
  outcome = sweep(resumed, SingleProcess());
  EXPECT_EQ(outcome.resumed, 1u);
  EXPECT_EQ(outcome.rows, full.rows);
  // The journal holds the resumed row first, then every simulated one.
  const std::string journal = read_all(resumed.journal_path());
  EXPECT_EQ(journal.substr(0, first.size() + 3), first + "\n3,");
  EXPECT_EQ(std::count(journal.begin(), journal.end(), '\n'), 1 + 1 + 8);

  // A journal of another grid is refused at its first line.
  dir.write("out.csv.partial", "# clustersim sweep partial v1; points 3; a,b\n");
  EXPECT_THROW(sweep(resumed, SingleProcess()), sim::ConfigError);
  write_sweep_csv(resumed, outcome);
  EXPECT_EQ(read_all(resumed.output), read_all(clean.output));
}

// Rank 0 of two: it simulates every other point and receives the rest, as
// another rank would send them, through gather.
class RankZeroOfTwo final : public SweepRanks {
 public:
  explicit RankZeroOfTwo(std::string theirs) : theirs_(std::move(theirs)) {}
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string broadcast(const std::string& from_root) const override { return from_root; }
  std::vector<std::string> gather(const std::string& mine) const override {
    return {mine, theirs_};
  }
  bool distributed() const override { return true; }
  void fail(const std::exception_ptr&) const override {}

 private:
  std::string theirs_;
};

TEST(SweepRunner, RankZeroTakesEverySecondPointAndGathersTheOthers) {
  const SweepOutcome full = sweep(settings_of(""), SingleProcess());
  // Points to simulate are 1..9 (0 is skipped at once); rank 1 has every
  // second of them: 2, 4, 6, 8.
  std::string theirs;
  for (const size_t i : {2, 4, 6, 8}) theirs += journal_line(i, full.rows[i]);
  const SweepOutcome outcome = sweep(settings_of(""), RankZeroOfTwo(theirs));
  EXPECT_EQ(outcome.rows, full.rows);
  const SweepOutcome alone = sweep(settings_of(""), RankZeroOfTwo(""));
  EXPECT_EQ(alone.rows[2], "");
  EXPECT_EQ(alone.rows[3], full.rows[3]);
}

}  // namespace
}  // namespace clustersim::cli
