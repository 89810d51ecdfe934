#include "calibration/compute_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "hardware/hardware_profile.h"

namespace clustersim::calibration {
namespace {

using collectives::EfficiencyCurveParams;
using collectives::GpuProfile;
using ::testing::HasSubstr;

const std::string kDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";

GpuProfile h100_gpu() {
  return collectives::load_hardware_profile(kDir + "hardware/h100.yaml").gpu;
}

// A GEMM row measured on a GPU whose true curve is `truth`.
GemmMeasurement gemm_row(const GpuProfile& truth, int64_t m, int64_t n, int64_t k, int line) {
  GemmMeasurement row;
  row.where = {"synthetic.csv", line, 1};
  row.hardware = "H100-SXM";
  row.dtype = "bf16";
  row.m = m;
  row.n = n;
  row.k = k;
  row.tflops = 1;  // predicted_tflops needs only the shape and dtype
  row.tflops = predicted_tflops(row, truth);
  return row;
}

std::vector<GemmMeasurement> synthetic_gemms(const GpuProfile& truth) {
  std::vector<GemmMeasurement> rows;
  int line = 2;
  for (int64_t s : {1024, 2048, 4096, 8192, 16384})
    rows.push_back(gemm_row(truth, s, s, s, line++));
  rows.push_back(gemm_row(truth, 16384, 256, 4096, line++));
  rows.push_back(gemm_row(truth, 65536, 512, 8192, line++));
  rows.push_back(gemm_row(truth, 8192, 28672, 8192, line++));
  return rows;
}

TEST(ComputeFit, GemmFitRecoversKnownCurve) {
  GpuProfile truth = h100_gpu();
  truth.gemm = {.e_max = 0.81, .x_half = 5e9, .dim_half = 96, .causal_x_half = 0};
  GpuProfile base = h100_gpu();  // a different starting curve
  const GemmCurveFit fit = fit_gemm_curve(synthetic_gemms(truth), base);
  EXPECT_NEAR(fit.curve.e_max / 0.81, 1, 1e-6);
  EXPECT_NEAR(fit.curve.x_half / 5e9, 1, 1e-5);
  EXPECT_NEAR(fit.curve.dim_half / 96, 1, 1e-5);
  EXPECT_TRUE(fit.report.outliers.empty());
  EXPECT_EQ(fit.report.cases, 8);
}

TEST(ComputeFit, GemmOutlierIsIgnored) {
  GpuProfile truth = h100_gpu();
  truth.gemm = {.e_max = 0.81, .x_half = 5e9, .dim_half = 96, .causal_x_half = 0};
  std::vector<GemmMeasurement> rows = synthetic_gemms(truth);
  rows.push_back(gemm_row(truth, 12288, 12288, 12288, 20));
  rows.back().tflops *= 0.5;  // a throttled GPU
  const GemmCurveFit fit = fit_gemm_curve(rows, h100_gpu());
  EXPECT_NEAR(fit.curve.e_max / 0.81, 1, 1e-6);
  EXPECT_NEAR(fit.curve.dim_half / 96, 1, 1e-4);
  ASSERT_EQ(fit.report.outliers.size(), 1u);
  EXPECT_EQ(fit.report.outliers[0].line, 20);
}

TEST(ComputeFit, EfficiencyAboveOneIsBoundedAndReported) {
  GpuProfile truth = h100_gpu();
  truth.gemm = {.e_max = 1.0, .x_half = 0, .dim_half = 0, .causal_x_half = 0};
  std::vector<GemmMeasurement> rows = synthetic_gemms(truth);
  for (GemmMeasurement& row : rows) row.tflops *= 1.2;  // faster than the peak: a wrong peak
  const GemmCurveFit fit = fit_gemm_curve(rows, h100_gpu());
  EXPECT_DOUBLE_EQ(fit.curve.e_max, 1.0);
  EXPECT_THAT(fit.report.notes, testing::Contains(HasSubstr("efficiency <= 1")));
}

TEST(ComputeFit, AttentionFitRecoversForwardBackwardAndCausalTerms) {
  GpuProfile truth = h100_gpu();
  truth.attention_fwd = {.e_max = 0.6, .x_half = 150, .dim_half = 20, .causal_x_half = 100};
  truth.attention_bwd = {.e_max = 0.5, .x_half = 300, .dim_half = 40, .causal_x_half = 50};
  std::vector<AttentionMeasurement> rows;
  int line = 2;
  for (const char* pass : {"fwd", "fwd_bwd"}) {
    for (bool causal : {false, true}) {
      for (int64_t head_dim : {64, 128}) {
        for (int64_t seq : {512, 2048, 8192}) {
          AttentionMeasurement row;
          row.where = {"synthetic.csv", line++, 1};
          row.hardware = "H100-SXM";
          row.kernel = "FA2";
          row.pass = pass;
          row.head_dim = head_dim;
          row.causal = causal;
          row.seq = seq;
          row.tflops = predicted_tflops(row, truth);
          rows.push_back(row);
        }
      }
    }
  }
  const AttentionCurveFit fit = fit_attention_curves(rows, h100_gpu());
  const auto expect_curve = [](const EfficiencyCurveParams& got,
                               const EfficiencyCurveParams& want) {
    EXPECT_NEAR(got.e_max / want.e_max, 1, 1e-6);
    EXPECT_NEAR(got.x_half / want.x_half, 1, 1e-5);
    EXPECT_NEAR(got.dim_half / want.dim_half, 1, 1e-5);
    EXPECT_NEAR(got.causal_x_half / want.causal_x_half, 1, 1e-5);
  };
  expect_curve(fit.fwd, truth.attention_fwd);
  expect_curve(fit.bwd, truth.attention_bwd);
  EXPECT_TRUE(fit.report.notes.empty()) << fit.report.notes.front();
}

TEST(ComputeFit, OneHeadDimLeavesItsTermAtTheBaseValue) {
  GpuProfile truth = h100_gpu();
  std::vector<AttentionMeasurement> rows;
  for (int64_t seq : {512, 1024, 4096, 16384}) {
    AttentionMeasurement row;
    row.where = {"x.csv", static_cast<int>(seq), 1};
    row.pass = "fwd_bwd";
    row.head_dim = 128;
    row.causal = true;
    row.seq = seq;
    row.tflops = predicted_tflops(row, truth);
    rows.push_back(row);
  }
  const AttentionCurveFit fit = fit_attention_curves(rows, truth);
  EXPECT_EQ(fit.fwd.dim_half, truth.attention_fwd.dim_half);
  EXPECT_THAT(fit.report.notes, testing::Contains(HasSubstr("head_dim_half: not identifiable")));
  EXPECT_THAT(fit.report.notes, testing::Contains(HasSubstr("no fwd rows")));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The fits on the reference data (copies in scenarios/measurements/compute)
// meet issue 7's bar: median |error| <= 5% for GEMM and attention, in sample.
TEST(ComputeFit, ReferenceDataFitsWithinFivePercent) {
  const std::vector<GemmMeasurement> gemm = read_gemm_csv(kDir + "measurements/compute/gemm.csv");
  const std::vector<AttentionMeasurement> attention =
      read_attention_csv(kDir + "measurements/compute/attention.csv");
  for (const char* part : {"h100", "a100"}) {
    const GpuProfile base =
        collectives::load_hardware_profile(kDir + "hardware/" + part + ".yaml").gpu;
    std::vector<GemmMeasurement> g;
    for (const GemmMeasurement& row : gemm) {
      if (row.hardware == base.curves_fitted_to && is_16_bit_dtype(row.dtype)) g.push_back(row);
    }
    std::vector<AttentionMeasurement> a;
    for (const AttentionMeasurement& row : attention) {
      if (row.hardware == base.curves_fitted_to && row.kernel == "FA2") a.push_back(row);
    }
    GpuProfile fitted = base;
    fitted.gemm = fit_gemm_curve(g, base).curve;
    const AttentionCurveFit att = fit_attention_curves(a, base);
    fitted.attention_fwd = att.fwd;
    fitted.attention_bwd = att.bwd;
    std::vector<double> ge, ae;
    for (const GemmMeasurement& row : g) {
      ge.push_back(std::fabs(row.tflops / predicted_tflops(row, fitted) - 1));
    }
    for (const AttentionMeasurement& row : a) {
      ae.push_back(std::fabs(row.tflops / predicted_tflops(row, fitted) - 1));
    }
    std::printf("%s gemm e_max %.4f x_half %.4g min_dim_half %.4g: median %.2f%% (%zu rows)\n",
                part, fitted.gemm.e_max, fitted.gemm.x_half, fitted.gemm.dim_half, 100 * median(ge),
                ge.size());
    std::printf("%s attention: median %.2f%% (%zu rows)\n", part, 100 * median(ae), ae.size());
    EXPECT_LE(median(ge), 0.05) << part;
    EXPECT_LE(median(ae), 0.05) << part;
  }
}

}  // namespace
}  // namespace clustersim::calibration

namespace clustersim::calibration {
namespace {

// Rows that record their SM clock are scaled to the clock behind the peak:
// 700 TF/s at 1,500 MHz is 700 x 1830 / 1500 = 854 TF/s at 1,830 MHz; a row
// without a clock, and any row without a profile clock, stays as measured.
TEST(ComputeFit, RowsAreScaledFromTheirClockToThePeakClock) {
  std::vector<GemmMeasurement> gemm(2);
  gemm[0].tflops = 700;
  gemm[0].sm_clock_mhz = 1500;
  gemm[1].tflops = 700;
  std::vector<GemmMeasurement> unchanged = gemm;
  EXPECT_EQ(at_peak_clock(unchanged, 0), 0);
  EXPECT_EQ(unchanged[0].tflops, 700);
  EXPECT_EQ(at_peak_clock(gemm, 1830), 1);
  EXPECT_DOUBLE_EQ(gemm[0].tflops, 854);
  EXPECT_EQ(gemm[0].sm_clock_mhz, 1830);
  EXPECT_EQ(gemm[1].tflops, 700);
  std::vector<AttentionMeasurement> attention(1);
  attention[0].tflops = 500;
  attention[0].sm_clock_mhz = 1965;
  EXPECT_EQ(at_peak_clock(attention, 1830), 1);
  EXPECT_DOUBLE_EQ(attention[0].tflops, 500 * 1830.0 / 1965.0);
}

// hardware/h200_measured.yaml's GEMM and attention curves are what
// calibrate fits today to the clocked rows measured on the H200 (fitted:
// checked tightly, so that a change to the fit or the rows shows here).
TEST(ComputeFit, FittedH200CurvesStayFittedToTheirClockedRows) {
  const GpuProfile profile =
      collectives::load_hardware_profile(kDir + "hardware/h200_measured.yaml").gpu;
  const std::string run = kDir + "measurements/2026-12-04_h200-sxm/run4/";
  std::vector<GemmMeasurement> gemm = read_gemm_csv(run + "gemm_clocked.csv");
  std::vector<AttentionMeasurement> attention =
      read_attention_csv(run + "attention_cudnn_clocked.csv");
  ASSERT_EQ(gemm.size(), 117u);
  ASSERT_EQ(attention.size(), 64u);
  EXPECT_EQ(at_peak_clock(gemm, profile.peak_clock_mhz), 117);
  EXPECT_EQ(at_peak_clock(attention, profile.peak_clock_mhz), 64);
  const EfficiencyCurveParams g = fit_gemm_curve(gemm, profile).curve;
  EXPECT_NEAR(g.e_max / profile.gemm.e_max, 1.0, 1e-6);
  EXPECT_NEAR(g.x_half / profile.gemm.x_half, 1.0, 1e-6);
  EXPECT_NEAR(g.dim_half / profile.gemm.dim_half, 1.0, 1e-6);
  const AttentionCurveFit a = fit_attention_curves(attention, profile);
  EXPECT_NEAR(a.fwd.e_max, profile.attention_fwd.e_max, 1e-6);
  EXPECT_NEAR(a.fwd.causal_x_half / profile.attention_fwd.causal_x_half, 1.0, 1e-6);
  EXPECT_NEAR(a.bwd.e_max / profile.attention_bwd.e_max, 1.0, 1e-6);
  EXPECT_NEAR(a.bwd.x_half / profile.attention_bwd.x_half, 1.0, 1e-6);
}

}  // namespace
}  // namespace clustersim::calibration
