#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "config/text_fields.h"
#include "tests/support/json_value.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim {
namespace {

using test_support::Outcome;
using test_support::parse_json;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

const std::string kHardware = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml";
const char* const kShard = "workload.parallelism.shard_group_size";
const char* const kReplica = "workload.parallelism.replica_group_size";

// 16 H100 (2 nodes), a 1.3B Llama-style model, HSDP. The file's replica
// group size (2) is dropped when the shard size is swept, so that it is
// derived. Points: shard 4, 3 (does not divide 16: skipped), 16; local batch
// 1 (fits) and 32 (out of memory).
std::string scenario(const std::string& axes) {
  return "name: sweep_small\nhardware: " + kHardware +
         "\ncluster:\n  nodes: 2\n  node: hgx_h100\n"
         "workload:\n  model: custom\n  custom_model:\n    layers: 16\n    hidden: 2048\n"
         "    heads: 16\n    kv_heads: 8\n    ffn_hidden: 5632\n    vocab: 32000\n"
         "    activation: swiglu\n  seq_len: 4096\n  local_batch: 1\n"
         "  parallelism:\n    strategy: HYBRID_SHARD\n    replica_group_size: 2\n"
         "sweep:\n  axes: \"" +
         axes + "\"\n";
}
const std::string kAxes = std::string(kShard) + "=4,3,16; workload.local_batch=1,32";

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : sim::split_lines(text)) {
    if (line.text.empty()) continue;
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for (const char c : line.text) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    fields.push_back(field);
    rows.push_back(fields);
  }
  return rows;
}

TEST(SweepCommand, RowsAreWhatRunGivesForTheSameOverrides) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  const std::string csv = dir.file("out.csv");
  const Outcome r = run({"sweep", path, "-o", csv, "--threads", "2"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto rows = csv_rows(read_all(csv));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{kShard,
                                               "workload.local_batch",
                                               "status",
                                               "reason",
                                               "step_time_s",
                                               "tokens_per_s_per_gpu",
                                               "tflops_per_gpu",
                                               "mfu",
                                               "peak_memory_bytes",
                                               "fits_in_memory",
                                               "exposed_comm_s",
                                               "compute_s",
                                               "exposed_all_gather_s",
                                               "exposed_reduce_scatter_s",
                                               "exposed_all_reduce_s",
                                               "exposed_tp_s",
                                               "exposed_cp_s",
                                               "exposed_pcie_s",
                                               "pipeline_bubble_s",
                                               "sync_wait_s",
                                               "launch_bound_s",
                                               "idle_s",
                                               "tokens_per_joule_gpu",
                                               "tokens_per_joule_system"}));
  const std::vector<std::vector<std::string>> expect = {
      {"4", "1", "ok"},      {"4", "32", "out_of_memory"},
      {"3", "1", "skipped"}, {"3", "32", "skipped"},
      {"16", "1", "ok"},     {"16", "32", "out_of_memory"}};
  for (size_t i = 0; i < expect.size(); ++i) {
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), 24u);
    EXPECT_EQ(row[0], expect[i][0]);
    EXPECT_EQ(row[1], expect[i][1]);
    EXPECT_EQ(row[2], expect[i][2]) << row[3];
    if (row[2] == "skipped") {
      EXPECT_EQ(row[3],
                std::string(kShard) + ": expected a divisor of 16 = world_size 16 / tp 1, found 3");
      for (size_t c = 4; c < row.size(); ++c) EXPECT_EQ(row[c], "");
      continue;
    }
    EXPECT_EQ(row[9], row[2] == "ok" ? "true" : "false");
    // `run` with the same overrides (the replica size the sweep derived,
    // 16 / shard, given explicitly).
    const int shard = std::stoi(row[0]);
    const std::string json = dir.file("run.json");
    const Outcome one = run({"run", path, "--set", std::string(kShard) + "=" + row[0], "--set",
                             std::string(kReplica) + "=" + std::to_string(16 / shard), "--set",
                             "workload.local_batch=" + row[1], "--allow-oom", "--json", json});
    ASSERT_EQ(one.code, cli::kExitOk) << one.err;
    const auto report = parse_json(read_all(json));
    EXPECT_EQ(std::stod(row[4]), report["step_time_s"].number);
    EXPECT_EQ(std::stod(row[5]), report["tokens_per_s_per_gpu"].number);
    EXPECT_EQ(std::stod(row[6]), report["tflops_per_gpu"].number);
    EXPECT_EQ(std::stod(row[7]), report["mfu"].number);
    EXPECT_EQ(std::stod(row[8]), report["peak_memory_bytes"].number);
    EXPECT_EQ(row[9] == "true", report["fits_in_memory"].boolean);
    EXPECT_EQ(std::stod(row[10]), report["exposed_comm_s"].number);
    // Where the step went, as run's breakdown has it, parts summing to the step.
    double parts = 0;
    for (size_t c = 11; c < 22; ++c) {
      EXPECT_EQ(std::stod(row[c]), report["breakdown"][rows[0][c]].number) << rows[0][c];
      parts += std::stod(row[c]);
    }
    EXPECT_NEAR(parts, std::stod(row[4]), 1e-9 * std::stod(row[4]));
  }
  // The ranked table: the fitting points first, best tokens/s first.
  EXPECT_NE(r.out.find("points: 6 (2 ok, 2 out of memory, 2 skipped)"), std::string::npos) << r.out;
  const size_t best = r.out.find("\n1 ");
  ASSERT_NE(best, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(best, 24), "\n1                16    ");
  EXPECT_FALSE(std::filesystem::exists(csv + ".partial"));
}

