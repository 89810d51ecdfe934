// `clustersim replay` end to end (run_clustersim in-process): traces written
// with the project's writer, the summary, JSON and Chrome trace, rank-file
// discovery and its errors, communicator groups, --scale-to, deadlocks, and
// export-chakra -> replay reproducing `run`.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/chakra/chakra_trace.h"
#include "cli/commands.h"
#include "tests/support/json_value.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

namespace chakra = workloads::chakra;
using test_support::JsonValue;
using test_support::Outcome;
using test_support::parse_json;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

constexpr const char* kH100 = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml";

std::string scenario(int nodes = 1, std::string_view workload = "") {
  return "name: replay_small\n"
         "hardware: " +
         std::string(kH100) + "\ncluster:\n  nodes: " + std::to_string(nodes) +
         "\n  node: hgx_h100\n" + std::string(workload);
}

bool contains(const std::string& text, std::string_view piece) {
  return text.find(piece) != std::string::npos;
}

std::string line_with(const std::string& text, std::string_view label) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(label)) return line;
  }
  return "";
}

chakra::Node kernel(uint64_t id, int64_t ns, std::vector<uint64_t> deps = {}) {
  chakra::Node n;
  n.id = id;
  n.name = "k" + std::to_string(id);
  n.type = static_cast<int32_t>(chakra::NodeType::kComp);
  n.duration_ns = ns;
  n.duration_micros = static_cast<uint64_t>(ns / 1000);
  n.num_ops = 1'000'000'000;
  n.ctrl_deps = std::move(deps);
  return n;
}

chakra::Node all_reduce(uint64_t id, int64_t bytes, const std::string& pg,
                        std::vector<uint64_t> deps = {}) {
  chakra::Node n;
  n.id = id;
  n.name = "ar" + std::to_string(id);
  n.type = static_cast<int32_t>(chakra::NodeType::kCommColl);
  n.comm_type = static_cast<int64_t>(chakra::CommType::kAllReduce);
  n.comm_size = bytes;
  n.pg_name = pg;
  n.data_deps = std::move(deps);
  return n;
}

