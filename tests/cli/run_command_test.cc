// `clustersim run` end to end (run_clustersim in-process): flags and their
// errors, out of memory with and without --allow-oom, the JSON report's keys
// and the Chrome trace's structure, determinism.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "tests/support/json_value.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::JsonValue;
using test_support::Outcome;
using test_support::parse_json;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

constexpr const char* kH100 = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml";

// HGX H100 nodes (8 GPUs each) training `model` with FSDP; lines 1-10 are
// fixed so that tests can name them (`extra` from line 11).
std::string scenario(std::string_view model = "llama3-8b", std::string_view extra = "",
                     int nodes = 1) {
  return "name: small_run\n"
         "description: FSDP on one node\n"
         "hardware: " +
         std::string(kH100) +
         "\n"
         "cluster:\n"
         "  nodes: " +
         std::to_string(nodes) +
         "\n"
         "  node: hgx_h100\n"
         "workload:\n"
         "  model: " +
         std::string(model) +
         "\n"
         "  local_batch: 1\n"
         "  seq_len: 1024\n" +
         std::string(extra);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, std::string_view piece) {
  return text.find(piece) != std::string::npos;
}

TEST(RunCommand, HelpNamesEveryFlag) {
  const Outcome r = run({"run", "--help"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* flag :
       {"--set", "--json", "--trace", "--trace-ranks", "--allow-oom", "--no-wall-time",
        "--engine-stats", "--max-tasks-per-rank", "--max-events"}) {
    EXPECT_TRUE(contains(r.out, flag)) << flag;
  }
  EXPECT_TRUE(contains(run({"--help"}).out, "  run "));
}

TEST(RunCommand, SummaryOnStdout) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const Outcome r = run({"run", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* piece :
       {"scenario                  small_run\n",
        "GPUs                      8 (1 node x 8",
        "model                     llama3-8b, 8.03B parameters",
        "strategy                  FULL_SHARD: shard group 8 x replica group 1, tp 1 (8 ranks)",
        "\nstep time ",
        "\ntokens/s per GPU ",
        "\nTFLOP/s per GPU ",
        "\nMFU ",
        "  compute ",
        "  exposed all-gather ",
        "  exposed reduce-scatter ",
        "  exposed all-reduce ",
        "  exposed TP ",
        "  exposed PCIe ",
        "  sync wait ",
        "  launch-bound ",
        "  idle ",
        "  params ",
        "  grads ",
        "  optimizer ",
        "  unsharded params ",
        "  activations ",
        "  comm buffers ",
        "  reserve ",
        "  total ",
        "  capacity ",
        "  headroom ",
        "\nevents simulated "}) {
    EXPECT_TRUE(contains(r.out, piece)) << piece << "\n" << r.out;
  }
  // The wall time is the last line, and the only one --no-wall-time drops.
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines.back().starts_with("wall time ")) << lines.back();
  const Outcome quiet = run({"run", path, "--no-wall-time"});
  ASSERT_EQ(quiet.code, kExitOk) << quiet.err;
  std::vector<std::string> without = lines;
  without.pop_back();
  EXPECT_EQ(lines_of(quiet.out), without);
}

