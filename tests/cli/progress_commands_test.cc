// What the commands print on stderr besides errors (cli/progress.h), end to
// end: every file written is named ("clustersim run: wrote FILE"), --quiet
// silences it, stdout and the files are the same bytes either way, and a
// large step's estimate comes before it runs. Progress lines themselves are
// timed (every 5 s off a terminal) and tested with a clock in
// progress_test.cc; these commands end sooner and print none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands.h"
#include "config/text_fields.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

const std::string kScenarios = CLUSTERSIM_SOURCE_DIR "/scenarios/";
const std::string kSmall = kScenarios + "llama3_8b_fsdp_8xh100.yaml";  // 8 GPUs, ~1,700 events

// `args` with --quiet added.
std::vector<std::string> quiet(std::vector<std::string> args) {
  args.emplace_back("--quiet");
  return args;
}

// The text without its lines naming `key` (wall_s, the wall time).
std::string without(const std::string& text, std::string_view key) {
  std::string kept;
  for (const auto& line : sim::split_lines(text)) {
    if (line.text.find(key) == std::string_view::npos) kept += std::string(line.text) + "\n";
  }
  return kept;
}

TEST(FilesWritten, RunNamesItsJsonAndTraceAndQuietSilencesThem) {
  const ScratchDir dir;
  const std::string json = dir.file("r.json");
  const std::string trace = dir.file("t.json");
  const std::vector<std::string> args = {"run",     kSmall, "--json",        json,
                                         "--trace", trace,  "--no-wall-time"};
  const Outcome loud = run(args);
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(loud.err, "clustersim run: wrote " + json + "\nclustersim run: wrote " + trace + "\n");
  const std::string json_loud = read_all(json);
  const std::string trace_loud = read_all(trace);

  const Outcome silent = run(quiet(args));
  ASSERT_EQ(silent.code, 0) << silent.err;
  EXPECT_EQ(silent.err, "");
  // The same results whatever stderr says.
  EXPECT_EQ(silent.out, loud.out);
  EXPECT_EQ(without(read_all(json), "\"wall_s\""), without(json_loud, "\"wall_s\""));
  EXPECT_EQ(read_all(trace), trace_loud);
}