// Rank r: a kernel of (100 + 50 r) us, an all-reduce of group "0", a kernel.
void write_ranks(const ScratchDir& dir, const std::string& name, int ranks,
                 const std::string& pg = "0") {
  for (int r = 0; r < ranks; ++r) {
    chakra::Trace t;
    t.version = "0.0.4";
    t.nodes = {kernel(0, (100 + 50 * r) * 1000), all_reduce(1, 8 << 20, pg, {0}),
               kernel(2, 20'000, {1})};
    chakra::write_trace_file(chakra::rank_trace_path(dir.file(name), r), t);
  }
}

TEST(ReplayCommand, HelpNamesEveryFlag) {
  const Outcome r = run({"replay", "--help"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* flag :
       {"--trace", "--comm-groups", "--ranks", "--scale-to", "--recompute-compute", "--max-events",
        "--tokens-per-gpu", "--set", "--json", "--trace-out", "--trace-ranks", "--no-wall-time"}) {
    EXPECT_TRUE(contains(r.out, flag)) << flag;
  }
  EXPECT_TRUE(contains(run({"--help"}).out, "  replay "));
}

TEST(ReplayCommand, SummaryOfTheRankFilesFound) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario());
  write_ranks(dir, "job", 4);
  const Outcome r =
      run({"replay", s, "--trace", dir.file("job"), "--no-wall-time", "--tokens-per-gpu", "2048"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* piece :
       {"# clustersim replay: ", "scenario                  replay_small\n",
        "GPUs                      8 (1 node x 8, hgx_h100), hardware profile "
        "h100\n",
        ".<rank>.et, 4 rank(s), up to 3 nodes per rank\n",
        "process groups            none (every process group is the whole "
        "world)\n",
        "trace form                standard (every pg_name and comm-group key is a number, or "
        "there are none)\n",
        "ranks                     4 (as traced)\n", "compute                   traced durations\n",
        "time per rank (mean)", "  sync wait ", "events simulated          "}) {
    EXPECT_TRUE(contains(r.out, piece)) << piece << "\n" << r.out;
  }
  EXPECT_FALSE(contains(r.out, "wall time"));
  // The slowest rank's first kernel (250 us) + the all-reduce + 20 us.
  const std::string step = line_with(r.out, "step time");
  ASSERT_FALSE(step.empty()) << r.out;
  const double seconds = std::stod(step.substr(26));
  EXPECT_GT(seconds, 270e-6);
  EXPECT_LT(seconds, 270e-6 + 1e-3);
  const std::string tokens = line_with(r.out, "tokens/s per GPU");
  ASSERT_FALSE(tokens.empty()) << r.out;
  EXPECT_NEAR(std::stod(tokens.substr(26)), 2048 / seconds, 0.01 * 2048 / seconds) << tokens;
  // Same inputs, same bytes; and the wall time line is last without the flag.
  EXPECT_EQ(
      run({"replay", s, "--trace", dir.file("job"), "--no-wall-time", "--tokens-per-gpu", "2048"})
          .out,
      r.out);
  const Outcome timed = run({"replay", s, "--trace", dir.file("job")});
  EXPECT_TRUE(contains(timed.out, "\nwall time                 ")) << timed.out;
}

TEST(ReplayCommand, MissingRankFilesAreNamed) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario());
  write_ranks(dir, "job", 2);
  const std::string prefix = dir.file("job");
  Outcome r = run({"replay", s, "--trace", prefix, "--ranks", "3"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "expected " + prefix + ".2.et: no such file (found 2 rank file(s) " +
                                  prefix + ".<rank>.et for ranks 0-1)"))
      << r.err;
  // A gap in the files found.
  dir.write("job.3.et", read_all(prefix + ".0.et"));
  r = run({"replay", s, "--trace", prefix});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "expected " + prefix + ".2.et: no such file (found 3 rank file(s) " +
                                  prefix + ".<rank>.et for ranks 0-1,3)"))
      << r.err;
  // --ranks below the files present replays those.
  r = run({"replay", s, "--trace", prefix, "--ranks", "2", "--no-wall-time"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.out, "2 (as traced)")) << r.out;
  r = run({"replay", s, "--trace", dir.file("nothing")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "expected " + dir.file("nothing") + ".0.et: no such file (no file " +
                                  dir.file("nothing") + ".<rank>.et was found)"))
      << r.err;
}

TEST(ReplayCommand, UsageErrors) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario());
  write_ranks(dir, "job", 2);
  const std::string prefix = dir.file("job");
  Outcome r = run({"replay", s});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err, "option '--trace PREFIX' is required")) << r.err;
  r = run({"replay", s, "--trace", prefix, "--trace-ranks", "0"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err, "'--trace-ranks' needs '--trace-out FILE'")) << r.err;
  r = run({"replay", s, "--trace", prefix, "--scale-to", "many"});
  EXPECT_EQ(r.code, kExitUsage);
  r = run({"replay", s, "--trace", prefix, "--ranks", "0"});
  EXPECT_EQ(r.code, kExitUsage);
}

TEST(ReplayCommand, RanksBeyondTheClusterAndBadScalesAreErrors) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario());
  write_ranks(dir, "job", 2);
  const std::string prefix = dir.file("job");
  Outcome r = run({"replay", s, "--trace", prefix, "--scale-to", "16"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err,
                       "expected at most 8 ranks (the cluster's GPUs), found 16 "
                       "(--scale-to)"))
      << r.err;
  r = run({"replay", s, "--trace", prefix, "--scale-to", "5"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "expected a multiple of the 2 traced ranks, found 5")) << r.err;
  write_ranks(dir, "big", 9);
  r = run({"replay", s, "--trace", dir.file("big")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err,
                       "expected at most 8 ranks (the cluster's GPUs), found 9 traced "
                       "ranks"))
      << r.err;
}