// A point whose forced algorithm some group cannot run is skipped with the
// tuner's reason at the key, the others run, and --resume keeps it.
// YAML users write a grid as a mapping of keys to lists; the error says the
// axes are one string, and how it reads.
TEST(SweepCommand, AMappingOfAxesGetsTheAxesSyntaxInItsError) {
  const ScratchDir dir;
  std::string text = scenario(kAxes);
  text = text.substr(0, text.find("sweep:")) + "sweep:\n  workload.local_batch: [1, 2]\n";
  const std::string path = dir.write("s.yaml", text);
  const auto r = run({"sweep", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("s.yaml:22:3: error: sweep.workload.local_batch: unknown key; expected "
                       "one of: axes (in section 'sweep'); the axes are one string: `axes: "
                       "workload.local_batch=1,2; workload.seq_len=4096,8192`"),
            std::string::npos)
      << r.err;
}

TEST(SweepCommand, APointTheTunerRejectsIsSkippedAndTheOthersRun) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("collectives.algorithm=ring,tree,nvls"));
  const std::string csv = dir.file("out.csv");
  const Outcome r = run({"sweep", path, "-o", csv, "--threads", "2", "--no-wall-time"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto rows = csv_rows(read_all(csv));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][0], "ring");
  EXPECT_EQ(rows[1][1], "ok") << rows[1][2];
  EXPECT_GT(std::stod(rows[1][3]), 0.0);
  // HSDP on 16 GPUs, replica groups of 2: shard groups of 8 in a node.
  const std::string tree_reason =
      "collectives.algorithm: no valid way to run all_gather on 8 ranks (1 nodes) with "
      "algorithm tree: tree runs only all_reduce (not all_gather) (the FSDP shard group of the "
      "step)";
  const std::string nvls_reason =
      "collectives.algorithm: no valid way to run all_gather on 8 ranks (1 nodes) with "
      "algorithm nvls: nvls is modelled only for all_reduce (not all_gather) (the FSDP shard "
      "group of the step)";
  std::vector<std::string> tree_row = {"tree", "skipped", tree_reason};
  std::vector<std::string> nvls_row = {"nvls", "skipped", nvls_reason};
  tree_row.resize(23, "");  // the axis, then 22 figures of which only status and reason
  nvls_row.resize(23, "");
  EXPECT_EQ(rows[2], tree_row);
  EXPECT_EQ(rows[3], nvls_row);
  EXPECT_NE(r.out.find("points: 3 (1 ok, 0 out of memory, 2 skipped)\nskipped:\n"
                       "  collectives.algorithm=tree: " +
                       tree_reason + "\n  collectives.algorithm=nvls: " + nvls_reason + "\n"),
            std::string::npos)
      << r.out;
  // The ring point is what `run` gives with the same override.
  const std::string json = dir.file("run.json");
  const Outcome one = run({"run", path, "--set", "collectives.algorithm=ring", "--json", json});
  ASSERT_EQ(one.code, cli::kExitOk) << one.err;
  EXPECT_EQ(std::stod(rows[1][3]), parse_json(read_all(json))["step_time_s"].number);

  // Resumed from a journal holding the skipped rows only: the same CSV.
  const std::string whole = read_all(csv);
  const auto lines = sim::split_lines(whole);
  dir.write("out.csv.partial",
            "# clustersim sweep partial v1; points 3; " + std::string(lines[0].text) + "\n2," +
                std::string(lines[3].text) + "\n1," + std::string(lines[2].text) + "\n");
  const Outcome resumed = run({"sweep", path, "-o", csv, "--resume", "--no-wall-time"});
  ASSERT_EQ(resumed.code, cli::kExitOk) << resumed.err;
  EXPECT_NE(resumed.out.find("2 skipped; 2 resumed from " + csv + ".partial)"), std::string::npos)
      << resumed.out;
  EXPECT_EQ(read_all(csv), whole);
}

