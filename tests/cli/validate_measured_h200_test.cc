// The step model against the seven training steps profiled on one H200
// (scenarios/measurements/2026-12-04_h200-sxm/), with hardware/
// h200_measured.yaml: every constant of that profile was measured on the
// same GPU by microbenchmarks or a clock log, none fitted to these steps
// (the sustained clock was read from profile_steady's clock log, the only
// link between a step and the profile). These are validation figures: the
// bounds are the errors measured when the profile was made (README,
// "Measured on an H200"), with a little room, so that a change that makes
// the model worse on real steps fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

const std::string kDir =
    std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/measurements/2026-12-04_h200-sxm/";

// The error column (predicted / measured time - 1) of one class's row of
// `validate SCENARIO TRACE`.
double class_error(const std::string& report, const std::string& cls) {
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string name, measured, simulated, error;
    if (!(fields >> name >> measured >> simulated >> error) || name != cls) continue;
    return std::stod(error) / 100.0;
  }
  ADD_FAILURE() << "no row for " << cls << " in\n" << report;
  return 1e9;
}

struct Case {
  const char* folder;
  double step_error_min;  // the measured error minus a point, and so on
  double step_error_max;
  // AdamW's implementation: foreach's eight passes (80 bytes per parameter
  // with fp32 gradients) within 4% of the 1,072-1,456 multi_tensor_apply
  // launches measured (+2.2% to +3.3%); fused (28 bytes) within 11% (-9.5%).
  double optimizer_error_min = 0.0;
  double optimizer_error_max = 0.04;
  // Everything else but FSDP2's copies: norms, rotary, SwiGLU, residuals, the
  // loss, Inductor's kernels: -0.9% to +3.6% measured on torchtitan's
  // kernels; -32% with the script's real-pair rotary (profile_eager).
  double elementwise_error_min = -0.02;
  double elementwise_error_max = 0.05;
};

// Step errors: -10.7% (profile_eager), -6.2%, -7.9%, -5.4%, -7.3%
// (compiled), -8.8% (fused AdamW), -8.1% (70B width). All negative: FSDP2 on
// one rank still casts and copies every parameter for its all-gathers (the
// copy-in the model leaves out as 1 / shard_group of the bytes, and the
// one-rank all-gather, a device-to-device copy): 20-30 ms a step.
// profile_eager ran nn.RMSNorm (fused in PyTorch 2.11) and the script's
// real-pair rotary, which the model does not have (its scenario runs the
// complex rotary's kernels instead): about 14 ms of elementwise work short.
// Until 2026-12-04 its scenario ran the composite norm, whose extra kernels
// hid that (-2.8%).
const std::vector<Case> kCases = {
    {"profile_eager", -0.12, -0.095, 0.0, 0.04, -0.35, -0.27},           {"profile_torchtitan_eager", -0.08, -0.04},
    {"profile_steady", -0.095, -0.06},        {"profile_torchtitan_full_ac", -0.07, -0.035},
    {"profile_compile", -0.085, -0.06},       {"run4/profile_fused", -0.105, -0.07, -0.11, -0.07},
    {"run4/profile_70b_width", -0.10, -0.06},
};

TEST(ValidateMeasuredH200, ProfiledStepsAreWithinTheirMeasuredErrors) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.folder);
    const std::string folder = kDir + c.folder + "/";
    const test_support::Outcome r =
        test_support::run({"validate", folder + "scenario.yaml", folder + "trace_rank0.json.gz"});
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string& report = r.out;
    const double step = class_error(report, "step");
    EXPECT_GE(step, c.step_error_min) << report;
    EXPECT_LE(step, c.step_error_max) << report;
    // GEMMs within 3% (measured: -2.2% to +1.7%), attention within 7%
    // (+1.4% to +5.5%: cuDNN's curves fitted to microbenchmark rows, its
    // backward's dot_do_o and convert_dq kernels counted with it).
    EXPECT_LE(std::abs(class_error(report, "gemm")), 0.03) << report;
    const double attention = class_error(report, "flash_attention");
    EXPECT_GE(attention, 0.0) << report;
    EXPECT_LE(attention, 0.07) << report;
    const double optimizer = class_error(report, "optimizer");
    EXPECT_GE(optimizer, c.optimizer_error_min) << report;
    EXPECT_LE(optimizer, c.optimizer_error_max) << report;
    const double elementwise = class_error(report, "elementwise");
    EXPECT_GE(elementwise, c.elementwise_error_min) << report;
    EXPECT_LE(elementwise, c.elementwise_error_max) << report;
    // FSDP2's copies (launched inside FSDP::... ranges): on one rank it
    // casts and copies every parameter around its collectives, which the
    // model counts as 1 / shard_group of them and leaves out: -74% to -76%.
    const double fsdp_copy = class_error(report, "fsdp_copy");
    EXPECT_GE(fsdp_copy, -0.80) << report;
    EXPECT_LE(fsdp_copy, -0.70) << report;
  }
}

}  // namespace
}  // namespace clustersim
