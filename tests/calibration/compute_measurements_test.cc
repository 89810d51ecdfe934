#include "calibration/compute_measurements.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace clustersim::calibration {
namespace {

using ::testing::HasSubstr;

const std::string kCompute =
    std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/measurements/compute/";

std::string error_of(std::string_view text) {
  try {
    parse_attention_csv(text, "a.csv");
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeMeasurements, ReadsTheReferenceCsvs) {
  const std::vector<GemmMeasurement> gemm = read_gemm_csv(kCompute + "gemm.csv");
  ASSERT_EQ(gemm.size(), 53u);
  EXPECT_EQ(gemm[0].hardware, "A100-SXM");
  EXPECT_EQ(gemm[0].where.line, 14);  // after 12 comment lines and the header
  EXPECT_EQ(gemm[14].hardware, "B200");
  EXPECT_EQ(gemm[44].dtype, "fp8");
  EXPECT_EQ(gemm[7].n, 192);
  EXPECT_EQ(gemm[7].smallest_dim(), 192);
  EXPECT_EQ(gemm[0].source, "azure-cublaslt");
  EXPECT_DOUBLE_EQ(gemm[0].flops(), 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(gemm[0].seconds(), 2.0 * 1024 * 1024 * 1024 / 119.4e12);
  const std::vector<AttentionMeasurement> attention =
      read_attention_csv(kCompute + "attention.csv");
  ASSERT_EQ(attention.size(), 39u);
  EXPECT_EQ(attention[6].pass, "fwd_bwd");
  EXPECT_TRUE(attention[6].causal);
  EXPECT_EQ(attention[6].seq, 512);
}

TEST(ComputeMeasurements, ErrorsNameFileLineAndColumn) {
  const std::string header = "# comment\nhardware,kernel,pass,head_dim,causal,seq,tflops\n";
  EXPECT_THAT(error_of(header + "H100-SXM,FA2,fwd,128,maybe,512,1\n"),
              HasSubstr("a.csv:3:22: error: causal: expected true or false, found 'maybe'"));
  const std::string both = error_of(header + "H100-SXM,FA2,back,128,true,512,1\n" +
                                    "H100-SXM,FA2,fwd,128,true,-5,1\n" + "H100-SXM,FA2\n");
  EXPECT_THAT(both, HasSubstr("a.csv:3:14: error: pass: expected one of fwd, fwd_bwd"));
  EXPECT_THAT(both, HasSubstr("a.csv:4:27: error: seq: expected a positive integer, found '-5'"));
  EXPECT_THAT(both, HasSubstr("a.csv:5:1: error: expected 7 comma-separated fields, found 2"));
  EXPECT_THAT(error_of("hardware,pass\n"),
              HasSubstr("a.csv:1:1: error: expected a header with the column 'kernel'"));
  EXPECT_THAT(error_of("# only a comment\n"), HasSubstr("a.csv: error: expected a header line"));
  try {
    parse_gemm_csv("hardware,dtype,m,n,k,tflops\nH100,bf16,1,2,3,nan\n", "g.csv");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("g.csv:2:17: error: tflops: expected a positive number"));
  }
  try {
    read_gemm_csv("/nonexistent/gemm.csv");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/gemm.csv"));
  }
}

// A GEMM faster than the part's dense peak cannot be: every such row is an
// error at its line; a row at the peak, or no peak known, passes.
TEST(ComputeMeasurements, GemmRowsAboveThePeakAreErrors) {
  const std::vector<GemmMeasurement> rows = parse_gemm_csv(
      "hardware,dtype,m,n,k,tflops\nH,bf16,8,8,8,989\nH,bf16,8,8,8,7000\n"
      "H,bf16,8,8,8,989.5\n",
      "g.csv");
  try {
    check_below_peak(rows, 989.0);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "g.csv:3:1: error: tflops: expected at most the profile's dense peak of 989.0 "
              "TFLOP/s (gpu.peak_tflops), found 7000.0 (a unit or shape error?)\n"
              "g.csv:4:1: error: tflops: expected at most the profile's dense peak of 989.0 "
              "TFLOP/s (gpu.peak_tflops), found 989.5 (a unit or shape error?)");
  }
  EXPECT_NO_THROW(check_below_peak({rows[0]}, 989.0));
  EXPECT_NO_THROW(check_below_peak(rows, 0));
}

// sm_clock_mhz is optional: absent or empty reads 0, a number is kept, a
// word is an error at its column.
TEST(ComputeMeasurements, TheSmClockColumnIsOptional) {
  const std::vector<GemmMeasurement> rows = parse_gemm_csv(
      "hardware,dtype,m,n,k,tflops,sm_clock_mhz\nH200-SXM,bf16,8,8,8,1,1485\n"
      "H200-SXM,bf16,8,8,8,1,\n",
      "g.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].sm_clock_mhz, 1485);
  EXPECT_EQ(rows[1].sm_clock_mhz, 0);
  EXPECT_EQ(
      parse_gemm_csv("hardware,dtype,m,n,k,tflops\nH,bf16,8,8,8,1\n", "g.csv")[0].sm_clock_mhz, 0);
  try {
    parse_attention_csv(
        "hardware,kernel,pass,head_dim,causal,seq,tflops,sm_clock_mhz\n"
        "H,FA2,fwd,128,true,512,1,fast\n",
        "a.csv");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("a.csv:2:26: error: sm_clock_mhz: expected a positive number, found "
                          "'fast'"));
  }
}

// A column named twice made the header wider than its names and a short
// row was read past its end (found by tests/fuzz/measurements_fuzz).
TEST(ComputeMeasurements, AColumnNamedTwiceIsAnError) {
  try {
    parse_gemm_csv("hardware,dtype,m,n,k,m,tflops\nH100,bf16,1,2,3,4,5\n", "g.csv");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("g.csv:1:22: error: expected each column once in the header, found 'm' "
                          "again"));
  }
}

TEST(ComputeMeasurements, LayoutsAreRecognisedByTheirHeader) {
  EXPECT_TRUE(looks_like_gemm_csv("# x\nhardware,dtype,m,n,k,tflops\n"));
  EXPECT_FALSE(looks_like_attention_csv("# x\nhardware,dtype,m,n,k,tflops\n"));
  EXPECT_TRUE(looks_like_attention_csv("hardware,kernel,pass,head_dim,causal,seq,tflops\n"));
  EXPECT_FALSE(looks_like_gemm_csv("op,gpus,gpus_per_node,bytes,time_us\n"));
}

}  // namespace
}  // namespace clustersim::calibration