// A point over the work limit (issue 17) is skipped with the limit's words;
// the others run.
TEST(SweepCommand, APointOverTheTaskLimitIsSkipped) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("workload.grad_accum=1,4"));
  const std::string csv = dir.file("out.csv");
  const Outcome r = run({"sweep", path, "-o", csv, "--max-tasks-per-rank", "2000", "--no-wall-time"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto rows = csv_rows(read_all(csv));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1], "ok") << rows[1][2];
  EXPECT_EQ(rows[2][1], "skipped");
  EXPECT_EQ(rows[2][2].rfind("workload.grad_accum: expected at most 2,000 tasks per rank "
                             "(--max-tasks-per-rank raises the limit), found 4 micro-batches, "
                             "about ",
                             0),
            0u)
      << rows[2][2];
}

// --fitting-only: the point that does not fit (local batch 32) is skipped,
// not simulated, with the peak the plain sweep's out_of_memory row reports;
// the point that fits is the same row as without the flag.
TEST(SweepCommand, FittingOnlySkipsThePointThatDoesNotFitWithItsPeak) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("workload.local_batch=1,32"));
  const std::string all = dir.file("all.csv");
  const std::string fitting = dir.file("fitting.csv");
  ASSERT_EQ(run({"sweep", path, "-o", all, "--no-wall-time"}).code, cli::kExitOk);
  const Outcome r = run({"sweep", path, "-o", fitting, "--fitting-only", "--no-wall-time"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto plain = csv_rows(read_all(all));
  const auto rows = csv_rows(read_all(fitting));
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_EQ(rows[1], plain[1]);
  ASSERT_EQ(plain[2][1], "out_of_memory");
  EXPECT_EQ(rows[2][1], "skipped");
  const double gib = std::stod(plain[2][7]) / (1 << 30);
  char peak[32];
  std::snprintf(peak, sizeof peak, "%.2f", gib);
  EXPECT_EQ(rows[2][2], "does not fit in GPU memory (--fitting-only: not simulated): " +
                            std::string(peak) + " GiB per GPU against 79.65 GiB");
  EXPECT_EQ(rows[2][3], "");  // no step time
  EXPECT_EQ(rows[2][7], plain[2][7]);
  EXPECT_EQ(rows[2][8], "false");
  EXPECT_NE(r.out.find("1 skipped"), std::string::npos) << r.out;
}

TEST(SweepCommand, SameBytesForOneThreadAndTwo) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  std::string csvs[2];
  for (int t = 0; t < 2; ++t) {
    const std::string csv = dir.file("out" + std::to_string(t) + ".csv");
    const Outcome r = run({"sweep", path, "-o", csv, "--threads", std::to_string(t + 1), "--grid",
                           "workload.parallelism.tp=1,2", "--no-wall-time"});
    ASSERT_EQ(r.code, cli::kExitOk) << r.err;
    csvs[t] = read_all(csv);
  }
  EXPECT_EQ(csvs[0], csvs[1]);
  EXPECT_EQ(csv_rows(csvs[0]).size(), 13u);
}

TEST(SweepCommand, GridFlagReplacesTheAxisAndDivisorsDeriveTheReplicaSize) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  const std::string csv = dir.file("out.csv");
  const Outcome r = run(
      {"sweep", path, "-o", csv, "--grid", std::string(kShard) + "=divisors", "--no-wall-time"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto rows = csv_rows(read_all(csv));
  // The flag's axis takes the scenario's place (first); divisors of 16.
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0][0], kShard);
  const std::vector<std::string> shards = {"1", "1", "2", "2", "4", "4", "8", "8", "16", "16"};
  for (size_t i = 0; i < shards.size(); ++i) {
    EXPECT_EQ(rows[i + 1][0], shards[i]);
    EXPECT_NE(rows[i + 1][2], "skipped") << rows[i + 1][3];
  }
}