// `hardware: h100` (a bare name) is the shipped profile, wherever the
// scenario is: the same step as its path gives. A path is relative to the
// scenario's folder; one that is missing but names a shipped profile's file
// gets that profile's path and bare name, and an unknown bare name the list
// of shipped names.
TEST(RunCommand, AHardwareProfileNamedByItsBareNameIsTheShippedOne) {
  const ScratchDir dir;
  const std::string body =
      "cluster:\n  nodes: 1\n  node: hgx_h100\nworkload:\n  model: llama3-8b\n"
      "  seq_len: 1024\n  local_batch: 1\n";
  const Outcome bare =
      run({"run", dir.write("a.yaml", "name: a\nhardware: h100\n" + body), "--no-wall-time"});
  ASSERT_EQ(bare.code, cli::kExitOk) << bare.err;
  const Outcome by_path = run({"run",
                               dir.write("p.yaml", "name: a\nhardware: " CLUSTERSIM_SOURCE_DIR
                                                   "/scenarios/hardware/h100.yaml\n" +
                                                       body),
                               "--no-wall-time"});
  ASSERT_EQ(by_path.code, cli::kExitOk) << by_path.err;
  EXPECT_EQ(bare.out.substr(bare.out.find('\n')), by_path.out.substr(by_path.out.find('\n')));
  EXPECT_NE(bare.out.find("hardware profile h100\n"), std::string::npos) << bare.out;

  Outcome r = run({"run", dir.write("b.yaml", "name: b\nhardware: h100.yaml\n" + body)});
  EXPECT_EQ(r.code, cli::kExitError);
  EXPECT_NE(
      r.err.find("b.yaml:2:11: error: hardware: expected one of the shipped profiles by its "
                 "bare name (a100, a100_calibrated, b200, gb200, gb300, h100, h100_96gb_500w, "
                 "h100_calibrated, "
                 "h200, h200_measured, h800; e.g. 'hardware: h100') or the path of a profile "
                 "file, relative to the scenario's folder unless absolute, found no file at"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; a shipped profile of that name is '" CLUSTERSIM_SOURCE_DIR
                       "/scenarios/hardware/h100.yaml' (or name it bare: 'hardware: h100')"),
            std::string::npos)
      << r.err;
  r = run({"run", dir.write("c.yaml", "name: c\nhardware: h1000\n" + body)});
  EXPECT_EQ(r.code, cli::kExitError);
  EXPECT_NE(r.err.find("found 'h1000', which this build does not ship"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("shipped profile of that name"), std::string::npos) << r.err;
}

TEST(RunCommand, UnknownFlagIsAUsageError) {
  const Outcome r = run({"run", "s.yaml", "--trace-rank", "0"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err,
                       "unknown option '--trace-rank' for 'run' (did you mean "
                       "'--trace-ranks'?)"))
      << r.err;
  EXPECT_EQ(run({"run"}).code, kExitUsage);
  EXPECT_EQ(run({"run", "a.yaml", "b.yaml"}).code, kExitUsage);
  EXPECT_EQ(run({"run", "s.yaml", "--allow-oom=yes"}).code, kExitUsage);
}

TEST(RunCommand, TraceRanksNeedTrace) {
  const Outcome r = run({"run", "s.yaml", "--trace-ranks", "0"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err, "option '--trace-ranks' needs '--trace FILE'")) << r.err;
}

TEST(RunCommand, MalformedTraceRanksAreAUsageError) {
  const Outcome r = run({"run", "s.yaml", "--trace", "t.json", "--trace-ranks", "0,x"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err,
                       "clustersim run: error: option '--trace-ranks' expects ranks such as '0' "
                       "or '0,8-15', found '0,x': item 'x' is not a rank or a range A-B"))
      << r.err;
  EXPECT_EQ(run({"run", "s.yaml", "--trace", "t.json", "--trace-ranks", ""}).code, kExitUsage);
}

TEST(RunCommand, TraceRanksBeyondTheWorldAreAnInputError) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const std::string trace = dir.file("t.json");
  const Outcome r = run({"run", path, "--trace", trace, "--trace-ranks", "0,4-8"});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "--trace-ranks 0,4-8: error: expected ranks below the world size 8 of '" + path +
                       "', found '0,4-8': rank 8 (in '4-8') is not below 8\n");
  EXPECT_EQ(dir.list(), std::vector<std::string>{"s.yaml"});
}

