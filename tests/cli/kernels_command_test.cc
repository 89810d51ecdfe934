// `clustersim kernels` end to end (run_clustersim in-process) on torchtitan's
// Llama-3-8B scenario, against shapes computed by hand: hidden 4096, ffn
// 14336, 32 heads, 8 KV heads, head_dim 128, vocab 128256, 32 layers; the
// scenario's local batch 2 x seq 8192 = 16384 tokens per micro-batch, one
// micro-batch, selective (op-level) activation checkpointing, which
// recomputes k_proj, out_proj and up_proj but neither qkv_proj nor attention.
#include "cli/kernels_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;

constexpr const char* kLlama8b = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";
constexpr const char* kHeader =
    "kind,name,dtype,m,n,k,batch,seq,heads,kv_heads,head_dim,causal,pass,count_per_step,flops";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_line(const std::vector<std::string>& lines, std::string_view line) {
  for (const std::string& l : lines) {
    if (l == line) return true;
  }
  return false;
}

// The row whose second field (name) is `name`, or "" when none.
std::string row_named(const std::vector<std::string>& lines, std::string_view name) {
  for (const std::string& l : lines) {
    const size_t comma = l.find(',');
    if (comma == std::string::npos) continue;
    const size_t end = l.find(',', comma + 1);
    if (l.substr(comma + 1, end - comma - 1) == name) return l;
  }
  return "";
}