TEST(SweepCommand, BothGroupSizesSweptSkipsInconsistentPoints) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", scenario(std::string(kShard) + "=4,8; " + kReplica + "=2,4"));
  const std::string csv = dir.file("out.csv");
  const Outcome r = run({"sweep", path, "-o", csv, "--no-wall-time"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  const auto rows = csv_rows(read_all(csv));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1][2], "skipped");  // 4 x 2 = 8
  EXPECT_EQ(rows[2][2], "ok");       // 4 x 4 = 16
  EXPECT_EQ(rows[3][2], "ok");       // 8 x 2
  EXPECT_EQ(rows[4][2], "skipped");  // 8 x 4 = 32
  EXPECT_EQ(rows[4][3], std::string(kShard) +
                            ": shard_group_size 8 x replica_group_size 4 = 32, expected 16 = "
                            "world_size 16 / tp 1");
}

// Resume: the partial file an interrupted run leaves (its first line, then
// "INDEX,ROW" for the points finished, in any order, the last one possibly
// cut). Evidence that finished points are not recomputed: a value tampered
// in the partial file comes out verbatim in the final CSV.
TEST(SweepCommand, ResumeKeepsFinishedRowsAndGivesTheSameCsv) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  const std::string clean = dir.file("clean.csv");
  ASSERT_EQ(run({"sweep", path, "-o", clean}).code, cli::kExitOk);
  const std::string expected = read_all(clean);
  auto lines = sim::split_lines(expected);
  if (!lines.empty() && lines.back().text.empty()) lines.pop_back();
  ASSERT_EQ(lines.size(), 7u);
  const std::string first =
      "# clustersim sweep partial v1; points 6; " + std::string(lines[0].text) + "\n";

  // Points 4 and 0 finished (out of order), point 1 cut mid-line.
  const std::string csv = dir.file("out.csv");
  dir.write("out.csv.partial", first + "4," + std::string(lines[5].text) + "\n0," +
                                   std::string(lines[1].text) + "\n1," +
                                   std::string(lines[2].text.substr(0, 10)));
  Outcome r = run({"sweep", path, "-o", csv, "--resume", "--threads", "2"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  EXPECT_EQ(read_all(csv), expected);
  EXPECT_NE(r.out.find("2 resumed from"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(csv + ".partial"));

  // Tamper point 0's step time: copied, not recomputed.
  std::string row0(lines[1].text);
  const size_t at = row0.find(",ok,,") + 5;
  const std::string tampered = row0.substr(0, at) + "123" + row0.substr(row0.find(',', at));
  dir.write("out.csv.partial", first + "0," + tampered + "\n");
  r = run({"sweep", path, "-o", csv, "--resume"});
  ASSERT_EQ(r.code, cli::kExitOk) << r.err;
  std::string want = expected;
  want.replace(want.find(row0), row0.size(), tampered);
  EXPECT_EQ(read_all(csv), want);

  // Without --resume the partial file is started afresh.
  dir.write("out.csv.partial", first + "0," + tampered + "\n");
  ASSERT_EQ(run({"sweep", path, "-o", csv}).code, cli::kExitOk);
  EXPECT_EQ(read_all(csv), expected);
}

TEST(SweepCommand, ResumeRefusesAnotherSweepsPartialFile) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  const std::string csv = dir.file("out.csv");
  dir.write("out.csv.partial", "# clustersim sweep partial v1; points 2; a,b\n");
  Outcome r = run({"sweep", path, "-o", csv, "--resume"});
  EXPECT_EQ(r.code, cli::kExitError);
  EXPECT_NE(r.err.find("out.csv.partial:1:1: error: expected the partial results of this sweep"),
            std::string::npos)
      << r.err;
  // A row of another grid (point 0 is shard 4, local batch 1).
  ASSERT_EQ(run({"sweep", path, "-o", dir.file("clean.csv")}).code, cli::kExitOk);
  const std::string head(sim::split_lines(read_all(dir.file("clean.csv")))[0].text);
  dir.write("out.csv.partial", "# clustersim sweep partial v1; points 6; " + head +
                                   "\n0,8,1,ok,,1,1,1,1,1,true,1,1,0,0,0,0,0,0,0,0,0,0,,\n");
  r = run({"sweep", path, "-o", csv, "--resume"});
  EXPECT_EQ(r.code, cli::kExitError);
  EXPECT_NE(r.err.find(":2:1: error: expected point 0 of this sweep (4,1)"), std::string::npos)
      << r.err;
}

TEST(SweepCommand, BadGridsAreUsageErrorsNamingTheFlagOrKey) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario(kAxes));
  Outcome r = run({"sweep", path, "--grid", "workload.parallelism.tp=1..8"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("option '--grid' expects KEY=V1,V2,...: workload.parallelism.tp: expected "
                       "a step after the range '1..8'"),
            std::string::npos)
      << r.err;
  r = run({"sweep", path, "--grid", "workload.parallelism.tpx=1,2"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("did you mean 'workload.parallelism.tp'?"), std::string::npos) << r.err;
  r = run({"sweep", path, "--set", "workload.local_batch=2"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("key 'workload.local_batch' is both swept and set"), std::string::npos);
  r = run({"sweep", path, "--resume"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  r = run({"sweep", path, "--threads", "0"});
  EXPECT_EQ(r.code, cli::kExitUsage);

  // In the file: `check` points at the line of sweep.axes.
  const std::string bad = dir.write("bad.yaml", scenario("workload.local_batch=1..4:x1"));
  r = run({"check", bad});
  EXPECT_EQ(r.code, cli::kExitError);
  EXPECT_NE(r.err.find("bad.yaml:22:9: error: sweep.axes: expected axes as KEY=ITEM"),
            std::string::npos)
      << r.err;
  const std::string none = dir.write("none.yaml", scenario(""));
  r = run({"sweep", none});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_NE(r.err.find("expected axes to sweep"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace clustersim

namespace clustersim {
namespace {

// --campaign: each point's ETTR and time to train are what `campaign` gives
// for the same overrides and trials (20 by default), on any thread count.
TEST(SweepCommandCampaign, FiguresAreWhatCampaignGives) {
  const ScratchDir dir;
  const std::string path = dir.write(
      "s.yaml",
      scenario(std::string(kShard) + "=8,16; recovery.policy=checkpoint_restart,ft_hsdp") +
          "failures:\n  job_mtbf: 2h\nrecovery:\n  checkpoint_interval: 20min\n"
          "campaign:\n  duration: 7d\n  tokens: 5e10\n");
  std::string csvs[2];
  for (int t = 0; t < 2; ++t) {
    const std::string csv = dir.file("out" + std::to_string(t) + ".csv");
    const Outcome r = run({"sweep", path, "--campaign", "-o", csv, "--threads",
                           std::to_string(t + 1), "--no-wall-time"});
    ASSERT_EQ(r.code, cli::kExitOk) << r.err;
    EXPECT_NE(r.out.find("best by tokens/s per GPU x ETTR"), std::string::npos) << r.out;
    csvs[t] = read_all(csv);
  }
  EXPECT_EQ(csvs[0], csvs[1]);
  const auto rows = csv_rows(csvs[0]);
  ASSERT_EQ(rows.size(), 5u);
  ASSERT_EQ(rows[0].size(), 26u);
  EXPECT_EQ(rows[0][24], "ettr_mean");
  EXPECT_EQ(rows[0][25], "time_to_train_days");
  // shard 16 leaves one replica group: nothing for ft_hsdp to fall back on.
  EXPECT_EQ(rows[4][2], "skipped");
  EXPECT_EQ(rows[4][3].substr(0, 54), "campaign: recovery.policy: ft_hsdp needs at least 2 re");
  for (size_t i = 1; i < 4; ++i) {
    const auto& row = rows[i];
    ASSERT_EQ(row[2], "ok") << row[3];
    const std::string json = dir.file("c.json");
    const int shard = std::stoi(row[0]);
    const Outcome one =
        run({"campaign", path, "--set", std::string(kShard) + "=" + row[0], "--set",
             std::string(kReplica) + "=" + std::to_string(16 / shard), "--set",
             "recovery.policy=" + row[1], "--set", "campaign.trials=20", "--json", json});
    ASSERT_EQ(one.code, cli::kExitOk) << one.err;
    const auto report = parse_json(read_all(json));
    EXPECT_EQ(std::stod(row[24]), report["ettr_mean"].number) << row[0] << " " << row[1];
    EXPECT_EQ(std::stod(row[25]), report["time_to_train_days"].number);
  }
  const Outcome bad = run({"sweep", path, "--trials", "5"});
  EXPECT_EQ(bad.code, cli::kExitUsage);
}

}  // namespace
}  // namespace clustersim