TEST(RunCommand, StragglerRanksBeyondTheWorldNameTheKey) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", scenario("llama3-8b", "stragglers:\n  ranks: 3,9\n"));
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, path +
                       ":12:10: error: stragglers.ranks: expected ranks below the world size 8, "
                       "found '3,9': rank 9 (in '9') is not below 8\n");
  const Outcome bad = run({"run", path, "--set", "stragglers.ranks=1-"});
  EXPECT_EQ(bad.code, kExitError);
  EXPECT_TRUE(contains(bad.err, "stragglers.ranks: expected a list of ranks")) << bad.err;
}

// A forced collective choice that a group of the job cannot run is an
// input error at the key to blame, before anything is simulated.
TEST(RunCommand, ForcedAlgorithmNoGroupCanRunNamesTheKey) {
  const ScratchDir dir;
  // Two nodes: the FSDP shard group spans them, and NVLS stays in a node.
  const std::string path =
      dir.write("s.yaml", scenario("llama3-8b", "collectives:\n  algorithm: nvls\n", 2));
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, path +
                       ":12:14: error: collectives.algorithm: no valid way to run all_gather on "
                       "16 ranks (2 nodes) with algorithm nvls: nvls needs one node (group spans "
                       "2) (the FSDP shard group of the step)\n");
  // The same from the command line: the override is the place.
  const std::string plain = dir.write("plain.yaml", scenario());
  const Outcome tree = run({"run", plain, "--set", "collectives.algorithm=tree"});
  EXPECT_EQ(tree.code, kExitError);
  EXPECT_EQ(tree.err,
            "--set collectives.algorithm=tree: error: collectives.algorithm: no valid way to run "
            "all_gather on 8 ranks (1 nodes) with algorithm tree: tree runs only all_reduce (not "
            "all_gather) (the FSDP shard group of the step)\n");
}

// Float8 needs FP8 tensor cores (the profile's gpu.peak_fp8_tflops) and a
// bf16 model; each mismatch is an error at the workload's key.
TEST(RunCommand, Float8WithoutFp8TensorCoresOrBf16NamesTheKey) {
  const ScratchDir dir;
  const std::string a100 = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/a100.yaml";
  std::string text = scenario("llama3-8b", "  float8:\n    recipe: tensorwise\n");
  text.replace(text.find(kH100), std::string(kH100).size(), a100);
  text.replace(text.find("hgx_h100"), 8, "hgx_a100");
  const std::string path = dir.write("s.yaml", text);
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, path +
                       ":12:13: error: workload.float8.recipe: expected none on hardware profile "
                       "a100 (" +
                       a100 +
                       "), which has no FP8 tensor cores (gpu.peak_fp8_tflops 0), found "
                       "tensorwise\n");
  const std::string fp16 =
      dir.write("fp16.yaml", scenario("llama3-8b", "  dtype: fp16\n  float8:\n    recipe: rowwise\n"));
  const Outcome f = run({"run", fp16});
  EXPECT_EQ(f.code, kExitError);
  EXPECT_EQ(f.err, fp16 +
                       ":13:13: error: workload.float8.recipe: expected recipe none with dtype "
                       "fp16 (torchao's Float8Linear converts a bf16 model), found rowwise\n");
  // On H100 the same recipe runs, faster than bf16.
  const std::string h100 =
      dir.write("h100.yaml", scenario("llama3-8b", "  float8:\n    recipe: tensorwise\n"));
  EXPECT_EQ(run({"run", h100}).code, 0);
  // The FP8 all-gather needs tensorwise scales; precomputed scales need it.
  const std::string rowwise = dir.write(
      "rowwise.yaml",
      scenario("llama3-8b", "  float8:\n    recipe: rowwise\n    fsdp_all_gather: true\n"));
  const Outcome g = run({"run", rowwise});
  EXPECT_EQ(g.code, kExitError);
  EXPECT_EQ(g.err, rowwise +
                       ":13:22: error: workload.float8.fsdp_all_gather: expected false with recipe "
                       "rowwise, FSDP version 2, strategy FULL_SHARD and cpu_offload false "
                       "(torchao all-gathers FP8 weights with tensorwise scales through FSDP2's "
                       "sharded parameters on the GPU), found true\n");
  const Outcome p = run({"run", h100, "--set", "workload.float8.precompute_scales=true"});
  EXPECT_EQ(p.code, kExitError);
  EXPECT_EQ(p.err,
            "--set workload.float8.precompute_scales=true: error: "
            "workload.float8.precompute_scales: expected false without fsdp_all_gather (the "
            "precomputed scales are those of the FP8 all-gather), found true\n");
}

