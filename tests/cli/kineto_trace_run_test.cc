// `run --trace FILE --trace-format kineto`: torch.profiler's layout, which
// clustersim's own Kineto reader reads back; `validate` of the simulated
// trace against its own scenario is exact in every kernel class and the step.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::run;
using test_support::ScratchDir;

const std::string k8b = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";

TEST(KinetoTraceRun, ValidateOfItsOwnTraceIsExact) {
  const ScratchDir dir;
  const std::string trace = dir.file("rank0.json");
  const auto r = run({"run", k8b, "--no-wall-time", "--trace", trace, "--trace-format", "kineto"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto v = run({"validate", k8b, trace});
  ASSERT_EQ(v.code, 0) << v.err;
  // gemm, flash attention, the three NCCL kinds, optimizer, elementwise,
  // FSDP2's copies (inside the FSDP::... ranges the trace writes), step.
  EXPECT_TRUE(contains(v.out, "cases=9 median_abs_error=0.00% max_abs_error=0.00%")) << v.out;
  EXPECT_TRUE(contains(v.out, "fsdp_copy")) << v.out;
  EXPECT_TRUE(contains(v.out, "flash_attention")) << v.out;
}

// Several ranks: one file each, FILE.rankN, each validated against its own
// rank; rank 5 sits on GPU 5.
TEST(KinetoTraceRun, OneFilePerTracedRank) {
  const ScratchDir dir;
  const auto r = run({"run", k8b, "--no-wall-time", "--trace", dir.file("t.json"), "--trace-ranks",
                      "0,5", "--trace-format", "kineto"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto v = run({"validate", k8b, dir.file("t.rank5.json"), "--rank", "5"});
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(contains(v.out, "max_abs_error=0.00%")) << v.out;
  // Without --rank each trace is compared with the rank its distributedInfo
  // names, both in one simulation: exact again (the GPUs' speed spread
  // makes rank 5's step differ from rank 0's).
  const auto both = run({"validate", k8b, dir.file("t.rank0.json"), dir.file("t.rank5.json")});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_TRUE(contains(both.out, "t.rank5.json against simulated rank 5:")) << both.out;
  EXPECT_TRUE(contains(both.out, "cases=") && contains(both.out, "max_abs_error=0.00%"))
      << both.out;
  const auto crossed = run({"validate", k8b, dir.file("t.rank5.json"), "--rank", "0"});
  ASSERT_EQ(crossed.code, 0) << crossed.err;
  EXPECT_FALSE(contains(crossed.out, "max_abs_error=0.00%")) << crossed.out;
  EXPECT_TRUE(contains(test_support::read_all(dir.file("t.rank5.json")), "\"rank\":5"));
  EXPECT_TRUE(contains(test_support::read_all(dir.file("t.rank0.json")), "\"pid\":0,\"tid\":7"));
}

TEST(KinetoTraceRun, FormatErrorsAreUsageErrors) {
  auto r = run({"run", k8b, "--trace", "/tmp/x.json", "--trace-format", "perfetto"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "option '--trace-format' expects chrome or kineto, found 'perfetto'"))
      << r.err;
  r = run({"run", k8b, "--trace-format", "kineto"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "option '--trace-format' needs '--trace'")) << r.err;
}

}  // namespace
}  // namespace clustersim