Outcome csv(std::vector<std::string> sets = {}) {
  std::vector<std::string> args = {"kernels", kLlama8b, "--csv"};
  for (const std::string& s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  return run(args);
}

TEST(KernelsCommand, HelpNamesEveryFlagAndTheCommandIsListed) {
  const Outcome r = run({"kernels", "--help"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* flag : {"--set", "--csv", "-o"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(run({"--help"}).out.find("  kernels "), std::string::npos);
}

TEST(KernelsCommand, CsvHeaderAndHandComputedRows) {
  const Outcome r = csv();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("# clustersim kernels llama3_8b_fsdp_8xh100:", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1], kHeader);
  // 2 * 16384 * 6144 * 4096 FLOPs; n = (32 + 2 * 8) * 128; once per layer.
  EXPECT_EQ(lines[2], "gemm,qkv_proj,bf16,16384,6144,4096,,,,,,,,32,824633720832");
  // Causal forward 4 * 2 * 8192^2 * 32 * 128 / 2 = 2^40; backward 2.5x.
  EXPECT_EQ(row_named(lines, "attention"),
            "attention,attention,bf16,,,,2,8192,32,8,128,true,fwd,32,1099511627776");
  EXPECT_EQ(row_named(lines, "attention.bwd"),
            "attention,attention.bwd,bf16,,,,2,8192,32,8,128,true,bwd,32,2748779069440");
  // out_proj's forward, its recomputation and its dgrad (m = T, n = in, k = out) share
  // one shape: 3 x 32 runs.
  EXPECT_TRUE(
      has_line(lines,
               "gemm,out_proj+out_proj.recompute+out_proj.dgrad,bf16,16384,4096,4096,,,,,,,,96,"
               "549755813888"));
  // Selective checkpointing recomputes k_proj (n = 8 * 128) and up_proj (n = ffn), whose
  // shape is down_proj's dgrad's.
  EXPECT_TRUE(has_line(lines, "gemm,k_proj.recompute,bf16,16384,1024,4096,,,,,,,,32,137438953472"));
  EXPECT_TRUE(has_line(lines,
                       "gemm,up_proj.recompute+down_proj.dgrad,bf16,16384,14336,4096,,,,,,,,64,"
                       "1924145348608"));
  EXPECT_TRUE(has_line(lines, "gemm,gate_up_proj,bf16,16384,28672,4096,,,,,,,,32,3848290697216"));
  // The output head once per step: forward, dgrad and wgrad (m = in, n = out, k = T).
  EXPECT_TRUE(has_line(lines, "gemm,lm_head,bf16,16384,128256,4096,,,,,,,,1,17214228922368"));
  EXPECT_TRUE(has_line(lines, "gemm,lm_head.dgrad,bf16,16384,4096,128256,,,,,,,,1,17214228922368"));
  EXPECT_TRUE(has_line(lines, "gemm,lm_head.wgrad,bf16,4096,128256,16384,,,,,,,,1,17214228922368"));
  // Every GEMM row's flops is 2 * m * n * k; every row is counted.
  int gemm_rows = 0;
  for (size_t i = 2; i < lines.size(); ++i) {
    std::vector<std::string> f;
    std::istringstream in(lines[i]);
    for (std::string field; std::getline(in, field, ',');) f.push_back(field);
    ASSERT_EQ(f.size(), 15u) << lines[i];
    EXPECT_GT(std::stoll(f[13]), 0) << lines[i];
    if (f[0] != "gemm") continue;
    ++gemm_rows;
    EXPECT_EQ(std::stod(f[14]), 2.0 * std::stod(f[3]) * std::stod(f[4]) * std::stod(f[5]))
        << lines[i];
  }
  // qkv, out, gate_up, down (forward and dgrad/wgrad of each: 12 shapes, out_proj's
  // forward and dgrad shared: 11), k_proj.recompute (up_proj.recompute is down_proj's
  // dgrad's shape), lm_head x 3.
  EXPECT_EQ(gemm_rows, 15);
}

TEST(KernelsCommand, FullCheckpointingAndGradAccumulationMultiplyCounts) {
  const Outcome full = csv({"workload.activation_checkpointing=full"});
  ASSERT_EQ(full.code, kExitOk) << full.err;
  const std::vector<std::string> lines = lines_of(full.out);
  // The whole forward but down_proj re-runs before each block's backward.
  EXPECT_EQ(row_named(lines, "qkv_proj"),
            "gemm,qkv_proj,bf16,16384,6144,4096,,,,,,,,64,824633720832");
  EXPECT_EQ(row_named(lines, "attention"),
            "attention,attention,bf16,,,,2,8192,32,8,128,true,fwd,64,1099511627776");

  const Outcome accum = csv({"workload.grad_accum=2"});
  ASSERT_EQ(accum.code, kExitOk) << accum.err;
  const std::vector<std::string> accum_lines = lines_of(accum.out);
  EXPECT_EQ(row_named(accum_lines, "qkv_proj"),
            "gemm,qkv_proj,bf16,16384,6144,4096,,,,,,,,64,824633720832");
  EXPECT_EQ(row_named(accum_lines, "lm_head"),
            "gemm,lm_head,bf16,16384,128256,4096,,,,,,,,2,17214228922368");
}

TEST(KernelsCommand, TensorParallelShapesArePerRank) {
  const Outcome r = csv({"workload.parallelism.tp=2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  // Column-parallel qkv: n / 2; 16 query and 4 KV heads per rank.
  EXPECT_EQ(row_named(lines, "qkv_proj"),
            "gemm,qkv_proj,bf16,16384,3072,4096,,,,,,,,32,412316860416");
  EXPECT_EQ(row_named(lines, "attention"),
            "attention,attention,bf16,,,,2,8192,16,4,128,true,fwd,32,549755813888");
}

// Float8: the blocks' GEMMs are FP8 rows (dtype fp8, marked in the table);
// the output head stays bf16.
TEST(KernelsCommand, Float8GemmsAreFp8Rows) {
  const Outcome r = csv({"workload.float8.recipe=tensorwise"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  EXPECT_EQ(row_named(lines, "qkv_proj"),
            "gemm,qkv_proj,fp8,16384,6144,4096,,,,,,,,32,824633720832");
  EXPECT_EQ(row_named(lines, "lm_head").substr(0, 17), "gemm,lm_head,bf16");
  const Outcome table = run({"kernels", kLlama8b, "--set", "workload.float8.recipe=tensorwise"});
  ASSERT_EQ(table.code, kExitOk) << table.err;
  EXPECT_NE(table.out.find("  qkv_proj (fp8)\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("  lm_head\n"), std::string::npos) << table.out;
}

TEST(KernelsCommand, TableByDefault) {
  const Outcome r = run({"kernels", kLlama8b});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (const char* piece :
       {"scenario: llama3_8b_fsdp_8xh100\n", "per rank and step: 1 micro-batch(es) of 2 x 8192",
        "\nGEMMs, C[m x n] = A[m x k] * B[k x n]\n", "\nattention (flash; heads per rank)\n",
        "   16384    6144    4096     32       824.6", "  qkv_proj\n", "  attention.bwd\n"}) {
    EXPECT_NE(r.out.find(piece), std::string::npos) << piece << "\n" << r.out;
  }
}

TEST(KernelsCommand, OutputFileIsTheCsv) {
  const ScratchDir dir;
  const std::string path = dir.file("kernels.csv");
  const Outcome r = run({"kernels", kLlama8b, "--csv", "-o", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_all(path), csv().out);
}

TEST(KernelsCommand, BadScenarioIsAConfigError) {
  const ScratchDir dir;
  const Outcome missing = run({"kernels", dir.file("none.yaml")});
  EXPECT_EQ(missing.code, kExitError);
  EXPECT_NE(missing.err.find("none.yaml"), std::string::npos) << missing.err;

  const Outcome bad = csv({"workload.seq_len=-1"});
  EXPECT_EQ(bad.code, kExitError);
  EXPECT_NE(bad.err.find("workload.seq_len"), std::string::npos) << bad.err;

  EXPECT_EQ(run({"kernels"}).code, kExitUsage);
  EXPECT_EQ(run({"kernels", kLlama8b, "--cvs"}).code, kExitUsage);
}

TEST(KernelsCommand, GroupsIdenticalGemmsAndKeepsPassesApart) {
  workloads::FsdpSchedule schedule;
  workloads::Kernel a;
  a.name = "a";
  a.cls = workloads::KernelClass::kGemm;
  a.m = 2;
  a.n = 3;
  a.k = 4;
  a.flops = 48;
  workloads::Kernel b = a;
  b.name = "b";
  workloads::Kernel fwd;
  fwd.name = "attention";
  fwd.cls = workloads::KernelClass::kAttention;
  fwd.batch = 1;
  fwd.seq = 8;
  fwd.heads = 2;
  fwd.kv_heads = 1;
  fwd.head_dim = 4;
  fwd.causal = true;
  workloads::Kernel bwd = fwd;
  bwd.name = "attention.bwd";
  workloads::Kernel norm;
  norm.name = "norm";
  norm.cls = workloads::KernelClass::kNorm;
  schedule.kernels = {a, b, fwd, bwd, norm};
  for (int32_t kernel : {0, 4, 2, 1, 0, 3}) {
    workloads::Task task;
    task.kernel = kernel;
    schedule.tasks.push_back(task);
  }
  workloads::Task gather;
  gather.kind = workloads::TaskKind::kAllGather;
  schedule.tasks.push_back(gather);

  const std::vector<KernelShape> shapes = distinct_kernel_shapes(schedule);
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].name, "a+b");
  EXPECT_EQ(shapes[0].count_per_step, 3);
  EXPECT_EQ(shapes[1].name, "attention");
  EXPECT_FALSE(shapes[1].backward);
  EXPECT_EQ(shapes[2].name, "attention.bwd");
  EXPECT_TRUE(shapes[2].backward);
  EXPECT_EQ(shapes[2].count_per_step, 1);
}

// The count column of the CSV row whose name starts with `name`, or -1.
int64_t csv_count(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("gemm," + name)) continue;
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    return std::stoll(cells.at(13));
  }
  return -1;
}

// Llama-3-8B in 2 pipeline stages of 16 blocks, 2 micro-batches: the output
// layer is on the last stage only, so a listing of stage 0 alone has no
// lm_head; the default lists every stage's rank and sums their counts.
TEST(KernelsCommand, PipelineStagesAreListedTogetherOrOneByOne) {
  const std::vector<std::string> pp2 = {"--set", "workload.parallelism.pp=2", "--csv"};
  auto kernels = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"kernels", kLlama8b};
    args.insert(args.end(), pp2.begin(), pp2.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome r = run(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return r.out;
  };
  const std::string all = kernels({});
  const std::string first = kernels({"--stage", "0"});
  const std::string last = kernels({"--stage", "1"});
  EXPECT_NE(all.find("one rank of each of the 2 pipeline stages"), std::string::npos) << all;
  EXPECT_NE(first.find("per rank of pipeline stage 0 of 2"), std::string::npos) << first;
  EXPECT_EQ(csv_count(first, "lm_head"), -1) << first;
  // The forward's shape (16,384 tokens x vocabulary x hidden), once per
  // micro-batch, on the last stage.
  EXPECT_EQ(csv_count(last, "lm_head"), 2) << last;
  EXPECT_EQ(csv_count(all, "lm_head"), 2) << all;
  EXPECT_EQ(csv_count(all, "qkv_proj"), csv_count(first, "qkv_proj") + csv_count(last, "qkv_proj"));
  EXPECT_GT(csv_count(first, "qkv_proj"), 0);

  const Outcome bad =
      run({"kernels", kLlama8b, "--set", "workload.parallelism.pp=2", "--stage", "2"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.err.find("option '--stage' expects a pipeline stage below pp 2, found 2"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace clustersim::cli