TEST(RunCommand, ForcedProtocolTheAlgorithmCannotRunNamesTheProtocol) {
  const ScratchDir dir;
  // NO_SHARD on one node: only all-reduces, which NVLS runs, but with Simple
  // alone; so the protocol is to blame, not the algorithm.
  const std::string extra =
      "  parallelism:\n    strategy: NO_SHARD\ncollectives:\n  algorithm: nvls\n  protocol: LL\n";
  const std::string path = dir.write("s.yaml", scenario("llama3-8b", extra));
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.err, path +
                       ":15:13: error: collectives.protocol: no valid way to run all_reduce on 8 "
                       "ranks (1 nodes) with algorithm nvls with protocol LL: nvls runs only the "
                       "Simple protocol (not LL) (the replica group of the step)\n");
  // A choice every group can run is simulated as forced (the unsharded
  // 8B model does not fit: simulated anyway).
  const Outcome simple = run({"run", path, "--set", "collectives.protocol=Simple", "--allow-oom"});
  EXPECT_EQ(simple.code, kExitOk) << simple.err;
  EXPECT_TRUE(contains(simple.out, "step time")) << simple.out;
}

TEST(RunCommand, ScenarioWithoutAWorkloadSaysSo) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", "name: t\nhardware: " + std::string(kH100) + "\ncluster:\n  nodes: 1\n");
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "workload.model")) << r.err;
}

TEST(RunCommand, OutOfMemoryExitsOneWithTheBreakdown) {
  // Llama-3-70B over 8 GPUs: 16 bytes x 70.6e9 / 8 = 141 GB of state per GPU.
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("llama3-70b"));
  const std::string json = dir.file("r.json");
  const Outcome r = run({"run", path, "--json", json});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "peak memory per GPU")) << r.err;
  EXPECT_TRUE(contains(r.err, "  optimizer ")) << r.err;
  EXPECT_TRUE(contains(r.err, "clustersim run: error: out of memory: needs ")) << r.err;
  EXPECT_TRUE(contains(r.err, " GiB per GPU, has ")) << r.err;
  EXPECT_TRUE(contains(r.err, " bytes)\n")) << r.err;
  EXPECT_TRUE(contains(r.err, "--allow-oom")) << r.err;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"s.yaml"});  // no report
}

TEST(RunCommand, AllowOomWarnsAndRuns) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("llama3-70b"));
  const std::string json = dir.file("r.json");
  const Outcome r = run({"run", path, "--allow-oom", "--json", json});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(r.err.starts_with("clustersim run: warning: out of memory: needs ")) << r.err;
  EXPECT_TRUE(contains(r.out, "\nstep time ")) << r.out;
  const JsonValue report = parse_json(read_all(json));
  EXPECT_FALSE(report["fits_in_memory"].boolean);
  EXPECT_GT(report["peak_memory_bytes"].number, report["memory_capacity_bytes"].number);
  EXPECT_LT(report["headroom_bytes"].number, 0);
}

