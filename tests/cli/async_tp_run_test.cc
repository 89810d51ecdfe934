// `clustersim run` with async TP: the key needs TP and torch.compile, and a
// step with it reports less exposed TP than without (figures as the README
// reports them).
#include <gtest/gtest.h>

#include <string>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::run;

const std::string kTp = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_70b_fsdp_tp_64xh100.yaml";
const std::string kNoTp = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";

TEST(AsyncTpRun, NeedsTensorParallelismAndTorchCompile) {
  auto r = run({"run", kNoTp, "--set", "workload.parallelism.async_tp=true"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.parallelism.async_tp: expected false with tp 1 and "
                              "torch_compile false (async TP is an Inductor pass"))
      << r.err;
  r = run({"run", kTp, "--set", "workload.parallelism.async_tp=true", "--set",
           "workload.torch_compile=false"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "expected false with tp 8 and torch_compile false")) << r.err;
}

// The seconds on the report's "exposed TP" line.
double exposed_tp(const std::string& report) {
  const size_t at = report.find("exposed TP");
  EXPECT_NE(at, std::string::npos) << report;
  return at == std::string::npos ? 0 : std::stod(report.substr(at + 10));
}

TEST(AsyncTpRun, HidesTpCommunicationTheSynchronousStepExposes) {
  const auto sync = run({"run", kTp, "--no-wall-time"});
  const auto async =
      run({"run", kTp, "--no-wall-time", "--set", "workload.parallelism.async_tp=true"});
  ASSERT_EQ(sync.code, 0) << sync.err;
  ASSERT_EQ(async.code, 0) << async.err;
  // 70B, TP 8 x FSDP 8: 0.587 s of exposed TP synchronous, 0.314 s async
  // (each copy starting as its input is made, beside the local chunk; less
  // of it hidden than at a slower clock: the GEMMs it overlaps are shorter).
  EXPECT_NEAR(exposed_tp(sync.out), 0.587, 0.01);
  EXPECT_NEAR(exposed_tp(async.out), 0.314, 0.01);
}

}  // namespace
}  // namespace clustersim
