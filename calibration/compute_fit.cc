#include "calibration/compute_fit.h"

#include <cmath>
#include <cstdio>

#include "sim/check.h"
#include "workloads/model/compute_model.h"

namespace clustersim::calibration {

namespace {

using collectives::EfficiencyCurveParams;
using collectives::GpuProfile;

workloads::GpuComputeSpec nominal_clock_spec(const GpuProfile& gpu) {
  collectives::HardwareProfile profile;
  profile.gpu = gpu;
  workloads::GpuComputeSpec spec = workloads::compute_spec_from_profile(profile);
  spec.sustained_clock = 1.0;
  return spec;
}

double dtype_bytes(const std::string& dtype) {
  if (dtype == "fp8" || dtype == "e4m3" || dtype == "e5m2" || dtype == "int8") return 1;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  return 2;
}

double attention_efficiency(const AttentionMeasurement& row, const workloads::GpuComputeSpec& spec,
                            bool backward) {
  workloads::Kernel kernel;
  kernel.name = backward ? "attention.bwd" : "attention";
  kernel.cls = workloads::KernelClass::kAttention;
  kernel.seq = row.seq;
  kernel.head_dim = row.head_dim;
  kernel.causal = row.causal;
  return workloads::kernel_efficiency(kernel, spec);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// One curve's coefficients (1/e_max, x_half/e_max, dim_half/e_max,
// causal_x_half/e_max) at these positions of a problem.
struct CurveColumns {
  Eigen::Index inverse_e_max = -1;
  Eigen::Index x_half = -1;
  Eigen::Index dim_half = -1;
  Eigen::Index causal_x_half = -1;
};

void bound_curve(LinearProblem& p, const CurveColumns& c, const EfficiencyCurveParams& base) {
  p.lower[c.inverse_e_max] = 1.0;  // e_max <= 1
  p.fallback[c.inverse_e_max] = 1.0 / base.e_max;
  for (Eigen::Index j : {c.x_half, c.dim_half, c.causal_x_half}) {
    if (j >= 0) p.lower[j] = 0.0;
  }
  p.fallback[c.x_half] = base.x_half / base.e_max;
  if (c.dim_half >= 0) p.fallback[c.dim_half] = base.dim_half / base.e_max;
  if (c.causal_x_half >= 0) p.fallback[c.causal_x_half] = base.causal_x_half / base.e_max;
}

EfficiencyCurveParams curve_of(const LinearFit& fit, const CurveColumns& c) {
  const double inverse = fit.x[c.inverse_e_max];
  EfficiencyCurveParams curve;
  curve.e_max = 1.0 / inverse;
  curve.x_half = fit.x[c.x_half] / inverse;
  if (c.dim_half >= 0) curve.dim_half = fit.x[c.dim_half] / inverse;
  if (c.causal_x_half >= 0) curve.causal_x_half = fit.x[c.causal_x_half] / inverse;
  return curve;
}

// Notes for bounds hit and unidentified terms, outliers and the inlier RMS.
void describe(const LinearProblem& p, const LinearFit& fit,
              std::span<const sim::SourceLocation> where, FitGroupReport& report) {
  report.cases = static_cast<int>(p.design.rows());
  for (size_t j = 0; j < p.names.size(); ++j) {
    const std::string& name = p.names[j];
    if (fit.unidentified[j]) {
      report.notes.push_back(name + ": not identifiable from these cases; kept the base value");
    } else if (fit.bound_hit[j] == BoundHit::kLower) {
      report.notes.push_back(name + (name.find("e_max") != std::string::npos
                                         ? ": hit its bound (efficiency <= 1)"
                                         : ": hit its bound 0"));
    }
  }
  double sum = 0;
  int inliers = 0;
  for (Eigen::Index i = 0; i < fit.weights.size(); ++i) {
    if (fit.weights[i] == 0) {
      report.outliers.push_back(where[static_cast<size_t>(i)]);
      report.notes.push_back("outlier (weight 0, residual " + number(fit.residuals[i] * 100.0) +
                             "%): " + where[static_cast<size_t>(i)].to_string());
    } else {
      sum += fit.residuals[i] * fit.residuals[i];
      ++inliers;
    }
  }
  report.rms_relative_error = inliers > 0 ? std::sqrt(sum / inliers) : 0.0;
}

}  // namespace

bool is_16_bit_dtype(const std::string& dtype) { return dtype == "fp16" || dtype == "bf16"; }

double predicted_tflops(const GemmMeasurement& row, const GpuProfile& gpu) {
  workloads::Kernel kernel;
  kernel.name = "gemm";
  kernel.cls = workloads::KernelClass::kGemm;
  kernel.m = row.m;
  kernel.n = row.n;
  kernel.k = row.k;
  kernel.flops = row.flops();
  kernel.bytes = dtype_bytes(row.dtype) * (static_cast<double>(row.m) * static_cast<double>(row.k) +
                                           static_cast<double>(row.k) * static_cast<double>(row.n) +
                                           static_cast<double>(row.m) * static_cast<double>(row.n));
  return row.flops() / workloads::kernel_seconds(kernel, nominal_clock_spec(gpu)) / 1e12;
}

double predicted_tflops(const AttentionMeasurement& row, const GpuProfile& gpu) {
  const workloads::GpuComputeSpec spec = nominal_clock_spec(gpu);
  const double fwd = attention_efficiency(row, spec, false);
  if (row.forward_only()) return spec.peak_flops * fwd / 1e12;
  const double bwd = attention_efficiency(row, spec, true);
  return spec.peak_flops * 3.5 / (1.0 / fwd + 2.5 / bwd) / 1e12;
}

GemmCurveFit fit_gemm_curve(std::span<const GemmMeasurement> rows, const GpuProfile& base,
                            const RobustFitOptions& options) {
  CLUSTERSIM_CHECK(!rows.empty(), "fit_gemm_curve: at least one row");
  LinearProblem p(static_cast<Eigen::Index>(rows.size()),
                  {"gemm.e_max", "gemm.x_half", "gemm.min_dim_half"});
  const CurveColumns c{0, 1, 2, -1};
  std::vector<sim::SourceLocation> where;
  for (size_t i = 0; i < rows.size(); ++i) {
    const GemmMeasurement& row = rows[i];
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    const double measured = row.tflops * 1e12 / base.peak_flops_per_s;
    p.design(r, c.inverse_e_max) = measured;
    p.design(r, c.x_half) = measured / row.flops();
    p.design(r, c.dim_half) = measured / static_cast<double>(row.smallest_dim());
    p.target[r] = 1.0;
    where.push_back(row.where);
  }
  bound_curve(p, c, base.gemm);
  const LinearFit fit = fit_linear(p, options);
  GemmCurveFit out;
  out.curve = curve_of(fit, c);
  out.report.name = "gpu.gemm";
  describe(p, fit, where, out.report);
  return out;
}

AttentionCurveFit fit_attention_curves(std::span<const AttentionMeasurement> rows,
                                       const GpuProfile& base, const RobustFitOptions& options) {
  CLUSTERSIM_CHECK(!rows.empty(), "fit_attention_curves: at least one row");
  bool any_fwd = false, any_fwd_bwd = false;
  for (const AttentionMeasurement& row : rows) {
    (row.forward_only() ? any_fwd : any_fwd_bwd) = true;
  }
  // Columns by priority (the first of two collinear ones is fitted).
  const bool tied = !any_fwd || !any_fwd_bwd;
  std::vector<std::string> names = {"attention_fwd.e_max", "attention_fwd.x_half"};
  CurveColumns fwd{0, 1, -1, -1};
  CurveColumns bwd = fwd;
  if (!tied) {
    names.insert(names.end(), {"attention_bwd.e_max", "attention_bwd.x_half"});
    bwd = CurveColumns{2, 3, -1, -1};
  }
  fwd.causal_x_half = static_cast<Eigen::Index>(names.size());
  names.push_back("attention_fwd.causal_x_half");
  if (!tied) {
    bwd.causal_x_half = static_cast<Eigen::Index>(names.size());
    names.push_back("attention_bwd.causal_x_half");
  } else {
    bwd.causal_x_half = fwd.causal_x_half;
  }
  fwd.dim_half = static_cast<Eigen::Index>(names.size());
  names.push_back("attention_fwd.head_dim_half");
  if (!tied) {
    bwd.dim_half = static_cast<Eigen::Index>(names.size());
    names.push_back("attention_bwd.head_dim_half");
  } else {
    bwd.dim_half = fwd.dim_half;
  }

  LinearProblem p(static_cast<Eigen::Index>(rows.size()), names);
  std::vector<sim::SourceLocation> where;
  for (size_t i = 0; i < rows.size(); ++i) {
    const AttentionMeasurement& row = rows[i];
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    const double measured = row.tflops * 1e12 / base.peak_flops_per_s;
    const double x = workloads::attention_size(row.seq, row.causal);
    const double causal = row.causal ? 1.0 : 0.0;
    const double dim = static_cast<double>(row.head_dim);
    // measured / eff: a fwd row with weight 1 on the forward curve; a
    // fwd_bwd row (1 F forward + 2.5 F backward at 3.5 F counted) with
    // 1 / 3.5 on the forward and 2.5 / 3.5 on the backward.
    const auto add = [&](const CurveColumns& c, double weight) {
      p.design(r, c.inverse_e_max) += weight * measured;
      p.design(r, c.x_half) += weight * measured / x;
      p.design(r, c.causal_x_half) += weight * measured * causal / x;
      p.design(r, c.dim_half) += weight * measured / dim;
    };
    if (row.forward_only()) {
      add(fwd, 1.0);
    } else {
      add(fwd, 1.0 / 3.5);
      add(bwd, 2.5 / 3.5);
    }
    p.target[r] = 1.0;
    where.push_back(row.where);
  }
  bound_curve(p, fwd, base.attention_fwd);
  if (!tied) bound_curve(p, bwd, base.attention_bwd);
  const LinearFit fit = fit_linear(p, options);

  AttentionCurveFit out;
  out.fwd = curve_of(fit, fwd);
  out.bwd = curve_of(fit, bwd);
  out.report.name = "gpu.attention";
  describe(p, fit, where, out.report);
  if (tied) {
    out.report.notes.push_back(any_fwd ? "no fwd_bwd rows: the backward curve is the forward's"
                                       : "no fwd rows: one curve fitted for both passes");
  }
  return out;
}

}  // namespace clustersim::calibration