TEST(RunCommand, EngineStatsAddUpToTheEventsAndOnlyWithTheFlag) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const std::string plain = dir.file("plain.json");
  const std::string with = dir.file("with.json");
  const Outcome r = run({"run", path, "--json", plain});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const Outcome s = run({"run", path, "--engine-stats", "--json", with});
  ASSERT_EQ(s.code, kExitOk) << s.err;
  EXPECT_FALSE(contains(r.out, "engine events by kind"));
  EXPECT_TRUE(contains(s.out, "\nengine events by kind ")) << s.out;
  EXPECT_FALSE(parse_json(read_all(plain)).has("engine_stats"));
  const JsonValue report = parse_json(read_all(with));
  const JsonValue& e = report["engine_stats"];
  double sum = 0;
  for (const char* key : {"segment_ends", "relooks", "group_starts", "transfer_begins",
                          "transfer_ends", "latency_ends", "flow_solves", "local_ends"}) {
    ASSERT_TRUE(e.has(key)) << key;
    sum += e[key].number;
  }
  EXPECT_EQ(sum, report["events"].number);
  // FSDP over 8 ranks: every collective moves bytes, and both begins and
  // ends once.
  EXPECT_EQ(e["transfer_begins"].number, report["collectives"].number);
  EXPECT_EQ(e["transfer_ends"].number, report["collectives"].number);
  EXPECT_GT(e["segment_ends"].number, 0);
}

TEST(RunCommand, JsonReportHasTheKeys) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const std::string json = dir.file("r.json");
  const Outcome r = run({"run", path, "--json", json});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const JsonValue report = parse_json(read_all(json));
  ASSERT_TRUE(report.is(JsonValue::Kind::kObject));
  for (const char* key :
       {"step_time_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "peak_memory_bytes",
        "exposed_comm_s", "compute_s", "events", "wall_s", "memory_capacity_bytes",
        "headroom_bytes", "collectives", "ranks", "slowest_rank", "tasks_per_rank"}) {
    ASSERT_TRUE(report.has(key)) << key;
    EXPECT_TRUE(report[key].is(JsonValue::Kind::kNumber)) << key;
  }
  EXPECT_TRUE(report["fits_in_memory"].boolean);
  EXPECT_GT(report["step_time_s"].number, 0);
  EXPECT_GT(report["mfu"].number, 0);
  EXPECT_LT(report["mfu"].number, 1);
  EXPECT_GT(report["events"].number, 0);
  EXPECT_EQ(report["ranks"].number, 8);
  // The breakdown adds up to the step (StepBreakdown's contract).
  const JsonValue& b = report["breakdown"];
  double sum = 0;
  for (const char* key :
       {"compute_s", "exposed_all_gather_s", "exposed_reduce_scatter_s", "exposed_all_reduce_s",
        "exposed_tp_s", "exposed_pcie_s", "sync_wait_s", "launch_bound_s", "idle_s"}) {
    ASSERT_TRUE(b.has(key)) << key;
    sum += b[key].number;
  }
  EXPECT_NEAR(sum, report["step_time_s"].number, 1e-6 * report["step_time_s"].number + 1e-9);
  EXPECT_EQ(b["compute_s"].number, report["compute_s"].number);
  const JsonValue& m = report["memory"];
  double total = 0;
  for (const char* key :
       {"params_bytes", "grads_bytes", "optimizer_bytes", "unsharded_params_bytes",
        "activations_bytes", "comm_buffers_bytes", "reserve_bytes"}) {
    ASSERT_TRUE(m.has(key)) << key;
    total += m[key].number;
  }
  EXPECT_EQ(total, report["peak_memory_bytes"].number);
  EXPECT_EQ(report["scenario"]["name"].text, "small_run");
  EXPECT_EQ(report["cluster"]["gpus"].number, 8);
  EXPECT_EQ(report["cluster"]["hardware_profile"].text, "h100");
  EXPECT_EQ(report["workload"]["model"].text, "llama3-8b");
  EXPECT_EQ(report["workload"]["strategy"].text, "FULL_SHARD");
  EXPECT_EQ(report["workload"]["shard_group_size"].number, 8);
  EXPECT_EQ(report["stragglers"]["ranks"].text, "");
}