// Bounded work (issue 17): nodes x ranks past --max-events are refused
// before the replay is built; within it the replay runs.
TEST(ReplayCommand, MoreNodesTimesRanksThanTheLimitAreRefused) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario(2));
  write_ranks(dir, "job", 2, "world");
  const std::string prefix = dir.file("job");
  dir.write("job.comm_groups.json", chakra::comm_groups_json({{"world", {0, 1}}}));
  // 3 nodes a rank on 16 ranks: 48.
  Outcome r = run({"replay", s, "--trace", prefix, "--scale-to", "16", "--max-events", "47"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, prefix + ".<rank>.et: error: expected at most 47 trace nodes x ranks to replay "
                            "(--max-events raises the limit), found 16 ranks of up to 3 nodes, "
                            "48\n");
  r = run({"replay", s, "--trace", prefix, "--scale-to", "16", "--max-events", "48"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST(ReplayCommand, CommGroupsFileScaleToAndDeadlock) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario(2));
  write_ranks(dir, "job", 2, "world");
  const std::string prefix = dir.file("job");
  // The default groups file beside the traces is used.
  dir.write("job.comm_groups.json", chakra::comm_groups_json({{"world", {0, 1}}}));
  Outcome r = run({"replay", s, "--trace", prefix, "--no-wall-time", "--scale-to", "16"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.out, "process groups            1 from " + prefix + ".comm_groups.json\n"))
      << r.out;
  EXPECT_TRUE(contains(r.out,
                       "ranks                     16 (--scale-to: rank r replays traced "
                       "rank r mod 2)\n"))
      << r.out;
  // A group file naming a group without the rank: the trace check says so.
  const std::string bad = dir.write("bad.json", chakra::comm_groups_json({{"world", {0}}}));
  r = run({"replay", s, "--trace", prefix, "--comm-groups", bad});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "names a group without rank 1")) << r.err;
  // Rank 1 never reaches the all-reduce: a deadlock, reported, exit 1.
  chakra::Trace lone;
  lone.nodes = {kernel(0, 1000)};
  chakra::write_trace_file(chakra::rank_trace_path(prefix, 1), lone);
  r = run({"replay", s, "--trace", prefix});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "issues 0 collective(s) in process group 'world'")) << r.err;
}

