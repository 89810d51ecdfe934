#include "workloads/model/compute_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "hardware/hardware_profile.h"
#include "sim/check.h"

namespace clustersim::workloads {
namespace {

using ::testing::HasSubstr;

const std::string kHardwareDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/hardware/";

// The spec of a shipped profile, as every command builds it.
GpuComputeSpec shipped(const std::string& file) {
  return compute_spec_from_profile(collectives::load_hardware_profile(kHardwareDir + file));
}

// The same at the nominal clock, where the microbenchmarks the curves were
// fitted to ran (h100.yaml's 0.684 is for sustained training).
GpuComputeSpec microbenchmark(const std::string& file) {
  GpuComputeSpec spec = shipped(file);
  spec.sustained_clock = 1.0;
  return spec;
}

Kernel gemm_kernel(int64_t m, int64_t n, int64_t k) { return gemm("gemm", m, n, k, 2); }

TEST(ComputeModelTest, BigSquareGemmOnH100IsWorkOverPeakTimesCurve) {
  const GpuComputeSpec h100 = microbenchmark("h100.yaml");
  const double work = 2.0 * 8192.0 * 8192.0 * 8192.0;
  const double eff = h100.gemm.e_max * work / (work + h100.gemm.x_half);
  const Kernel g = gemm_kernel(8192, 8192, 8192);
  EXPECT_EQ(kernel_time(g, h100), sim::SimTime::from_seconds_rounded(work / (989e12 * eff)));

  // Against the measured row of scenarios/measurements/compute/gemm.csv
  // (H100-SXM fp16 8192^3, flexgen: 824.2 TFLOP/s).
  const double predicted = work / kernel_time(g, h100).to_seconds() / 1e12;
  EXPECT_NEAR(predicted / 824.2, 1.0, 0.15) << predicted;
}

TEST(ComputeModelTest, Fp8GemmRunsAtTheFp8PeakWithTheSameFixedTime) {
  const GpuComputeSpec h100 = microbenchmark("h100.yaml");
  const double work = 2.0 * 8192.0 * 8192.0 * 8192.0;
  Kernel g = gemm_kernel(8192, 8192, 8192);
  g.format = GemmFormat::kFp8;
  // x_half doubles with the peak (1979 / 989), e_max scaled by the fitted
  // 0.913: work / (1979e12 * 0.913 e_max * work / (work + 2.001 x_half)).
  EXPECT_EQ(h100.fp8_gemm_efficiency, 0.913);
  const double half = h100.gemm.x_half * 1979.0 / 989.0;
  const double eff = 0.913 * h100.gemm.e_max * work / (work + half);
  EXPECT_EQ(kernel_time(g, h100), sim::SimTime::from_seconds_rounded(work / (1979e12 * eff)));
  // The fixed part of the time, x_half / (peak e_max), is the bf16 GEMM's.
  EXPECT_NEAR(half / (1979e12 * h100.gemm.e_max), h100.gemm.x_half / (989e12 * h100.gemm.e_max),
              1e-15);
  // Large GEMMs approach twice the bf16 speed, small ones gain less.
  Kernel bf16 = gemm_kernel(8192, 8192, 8192);
  const double big = kernel_seconds(bf16, h100) / kernel_seconds(g, h100);
  Kernel small = gemm_kernel(512, 512, 512);
  const double small_bf16 = kernel_seconds(small, h100);
  small.format = GemmFormat::kFp8;
  const double small_gain = small_bf16 / kernel_seconds(small, h100);
  EXPECT_GT(big, 2 * 0.913 * 0.98);
  EXPECT_LT(big, 2 * 0.913);
  EXPECT_LT(small_gain, big);

  GpuComputeSpec a100 = microbenchmark("a100.yaml");
  EXPECT_EQ(a100.peak_fp8_flops, 0);
  EXPECT_THROW(kernel_seconds(g, a100), sim::InvariantError);
}

TEST(ComputeModelTest, ElementwiseKernelIsMemoryBound) {
  const GpuComputeSpec h100 = shipped("h100.yaml");
  Kernel add;
  add.name = "residual";
  add.cls = KernelClass::kElementwise;
  add.bytes = 3.0 * 2.0 * 4096.0 * 8192.0;  // two reads, one write, bf16
  add.flops = 4096.0 * 8192.0;
  EXPECT_EQ(kernel_time(add, h100),
            sim::SimTime::from_seconds_rounded(add.bytes / (3.35e12 * 0.9)));
  EXPECT_EQ(kernel_efficiency(add, h100), 1.0);
}

TEST(ComputeModelTest, CommActiveSlowsByTheFactorExactly) {
  for (const GpuComputeSpec& spec : {shipped("h100.yaml"), shipped("a100.yaml")}) {
    const Kernel g = gemm_kernel(4096, 4096, 4096);
    const double seconds =
        g.flops / (spec.peak_flops * spec.sustained_clock * kernel_efficiency(g, spec));
    EXPECT_EQ(kernel_time(g, spec, /*comm_active=*/false),
              sim::SimTime::from_seconds_rounded(seconds));
    EXPECT_EQ(kernel_time(g, spec, /*comm_active=*/true),
              sim::SimTime::from_seconds_rounded(seconds * spec.comm_overlap_slowdown));
    EXPECT_GE(spec.comm_overlap_slowdown, 1.05);
    EXPECT_LE(spec.comm_overlap_slowdown, 1.15);
  }
}

TEST(ComputeModelTest, EfficiencyBoundedAndMonotone) {
  for (const GpuComputeSpec& spec : {shipped("h100.yaml"), shipped("a100.yaml")}) {
    for (const EfficiencyCurve& curve : {spec.gemm, spec.attention_fwd, spec.attention_bwd}) {
      for (bool causal : {false, true}) {
        double previous = 0;
        for (double x = 0; x <= 1e18; x = x == 0 ? 1 : x * 1.5) {
          const double eff = curve.at(x, 128, causal);
          EXPECT_GT(eff, 0.0) << x;
          EXPECT_LE(eff, 1.0) << x;
          EXPECT_GE(eff, previous * (1 - 1e-15)) << x;  // a flat curve may round down
          previous = eff;
        }
      }
    }
    // Through kernels: a 1x1x1 GEMM and a huge one; GEMM efficiency grows with each dim.
    const double tiny = kernel_efficiency(gemm_kernel(1, 1, 1), spec);
    const double huge = kernel_efficiency(gemm_kernel(1 << 20, 1 << 20, 1 << 20), spec);
    EXPECT_GT(tiny, 0.0);
    EXPECT_LE(huge, 1.0);
    EXPECT_LE(kernel_efficiency(gemm_kernel(1024, 1024, 1024), spec),
              kernel_efficiency(gemm_kernel(1024, 2048, 1024), spec));
    EXPECT_GT(kernel_time(gemm_kernel(1, 1, 1), spec), sim::SimTime::zero());
  }
}

TEST(ComputeModelTest, AttentionUsesForwardOrBackwardCurveAndCausalHalvesSize) {
  const GpuComputeSpec h100 = shipped("h100.yaml");
  Kernel a;
  a.name = "attention";
  a.cls = KernelClass::kAttention;
  a.seq = 4096;
  a.causal = true;
  a.head_dim = 128;
  a.flops = 1e12;
  EXPECT_DOUBLE_EQ(kernel_efficiency(a, h100), h100.attention_fwd.at(2048.0, 128, true));
  // The causal term: e_max x / (x + x_half + causal_x_half), by hand.
  const EfficiencyCurve& f = h100.attention_fwd;
  EXPECT_DOUBLE_EQ(kernel_efficiency(a, h100),
                   f.e_max * 2048.0 / (2048.0 + f.x_half + f.causal_x_half));
  a.name = "attention.bwd";
  EXPECT_DOUBLE_EQ(kernel_efficiency(a, h100), h100.attention_bwd.at(2048.0, 128, true));
  a.causal = false;
  EXPECT_DOUBLE_EQ(kernel_efficiency(a, h100), h100.attention_bwd(4096.0));
}

// The shipped profiles give the specs of their datasheet figures and fits
// (tests/calibration/compute_fit_test.cc ties the fits to the measurements).
TEST(ComputeModelTest, ShippedProfilesGiveTheFittedSpecs) {
  const GpuComputeSpec h100 = shipped("h100.yaml");
  EXPECT_EQ(h100.hardware, "H100-SXM");
  EXPECT_EQ(h100.peak_flops, 989e12);
  EXPECT_EQ(h100.hbm_Bps, 3.35e12);
  EXPECT_EQ(h100.mem_efficiency, 0.90);
  EXPECT_EQ(h100.gemm.e_max, 0.832494164);
  EXPECT_EQ(h100.gemm.x_half, 7.84277222e9);
  EXPECT_EQ(h100.gemm.dim_half, 0.0);
  EXPECT_EQ(h100.attention_fwd.e_max, 0.356125565);
  EXPECT_EQ(h100.attention_fwd.x_half, 0.0);
  EXPECT_EQ(h100.attention_fwd.causal_x_half, 208.282794);
  EXPECT_EQ(h100.attention_bwd.e_max, 0.341220600);
  EXPECT_EQ(h100.attention_bwd.x_half, 294.309916);
  EXPECT_EQ(h100.comm_overlap_slowdown, 1.10);
  EXPECT_EQ(h100.sustained_clock, 0.897);  // measured: 1,642 / 1,830 MHz

  const GpuComputeSpec a100 = shipped("a100.yaml");
  EXPECT_EQ(a100.hardware, "A100-SXM");
  EXPECT_EQ(a100.peak_flops, 312e12);
  EXPECT_EQ(a100.hbm_Bps, 2.04e12);
  EXPECT_EQ(a100.mem_efficiency, 0.90);
  EXPECT_EQ(a100.gemm.e_max, 0.826944453);
  EXPECT_EQ(a100.gemm.x_half, 2.22239148e9);
  EXPECT_EQ(a100.gemm.dim_half, 119.817987);
  // fwd_bwd rows only: one curve serves both passes.
  EXPECT_EQ(a100.attention_fwd.e_max, 0.620275541);
  EXPECT_EQ(a100.attention_fwd.x_half, 242.301572);
  EXPECT_EQ(a100.attention_bwd.e_max, a100.attention_fwd.e_max);
  EXPECT_EQ(a100.attention_bwd.x_half, a100.attention_fwd.x_half);
  EXPECT_EQ(a100.comm_overlap_slowdown, 1.10);
  EXPECT_EQ(a100.sustained_clock, 1.0);  // assumed: its boost clock (not measured)
}

// A class's own memory efficiency times its kernels; the others keep
// gpu.mem_efficiency (bytes / (hbm * efficiency), by hand).
TEST(ComputeModelTest, AMemoryBoundKernelRunsAtItsClassEfficiency) {
  collectives::HardwareProfile profile;
  profile.gpu.peak_flops_per_s = 1000e12;
  profile.gpu.hbm_Bps = 4e12;
  profile.gpu.mem_efficiency = 0.8;
  profile.gpu.mem_efficiency_by_class.norm = 0.5;
  profile.gpu.mem_efficiency_by_class.optimizer = 0.75;
  profile.gpu.gemm = {0.7, 1e9};
  const GpuComputeSpec spec = compute_spec_from_profile(profile);
  const double bytes = 3e9;
  const Kernel norm = pointwise("attn_norm.pow", KernelClass::kNorm, 1e3, bytes);
  const Kernel add = pointwise("attn_residual", KernelClass::kElementwise, 1e3, bytes);
  const Kernel adam = pointwise("adamw", KernelClass::kOptimizer, 1e3, bytes);
  EXPECT_EQ(kernel_seconds(norm, spec, false), bytes / (4e12 * 0.5));   // 1.5 ms
  EXPECT_EQ(kernel_seconds(add, spec, false), bytes / (4e12 * 0.8));    // 0.9375 ms
  EXPECT_EQ(kernel_seconds(adam, spec, false), bytes / (4e12 * 0.75));  // 1 ms
  EXPECT_EQ(memory_efficiency(KernelClass::kLoss, spec), 0.8);
  EXPECT_EQ(memory_efficiency(KernelClass::kNorm, spec), 0.5);
  // Every class of the profile reaches the kernels named after it
  // (compute_spec_from_profile matches them by name): each set alone.
  for (const collectives::MemEfficiencyClassKey& k : collectives::kMemEfficiencyClasses) {
    SCOPED_TRACE(std::string(k.name));
    collectives::HardwareProfile one = profile;
    one.gpu.mem_efficiency_by_class = {};
    one.gpu.mem_efficiency_by_class.*k.field = 0.25;
    const GpuComputeSpec s = compute_spec_from_profile(one);
    int matched = 0;
    for (size_t c = 0; c < kKernelClassCount; ++c) {
      const auto cls = static_cast<KernelClass>(c);
      const bool own = kernel_class_name(cls) == k.name;
      matched += own ? 1 : 0;
      EXPECT_EQ(memory_efficiency(cls, s), own ? 0.25 : 0.8) << kernel_class_name(cls);
    }
    EXPECT_EQ(matched, 1);
  }
}

// h200_measured.yaml: the figures measured on one H200 (scenarios/measurements/
// 2026-12-04_h200-sxm/), each derivation in the profile's comments.
TEST(ComputeModelTest, TheMeasuredH200ProfileHoldsItsMeasurements) {
  const GpuComputeSpec spec = shipped("h200_measured.yaml");
  EXPECT_EQ(spec.sustained_clock, 0.897);  // 1,642 MHz in training / 1,830 MHz
  EXPECT_NEAR(spec.sustained_clock, 1642.0 / 1830.0, 0.0005);
  EXPECT_EQ(spec.gemm.e_max, 0.874286345);  // fitted to the clock-scaled GEMM rows
  EXPECT_EQ(spec.mem_efficiency, 0.864);    // 4,148 GB/s copy / 4.8 TB/s
  EXPECT_EQ(memory_efficiency(KernelClass::kNorm, spec), 0.558);
  EXPECT_EQ(memory_efficiency(KernelClass::kElementwise, spec), 0.845);
  EXPECT_EQ(memory_efficiency(KernelClass::kLoss, spec), 0.540);
  EXPECT_EQ(memory_efficiency(KernelClass::kOptimizer, spec), 0.754);
  EXPECT_EQ(memory_efficiency(KernelClass::kEmbedding, spec), 0.864);
  // cuDNN's attention, fitted to the clock-scaled rows.
  EXPECT_EQ(spec.attention_fwd.e_max, 1.0);
  EXPECT_EQ(spec.attention_bwd.e_max, 0.810619147);
}

TEST(ComputeModelTest, SpecFromProfileCopiesTheGpuSection) {
  collectives::HardwareProfile profile;
  profile.gpu.curves_fitted_to = "X-1";
  profile.gpu.peak_flops_per_s = 500e12;
  profile.gpu.hbm_Bps = 2e12;
  profile.gpu.mem_efficiency = 0.8;
  profile.gpu.gemm = {0.7, 1e9};
  profile.gpu.attention_fwd = {0.5, 100};
  profile.gpu.attention_bwd = {0.4, 200};
  profile.gpu.comm_overlap_slowdown = 1.2;
  GpuComputeSpec spec = compute_spec_from_profile(profile);
  profile.gpu.curves_fitted_to = "changed";  // the spec owns its copy
  EXPECT_EQ(spec.hardware, "X-1");
  EXPECT_EQ(spec.peak_flops, 500e12);
  EXPECT_EQ(spec.hbm_Bps, 2e12);
  EXPECT_EQ(spec.mem_efficiency, 0.8);
  EXPECT_EQ(spec.gemm.e_max, 0.7);
  EXPECT_EQ(spec.gemm.x_half, 1e9);
  EXPECT_EQ(spec.attention_fwd.x_half, 100);
  EXPECT_EQ(spec.attention_bwd.e_max, 0.4);
  EXPECT_EQ(spec.comm_overlap_slowdown, 1.2);
}

// H200 and torchtitan's H100 share H100 SXM's curves over their own peak and HBM.
TEST(ComputeModelTest, DerivedProfilesScaleH100ByTheirOwnPeak) {
  const GpuComputeSpec h100 = microbenchmark("h100.yaml");
  const GpuComputeSpec h200 = shipped("h200.yaml");
  const GpuComputeSpec titan = shipped("h100_96gb_500w.yaml");
  const Kernel g = gemm_kernel(8192, 8192, 8192);
  // Both 700 W GH100 parts sustain 0.897 of the nominal clock in training
  // (measured on the H200, h100.yaml); the 500 W part 0.870 (derived from
  // its power limit); the microbenchmark fit is at 1.
  const GpuComputeSpec h100_training = shipped("h100.yaml");
  EXPECT_EQ(h100_training.sustained_clock, 0.897);
  EXPECT_EQ(h200.sustained_clock, 0.897);
  EXPECT_EQ(kernel_time(g, h200), kernel_time(g, h100_training));
  EXPECT_EQ(kernel_time(g, h200), sim::SimTime::from_seconds_rounded(
                                      g.flops / (989e12 * 0.897 * kernel_efficiency(g, h100))));
  EXPECT_EQ(kernel_time(g, titan), sim::SimTime::from_seconds_rounded(
                                       g.flops / (912e12 * 0.870 * kernel_efficiency(g, h100))));
  // A software stack's efficiency multiplies the tensor-core rate, and only
  // it: the GEMM's time grows by 1 / 0.8, the memory-bound add's does not.
  GpuComputeSpec stacked = h100_training;
  stacked.stack_efficiency = 0.8;
  EXPECT_EQ(kernel_time(g, stacked),
            sim::SimTime::from_seconds_rounded(
                g.flops / (989e12 * 0.897 * 0.8 * kernel_efficiency(g, h100))));
  Kernel add;
  add.name = "residual";
  add.cls = KernelClass::kElementwise;
  add.bytes = 1e9;
  EXPECT_EQ(kernel_time(add, h200), sim::SimTime::from_seconds_rounded(1e9 / (4.8e12 * 0.9)));
  EXPECT_EQ(kernel_time(add, titan), sim::SimTime::from_seconds_rounded(1e9 / (2.4e12 * 0.9)));
  EXPECT_EQ(kernel_time(add, stacked), kernel_time(add, h100_training));
}

}  // namespace
}  // namespace clustersim::workloads