TEST(RunCommand, SetOverridesReachTheWorkload) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const std::string json = dir.file("r.json");
  const Outcome r = run({"run", path, "--json", json, "--set", "workload.grad_accum=2", "--set",
                         "stragglers.ranks=3", "--set", "stragglers.slowdown=1.5"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const JsonValue report = parse_json(read_all(json));
  EXPECT_EQ(report["workload"]["grad_accum"].number, 2);
  EXPECT_EQ(report["stragglers"]["ranks"].text, "3");
  EXPECT_EQ(report["stragglers"]["slowdown"].number, 1.5);
  EXPECT_TRUE(contains(r.out, "stragglers                1 rank(s) 3, compute x1.5")) << r.out;
  // PyTorch's FSDP reduces in the compute dtype unless told otherwise.
  EXPECT_EQ(report["workload"]["megatron_data_parallel"].text, "none");
  EXPECT_EQ(report["workload"]["reduce_dtype"].text, "bf16");
}

TEST(RunCommand, JsonReportNamesMegatronsDataParallelism) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const auto mode = [&](std::vector<std::string> sets) {
    const std::string json = dir.file("m.json");
    // (Plain DDP holds 18 bytes a parameter of llama3-8b on every rank.)
    std::vector<std::string> args = {"run", path, "--allow-oom", "--json", json};
    for (const std::string& kv : sets) {
      args.push_back("--set");
      args.push_back(kv);
    }
    const Outcome r = run(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    const JsonValue report = parse_json(read_all(json));
    return report["workload"]["megatron_data_parallel"].text + " " +
           report["workload"]["reduce_dtype"].text;
  };
  EXPECT_EQ(mode({"workload.parallelism.strategy=DISTRIBUTED_OPTIMIZER"}),
            "distributed_optimizer fp32");
  EXPECT_EQ(mode({"workload.parallelism.strategy=NO_SHARD", "workload.megatron.ddp=true"}),
            "ddp fp32");
  EXPECT_EQ(mode({"workload.megatron.fsdp=true", "workload.fsdp.reduce_dtype=bf16"}), "fsdp bf16");
}

// Ranks of the trace's complete events, and that every event is well formed.
std::set<int64_t> traced_ranks(const JsonValue& trace) {
  std::set<int64_t> ranks;
  for (const JsonValue& e : trace["traceEvents"].items) {
    EXPECT_TRUE(e.is(JsonValue::Kind::kObject));
    const std::string& ph = e["ph"].text;
    EXPECT_TRUE(ph == "X" || ph == "M") << ph;
    ranks.insert(static_cast<int64_t>(e["pid"].number));
    if (ph != "X") continue;
    EXPECT_TRUE(e["tid"].is(JsonValue::Kind::kNumber));
    EXPECT_GE(e["ts"].number, 0);
    EXPECT_GE(e["dur"].number, 0);
    EXPECT_FALSE(e["name"].text.empty());
    EXPECT_FALSE(e["cat"].text.empty());
    EXPECT_TRUE(e["args"].has("phase"));
  }
  return ranks;
}

TEST(RunCommand, TraceHoldsTheTracedRanksOnly) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("llama3-8b", "", 2));
  const std::string trace = dir.file("t.json");
  const Outcome r = run({"run", path, "--trace", trace, "--trace-ranks", "0,9-10"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const JsonValue t = parse_json(read_all(trace));
  EXPECT_EQ(t["displayTimeUnit"].text, "ns");
  EXPECT_EQ(traced_ranks(t), (std::set<int64_t>{0, 9, 10}));
  bool saw_collective = false;
  bool saw_kernel = false;
  for (const JsonValue& e : t["traceEvents"].items) {
    if (e["ph"].text != "X") continue;
    if (e["args"].has("group_size")) {
      saw_collective = true;
      EXPECT_TRUE(e["args"].has("bytes"));
      EXPECT_TRUE(e["args"].has("wait_us"));
    }
    if (e["tid"].number == 1) saw_kernel = true;  // the compute stream
  }
  EXPECT_TRUE(saw_collective);
  EXPECT_TRUE(saw_kernel);

  // Default: rank 0 only.
  const Outcome only0 = run({"run", path, "--trace", trace});
  ASSERT_EQ(only0.code, kExitOk) << only0.err;
  EXPECT_EQ(traced_ranks(parse_json(read_all(trace))), (std::set<int64_t>{0}));
}

TEST(RunCommand, SameScenarioGivesTheSameReportAndTrace) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", scenario("llama3-8b", "stragglers:\n  ranks: 5\n", 2));
  std::string reports[2];
  std::string traces[2];
  std::string outs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string json = dir.file("r" + std::to_string(i) + ".json");
    const std::string trace = dir.file("t" + std::to_string(i) + ".json");
    const Outcome r = run(
        {"run", path, "--json", json, "--trace", trace, "--trace-ranks", "0-15", "--no-wall-time"});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    outs[i] = r.out;
    traces[i] = read_all(trace);
    // Everything but the wall_s line.
    for (const std::string& line : lines_of(read_all(json))) {
      if (!contains(line, "\"wall_s\"")) reports[i] += line + "\n";
    }
  }
  EXPECT_EQ(outs[0], outs[1]);
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_TRUE(traces[0] == traces[1]);
}