TEST(ReplayCommand, JsonAndChromeTrace) {
  const ScratchDir dir;
  const std::string s = dir.write("s.yaml", scenario());
  write_ranks(dir, "job", 4);
  const std::string json = dir.file("r.json");
  const std::string trace = dir.file("t.json");
  const Outcome r = run({"replay", s, "--trace", dir.file("job"), "--json", json, "--trace-out",
                         trace, "--trace-ranks", "1,3", "--no-wall-time"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const JsonValue report = parse_json(read_all(json));
  const JsonValue& b = report["breakdown"];
  double sum = 0;
  for (const char* key :
       {"compute_s", "exposed_all_gather_s", "exposed_reduce_scatter_s", "exposed_all_reduce_s",
        "exposed_tp_s", "exposed_pcie_s", "sync_wait_s", "launch_bound_s", "idle_s"}) {
    ASSERT_TRUE(b.has(key)) << key;
    sum += b[key].number;
  }
  EXPECT_NEAR(sum, report["step_time_s"].number, 1e-9);
  EXPECT_GT(b["sync_wait_s"].number, 0);
  EXPECT_GT(report["tflops_per_gpu"].number, 0);
  EXPECT_EQ(report["ranks"].number, 4);
  EXPECT_EQ(report["collectives"].number, 1);
  EXPECT_EQ(report["nodes_per_rank"].number, 3);
  EXPECT_EQ(report["scenario"]["name"].text, "replay_small");
  EXPECT_EQ(report["cluster"]["gpus"].number, 8);
  EXPECT_EQ(report["traces"]["traced_ranks"].number, 4);
  EXPECT_FALSE(report["traces"]["scaled"].boolean);
  EXPECT_TRUE(report.has("wall_s"));
  const JsonValue t = parse_json(read_all(trace));
  std::set<int64_t> ranks;
  std::set<std::string> categories;
  for (const JsonValue& e : t["traceEvents"].items) {
    ranks.insert(static_cast<int64_t>(e["pid"].number));
    if (e["ph"].text == "X") categories.insert(e["cat"].text);
  }
  EXPECT_EQ(ranks, (std::set<int64_t>{1, 3}));
  EXPECT_EQ(categories, (std::set<std::string>{"compute", "all_reduce"}));
  const Outcome beyond =
      run({"replay", s, "--trace", dir.file("job"), "--trace-out", trace, "--trace-ranks", "4"});
  EXPECT_EQ(beyond.code, kExitError);
  EXPECT_TRUE(contains(beyond.err, "expected ranks below the world size 4")) << beyond.err;
}

TEST(ReplayCommand, AnExportedStepReplaysToRunsStepTime) {
  const ScratchDir dir;
  // Without SM sharing, a replay of every rank's exported graph reproduces
  // the step simulator to the nanosecond.
  const std::string s = dir.write(
      "s.yaml", scenario(2,
                         "workload:\n  model: llama3-8b\n  local_batch: 1\n  seq_len: 512\n"
                         "  parallelism:\n    strategy: HYBRID_SHARD\n    shard_group_size: 8\n"));
  const Outcome exported = run({"export-chakra", s, "-o", dir.file("ex"), "--prefix", "step"});
  ASSERT_EQ(exported.code, kExitOk) << exported.err;
  const Outcome simulated = run({"run", s, "--no-wall-time"});
  ASSERT_EQ(simulated.code, kExitOk) << simulated.err;
  const Outcome replayed = run({"replay", s, "--trace", dir.file("ex/step"), "--no-wall-time"});
  ASSERT_EQ(replayed.code, kExitOk) << replayed.err;
  EXPECT_TRUE(contains(replayed.out, "16 rank(s)")) << replayed.out;
  const std::string run_step = line_with(simulated.out, "step time");
  const std::string replay_step = line_with(replayed.out, "step time");
  ASSERT_FALSE(run_step.empty());
  // The profile's SM-sharing slowdown is applied per kernel by the replay and
  // per segment by the simulator: equal to a microsecond.
  EXPECT_NEAR(std::stod(replay_step.substr(26)), std::stod(run_step.substr(26)), 1e-6)
      << run_step << "\n"
      << replay_step;
}

// The same export in both forms: as written (standard: numeric ids,
// all-gather comm_size per rank) and rewritten as clustersim wrote it
// before (named groups, all-gather comm_size the total output, no
// clustersim_trace_form). Both replay to the same step, and say which form
// they were read in.
TEST(ReplayCommand, AnExportReplaysTheSameInTheStandardAndTheNamedForm) {
  const ScratchDir dir;
  const std::string s = dir.write(
      "s.yaml", scenario(2,
                         "workload:\n  model: custom\n  custom_model:\n    layers: 2\n"
                         "    hidden: 1024\n    heads: 8\n    kv_heads: 8\n"
                         "    ffn_hidden: 2816\n    vocab: 32000\n    activation: swiglu\n"
                         "  seq_len: 1024\n"
                         "  local_batch: 1\n  parallelism:\n    strategy: HYBRID_SHARD\n"
                         "    shard_group_size: 8\n"));
  ASSERT_EQ(run({"export-chakra", s, "-o", dir.file("std"), "--prefix", "step"}).code, kExitOk);
  const chakra::CommGroups ids = chakra::read_comm_groups(dir.file("std/step.comm_groups.json"));
  std::filesystem::create_directory(dir.file("old"));
  chakra::CommGroups named;
  for (int r = 0; r < 16; ++r) {
    chakra::Trace t = chakra::read_trace_file(chakra::rank_trace_path(dir.file("std/step"), r));
    std::erase_if(t.metadata,
                  [](const chakra::RawAttribute& a) { return a.name == "clustersim_trace_form"; });
    for (chakra::Node& n : t.nodes) {
      if (!n.pg_name) continue;
      const std::vector<int64_t>& members = ids.at(*n.pg_name);
      if (n.comm_type == static_cast<int64_t>(chakra::CommType::kAllGather)) {
        *n.comm_size *= static_cast<int64_t>(members.size());
      }
      named[*n.pg_desc] = members;
      n.pg_name = n.pg_desc;
      n.pg_desc.reset();
    }
    chakra::write_trace_file(chakra::rank_trace_path(dir.file("old/step"), r), t);
  }
  dir.write("old/step.comm_groups.json", chakra::comm_groups_json(named));
  const Outcome a = run({"replay", s, "--trace", dir.file("std/step"), "--no-wall-time", "--json",
                         dir.file("a.json")});
  const Outcome b = run({"replay", s, "--trace", dir.file("old/step"), "--no-wall-time", "--json",
                         dir.file("b.json")});
  ASSERT_EQ(a.code, kExitOk) << a.err;
  ASSERT_EQ(b.code, kExitOk) << b.err;
  EXPECT_EQ(line_with(a.out, "trace form"),
            "trace form                standard (clustersim_trace_form \"standard\" in the "
            "GlobalMetadata)");
  EXPECT_EQ(line_with(b.out, "trace form"), "trace form                named (pg_name 'shard_0' (" +
                                                dir.file("old/step.0.et") +
                                                " node 1) is not a number)");
  const JsonValue ja = parse_json(read_all(dir.file("a.json")));
  const JsonValue jb = parse_json(read_all(dir.file("b.json")));
  EXPECT_EQ(ja["traces"]["form"].text, "standard");
  EXPECT_EQ(jb["traces"]["form"].text, "named");
  EXPECT_EQ(ja["step_time_s"].number, jb["step_time_s"].number);
  EXPECT_EQ(ja["events"].number, jb["events"].number);
  EXPECT_EQ(line_with(a.out, "time per rank"), line_with(b.out, "time per rank"));
  EXPECT_EQ(a.out.substr(a.out.find("step time")), b.out.substr(b.out.find("step time")));
}

// Issue 8's scaling check, at a size the suite can afford: the 8-rank
// export of the shipped Llama-3-8B scenario, --scale-to 512, against `run`
// of the same scenario widened to 512 GPUs (64 nodes). scripts/bench runs
// the same comparison at 16,384 GPUs.
TEST(ReplayCommand, AnEightRankExportScaledTo512MatchesRunWidenedWithinTwoPercent) {
  const ScratchDir dir;
  const std::string s =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3_8b_fsdp_8xh100.yaml";
  const Outcome exported = run({"export-chakra", s, "-o", dir.file("ex"), "--prefix", "step"});
  ASSERT_EQ(exported.code, kExitOk) << exported.err;
  const Outcome simulated = run({"run", s, "--set", "cluster.nodes=64", "--no-wall-time"});
  ASSERT_EQ(simulated.code, kExitOk) << simulated.err;
  const Outcome replayed = run({"replay", s, "--trace", dir.file("ex/step"), "--scale-to", "512",
                                "--set", "cluster.nodes=64", "--no-wall-time"});
  ASSERT_EQ(replayed.code, kExitOk) << replayed.err;
  const double run_s = std::stod(line_with(simulated.out, "step time").substr(26));
  const double replay_s = std::stod(line_with(replayed.out, "step time").substr(26));
  EXPECT_NEAR(replay_s / run_s, 1.0, 0.02) << run_s << " vs " << replay_s;
}

}  // namespace
}  // namespace clustersim::cli