TEST(FilesWritten, KinetoTracesOfSeveralRanksAreCounted) {
  const ScratchDir dir;
  const std::string trace = dir.file("k.json");
  const Outcome r = run({"run", kSmall, "--trace", trace, "--trace-format", "kineto",
                         "--trace-ranks", "0-4", "--no-wall-time"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "clustersim run: wrote 5 files " + dir.file("k.rank*.json") + "\n");
}

TEST(FilesWritten, ReplayNamesItsJson) {
  const ScratchDir dir;
  ASSERT_EQ(run({"export-chakra", kSmall, "-o", dir.path(), "--prefix", "p", "--quiet"}).code, 0);
  const std::string json = dir.file("replay.json");
  const std::vector<std::string> args = {"replay", kSmall, "--trace",       dir.file("p"),
                                         "--json", json,   "--no-wall-time"};
  const Outcome loud = run(args);
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(loud.err, "clustersim replay: wrote " + json + "\n");
  const Outcome silent = run(quiet(args));
  EXPECT_EQ(silent.err, "");
  EXPECT_EQ(silent.out, loud.out);
}

TEST(FilesWritten, CampaignNamesItsJsonAndCsv) {
  const ScratchDir dir;
  const std::string scenario =
      dir.write("c.yaml", "name: c\nhardware: " + kScenarios +
                              "hardware/h100.yaml\ncluster:\n  nodes: 8\n  node: hgx_h100\n"
                              "workload:\n  model: llama3-8b\n  seq_len: 4096\n  local_batch: 1\n"
                              "failures:\n  job_mtbf: 2h\nrecovery:\n  checkpoint_interval: 20min\n"
                              "campaign:\n  duration: 2d\n  trials: 8\n  step_time: 5s\n");
  const std::string json = dir.file("c.json");
  const std::string csv = dir.file("c.csv");
  const std::vector<std::string> args = {"campaign",  scenario, "--json",        json, "--csv", csv,
                                         "--threads", "2",      "--no-wall-time"};
  const Outcome loud = run(args);
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(loud.err,
            "clustersim campaign: wrote " + json + "\nclustersim campaign: wrote " + csv + "\n");
  const std::string csv_loud = read_all(csv);
  const Outcome silent = run(quiet(args));
  EXPECT_EQ(silent.err, "");
  EXPECT_EQ(silent.out, loud.out);
  EXPECT_EQ(read_all(csv), csv_loud);
}

TEST(FilesWritten, SweepNamesItsCsvTheSameBytesQuietOrNot) {
  const ScratchDir dir;
  const std::string csv = dir.file("s.csv");
  const std::vector<std::string> args = {
      "sweep", kSmall, "--grid", "workload.local_batch=1,2", "-o", csv, "--no-wall-time"};
  const Outcome loud = run(args);
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(loud.err, "clustersim sweep: wrote " + csv + "\n");
  const std::string csv_loud = read_all(csv);
  const Outcome silent = run(quiet(args));
  EXPECT_EQ(silent.err, "");
  EXPECT_EQ(silent.out, loud.out);
  EXPECT_EQ(read_all(csv), csv_loud);
}

TEST(FilesWritten, TheOtherCommandsNameTheirFilesToo) {
  const ScratchDir dir;
  const std::string runs =
      dir.write("runs.csv",
                "id,scenario,overrides,tokens_per_s_per_gpu,memory_gib,source\n"
                "r," +
                    kScenarios + "published/tt_8b_h100.yaml,,5000,,test\n");
  const struct {
    std::vector<std::string> args;
    std::string file;
  } cases[] = {
      {{"kernels", kSmall, "-o", dir.file("k.txt")}, dir.file("k.txt")},
      {{"topo", kSmall, "--dot", dir.file("t.dot")}, dir.file("t.dot")},
      {{"collective", kSmall, "--max-bytes", "1MiB", "--csv", dir.file("c.csv")},
       dir.file("c.csv")},
      {{"calibrate", kScenarios + "measurements/compute/gemm.csv", "--base",
        kScenarios + "hardware/h100.yaml", "-o", dir.file("p.yaml")},
       dir.file("p.yaml")},
      {{"validate", runs, "--csv", dir.file("v.csv")}, dir.file("v.csv")},
  };
  for (const auto& c : cases) {
    const Outcome loud = run(c.args);
    ASSERT_EQ(loud.code, 0) << c.args[0] << ": " << loud.err;
    EXPECT_EQ(loud.err, "clustersim " + c.args[0] + ": wrote " + c.file + "\n");
    const Outcome silent = run(quiet(c.args));
    EXPECT_EQ(silent.err, "") << c.args[0];
  }
}

// A step of 20 M tasks x ranks or more is announced before it runs; a
// smaller one (every test above) is not.
TEST(Estimate, ALargeStepIsAnnouncedBeforeItRuns) {
  const Outcome r = run({"run", kScenarios + "llama3_70b_hsdp_256xh100.yaml", "--set",
                         "cluster.nodes=128", "--no-wall-time"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "clustersim run: simulating 1,024 ranks x 21,208 tasks (21.7 M tasks)\n");
  EXPECT_NE(r.out.find("21208 tasks per rank"), std::string::npos) << r.out;
}

// A sweep's estimate is the sum over its points to simulate.
TEST(Estimate, ASweepOfLargeStepsIsAnnouncedWithItsPoints) {
  const Outcome r = run({"sweep", kScenarios + "llama3_70b_hsdp_256xh100.yaml", "--grid",
                         "seed=1,2,3,4", "--threads", "2", "--no-wall-time"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "clustersim sweep: simulating 4 points on 2 threads, 21.7 M tasks in all\n");
}

// Every command that may run long or writes files takes --quiet.
TEST(Quiet, EveryCommandThatReportsTakesIt) {
  std::vector<std::string> with;
  for (const CommandSpec& spec : command_specs()) {
    for (const OptionSpec& o : spec.options) {
      if (o.name == "--quiet") with.push_back(spec.name);
    }
  }
  EXPECT_EQ(with, (std::vector<std::string>{"describe-config", "run", "import", "campaign", "sweep",
                                            "topo", "collective", "validate", "calibrate",
                                            "kernels", "export-chakra", "replay"}));
}

}  // namespace
}  // namespace clustersim::cli