TEST(RunCommand, UnwritableReportIsAnError) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario());
  const Outcome r = run({"run", path, "--json", dir.file("missing/r.json")});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_TRUE(contains(r.err, "cannot write")) << r.err;
}

// Bounded work (issue 17): a step too long to build, or too big to run, is
// refused before it is built, at the key that drives it; the limits move
// with their flags.
TEST(RunCommand, AMillionMicrobatchesAreRefusedAtTheirKey) {
  const ScratchDir dir;
  const std::string path = dir.write(
      "s.yaml", scenario("llama3-8b", "  grad_accum: 1000000\n  activation_checkpointing: none\n"));
  const Outcome r = run({"run", path});
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  // `run` of this scenario reports 3,245 tasks per rank with one micro-batch
  // and 6,486 with two: 3,245 + 999,999 x 3,241 with a million.
  EXPECT_EQ(r.err, path + ":11:15: error: workload.grad_accum: expected at most 10,000,000 tasks "
                          "per rank (--max-tasks-per-rank raises the limit), found 1000000 "
                          "micro-batches, about 3,241,000,004 tasks per rank\n");
}

TEST(RunCommand, TheEventLimitNamesTheNodesAndMovesWithItsFlag) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", scenario("llama3-8b", "", 2));
  const Outcome refused = run({"run", path, "--max-events", "1000"});
  EXPECT_EQ(refused.code, kExitError);
  EXPECT_TRUE(contains(refused.err, path + ":5:10: error: cluster.nodes: expected at most 1,000 "
                                           "tasks x timelines to simulate (--max-events raises "
                                           "the limit), found 16 ranks of 3,245 tasks, 51,920"))
      << refused.err;
  EXPECT_EQ(run({"run", path, "--max-events", "100000000"}).code, kExitOk);
  // With identical GPUs the 16 ranks are one timeline: 3,245 tasks x 1.
  const std::string identical = dir.write(
      "identical.yaml", "extends: " + std::string(kH100) + "\ngpu:\n  speed_variation: 0\n");
  EXPECT_EQ(run({"run", path, "--max-events", "10000", "--set", "hardware=" + identical}).code,
            kExitOk);
  const Outcome spread = run({"run", path, "--max-events", "10000"});
  EXPECT_TRUE(contains(spread.err, "found 16 ranks of 3,245 tasks, 51,920")) << spread.err;
  const Outcome zero = run({"run", path, "--max-tasks-per-rank", "0"});
  EXPECT_EQ(zero.code, kExitUsage);
  EXPECT_TRUE(contains(zero.err, "option '--max-tasks-per-rank' expects a limit > 0, found '0'"))
      << zero.err;
}

}  // namespace
}  // namespace clustersim::cli
