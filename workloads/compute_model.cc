#include "workloads/compute_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "sim/check.h"
#include "sim/text_fields.h"

namespace clustersim::workloads {

namespace {

// No source measures this yet: a placeholder in the 1.05-1.15 range that
// reports of overlapped NCCL kernels stealing SMs suggest, until
// scripts/microbench measures a GEMM with and without a concurrent
// all-reduce.
constexpr double kCommOverlapSlowdownPlaceholder = 1.10;
// Placeholder: streaming kernels reach about 90% of the datasheet HBM
// bandwidth; no measurement in /work/shared/data yet.
constexpr double kMemEfficiencyPlaceholder = 0.90;

}  // namespace

double EfficiencyCurve::at(double x, double dim, bool causal) const {
  const double size = std::max(x, 1.0);
  // e_max / (1 + h / x + d / dim) written as e_max x / (x + h + x d / dim),
  // which without shape terms is bit for bit the plain curve.
  const double half = x_half + (causal ? causal_x_half : 0.0);
  const double shape = dim > 0 && dim_half > 0 ? size * dim_half / dim : 0.0;
  return e_max * size / (size + half + shape);
}

GpuComputeSpec h100_sxm_compute() {
  GpuComputeSpec spec;
  spec.hardware = "H100-SXM";
  // /work/shared/data/README.md, datasheet table: H100 SXM5 dense BF16
  // 989 TFLOP/s, HBM 3.35 TB/s.
  spec.peak_flops = 989e12;
  spec.hbm_Bps = 3.35e12;
  spec.mem_efficiency = kMemEfficiencyPlaceholder;
  // fitted to scenarios/measurements/compute/gemm.csv rows for H100-SXM
  spec.gemm = {.e_max = 0.828471234, .x_half = 7.78913116e9};
  // fitted to scenarios/measurements/compute/attention.csv rows for H100-SXM (FA2)
  spec.attention_fwd = {.e_max = 0.354400297, .x_half = 201.582314};
  spec.attention_bwd = {.e_max = 0.344989472, .x_half = 282.377758};
  spec.comm_overlap_slowdown = kCommOverlapSlowdownPlaceholder;
  return spec;
}

GpuComputeSpec a100_sxm_compute() {
  GpuComputeSpec spec;
  spec.hardware = "A100-SXM";
  // /work/shared/data/README.md, datasheet table: A100 SXM4 80GB dense BF16
  // 312 TFLOP/s, HBM 2.04 TB/s.
  spec.peak_flops = 312e12;
  spec.hbm_Bps = 2.04e12;
  spec.mem_efficiency = kMemEfficiencyPlaceholder;
  // fitted to scenarios/measurements/compute/gemm.csv rows for A100-SXM
  spec.gemm = {.e_max = 0.753981072, .x_half = 2.42084065e9};
  // fitted to scenarios/measurements/compute/attention.csv rows for A100-SXM
  // (FA2; fwd_bwd rows only, so one curve serves both passes)
  spec.attention_fwd = {.e_max = 0.620236459, .x_half = 242.267446};
  spec.attention_bwd = spec.attention_fwd;
  spec.comm_overlap_slowdown = kCommOverlapSlowdownPlaceholder;
  return spec;
}

namespace {

EfficiencyCurve curve_of(const collectives::EfficiencyCurveParams& params) {
  return EfficiencyCurve{.e_max = params.e_max,
                         .x_half = params.x_half,
                         .dim_half = params.dim_half,
                         .causal_x_half = params.causal_x_half};
}

}  // namespace

GpuComputeSpec compute_spec_from_profile(const collectives::HardwareProfile& profile) {
  const collectives::GpuProfile& gpu = profile.gpu;
  GpuComputeSpec spec;
  spec.hardware = gpu.curves_fitted_to;
  spec.peak_flops = gpu.peak_flops_per_s;
  spec.hbm_Bps = gpu.hbm_Bps;
  spec.mem_efficiency = gpu.mem_efficiency;
  spec.gemm = curve_of(gpu.gemm);
  spec.attention_fwd = curve_of(gpu.attention_fwd);
  spec.attention_bwd = curve_of(gpu.attention_bwd);
  spec.comm_overlap_slowdown = gpu.comm_overlap_slowdown;
  spec.sustained_clock = gpu.sustained_clock;
  return spec;
}

double gemm_size(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double attention_size(int64_t seq, bool causal) {
  return causal ? static_cast<double>(seq) / 2.0 : static_cast<double>(seq);
}

namespace {

bool is_backward(std::string_view name) {
  return name.size() >= 4 && name.substr(name.size() - 4) == ".bwd";
}

}  // namespace

double kernel_efficiency(const Kernel& kernel, const GpuComputeSpec& spec) {
  switch (kernel.cls) {
    case KernelClass::kGemm:
      // Without a shape, the FLOPs are the work.
      if (kernel.m > 0 && kernel.n > 0 && kernel.k > 0) {
        const double smallest =
            static_cast<double>(std::min({kernel.m, kernel.n, kernel.k}));
        return spec.gemm.at(gemm_size(kernel.m, kernel.n, kernel.k), smallest, false);
      }
      return spec.gemm(kernel.flops);
    case KernelClass::kAttention: {
      const EfficiencyCurve& curve =
          is_backward(kernel.name) ? spec.attention_bwd : spec.attention_fwd;
      return curve.at(attention_size(kernel.seq, kernel.causal),
                      static_cast<double>(kernel.head_dim), kernel.causal);
    }
    case KernelClass::kElementwise:
    case KernelClass::kNorm:
    case KernelClass::kEmbedding:
    case KernelClass::kLoss:
    case KernelClass::kOptimizer:
      return 1.0;
  }
  return 1.0;
}

sim::SimTime kernel_time(const Kernel& kernel, const GpuComputeSpec& spec, bool comm_active) {
  CLUSTERSIM_CHECK(spec.peak_flops > 0 && spec.hbm_Bps > 0 && spec.mem_efficiency > 0 &&
                       spec.mem_efficiency <= 1 && spec.comm_overlap_slowdown >= 1 &&
                       spec.sustained_clock > 0 && spec.sustained_clock <= 1,
                   "GpuComputeSpec " + spec.hardware + " out of range");
  CLUSTERSIM_CHECK(kernel.flops >= 0 && kernel.bytes >= 0,
                   "kernel " + std::string(kernel.name) + " has negative flops or bytes");
  const double compute_s = kernel.flops > 0
                               ? kernel.flops / (spec.peak_flops * spec.sustained_clock *
                                                 kernel_efficiency(kernel, spec))
                               : 0.0;
  const double memory_s = kernel.bytes / (spec.hbm_Bps * spec.mem_efficiency);
  double seconds = std::max(compute_s, memory_s);
  if (comm_active) seconds *= spec.comm_overlap_slowdown;
  return sim::SimTime::from_seconds_rounded(seconds);
}

// ---- CSV ----

namespace {

using Field = sim::TextField;
using sim::parse_number;

// One data row: typed access to named columns, reporting into the sink.
class Row {
 public:
  Row(const std::vector<Field>& fields, const std::map<std::string, size_t, std::less<>>& column,
      const std::string& file, int line, sim::DiagnosticSink& sink)
      : fields_(fields), column_(column), file_(file), line_(line), sink_(sink) {}

  sim::SourceLocation where() const { return {file_, line_, 1}; }
  bool ok() const { return ok_; }

  std::string text(std::string_view name) {
    const Field& f = field(name);
    if (f.text.empty()) fail(f, name, "expected a value, found an empty field");
    return std::string(f.text);
  }
  int64_t positive_int(std::string_view name) {
    const Field& f = field(name);
    const std::optional<int64_t> value = parse_number<int64_t>(f.text);
    if (!value || *value <= 0) {
      fail(f, name, "expected a positive integer, found '" + std::string(f.text) + "'");
      return 0;
    }
    return *value;
  }
  double positive_number(std::string_view name) {
    const Field& f = field(name);
    const std::optional<double> value = parse_number<double>(f.text);
    if (!value || *value <= 0) {
      fail(f, name, "expected a positive number, found '" + std::string(f.text) + "'");
      return 0;
    }
    return *value;
  }
  bool boolean(std::string_view name) {
    const Field& f = field(name);
    if (f.text == "true") return true;
    if (f.text != "false")
      fail(f, name, "expected true or false, found '" + std::string(f.text) + "'");
    return false;
  }
  std::string one_of(std::string_view name, std::initializer_list<std::string_view> allowed) {
    const Field& f = field(name);
    for (std::string_view a : allowed) {
      if (f.text == a) return std::string(a);
    }
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(f, name, "expected one of " + list + ", found '" + std::string(f.text) + "'");
    return "";
  }

 private:
  // The header check guarantees the column and the field count check the field.
  const Field& field(std::string_view name) const { return fields_[column_.find(name)->second]; }
  void fail(const Field& f, std::string_view name, std::string message) {
    sink_.add({file_, line_, f.column}, std::string(name), std::move(message));
    ok_ = false;
  }

  const std::vector<Field>& fields_;
  const std::map<std::string, size_t, std::less<>>& column_;
  const std::string& file_;
  int line_;
  sim::DiagnosticSink& sink_;
  bool ok_ = true;
};

// Calls `on_row` for every data line of a CSV whose header has `required`
// columns; collects every problem, then throws.
template <class T>
std::vector<T> parse_csv(std::string_view text, const std::string& file_name,
                         std::initializer_list<std::string_view> required,
                         const std::function<T(Row&)>& on_row) {
  sim::DiagnosticSink sink;
  std::vector<T> rows;
  std::map<std::string, size_t, std::less<>> column;
  bool have_header = false;
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::string_view content = sim::trim_blanks(line);
    if (content.empty() || content.front() == '#') continue;
    const std::vector<Field> fields = sim::split_commas(line);
    if (!have_header) {
      have_header = true;
      for (size_t i = 0; i < fields.size(); ++i) column.emplace(std::string(fields[i].text), i);
      for (std::string_view name : required) {
        if (!column.contains(name)) {
          sink.add({file_name, number, 1}, "",
                   "expected a header with the column '" + std::string(name) + "', found '" +
                       std::string(content) + "'");
        }
      }
      if (!sink.empty()) break;
      continue;
    }
    if (fields.size() != column.size()) {
      sink.add({file_name, number, 1}, "",
               "expected " + std::to_string(column.size()) + " comma-separated fields, found " +
                   std::to_string(fields.size()));
      continue;
    }
    Row row(fields, column, file_name, number, sink);
    T value = on_row(row);
    if (row.ok()) rows.push_back(std::move(value));
  }
  if (!have_header) sink.add({file_name, 0, 0}, "", "expected a header line, found none");
  sink.throw_if_any();
  return rows;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    sim::DiagnosticSink sink;
    sink.add({path, 0, 0}, "", "expected a readable file, found none");
    sink.throw_if_any();
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<GemmMeasurement> parse_gemm_csv(std::string_view text, const std::string& file_name) {
  return parse_csv<GemmMeasurement>(text, file_name, {"hardware", "dtype", "m", "n", "k", "tflops"},
                                    [](Row& row) {
                                      GemmMeasurement g;
                                      g.where = row.where();
                                      g.hardware = row.text("hardware");
                                      g.dtype = row.text("dtype");
                                      g.m = row.positive_int("m");
                                      g.n = row.positive_int("n");
                                      g.k = row.positive_int("k");
                                      g.tflops = row.positive_number("tflops");
                                      return g;
                                    });
}

std::vector<AttentionMeasurement> parse_attention_csv(std::string_view text,
                                                      const std::string& file_name) {
  return parse_csv<AttentionMeasurement>(
      text, file_name, {"hardware", "kernel", "pass", "head_dim", "causal", "seq", "tflops"},
      [](Row& row) {
        AttentionMeasurement a;
        a.where = row.where();
        a.hardware = row.text("hardware");
        a.kernel = row.text("kernel");
        a.pass = row.one_of("pass", {"fwd", "fwd_bwd"});
        a.head_dim = row.positive_int("head_dim");
        a.causal = row.boolean("causal");
        a.seq = row.positive_int("seq");
        a.tflops = row.positive_number("tflops");
        return a;
      });
}

std::vector<GemmMeasurement> read_gemm_csv(const std::string& path) {
  return parse_gemm_csv(read_text(path), path);
}

std::vector<AttentionMeasurement> read_attention_csv(const std::string& path) {
  return parse_attention_csv(read_text(path), path);
}

// ---- Fitting ----

namespace {

// Measured efficiency of one row and a predictor of it from a candidate curve.
struct FitPoint {
  double measured_eff;
  std::function<double(const EfficiencyCurve&)> predict;
};

// Minimises sum (log(predicted / measured))^2 over e_max in (0, 1] and
// log10(x_half) in [-1, 15] by refining a grid around its best point:
// deterministic, no derivatives, and the objective is smooth and, in these
// two parameters, has one basin for the curves and data here.
EfficiencyCurve fit_curve(const std::vector<FitPoint>& points) {
  CLUSTERSIM_CHECK(!points.empty(), "fitting an efficiency curve needs at least one row");
  const auto cost = [&](double e_max, double log_half) {
    const EfficiencyCurve curve{e_max, std::pow(10.0, log_half)};
    double sum = 0;
    for (const FitPoint& p : points) {
      const double r = std::log(p.predict(curve) / p.measured_eff);
      sum += r * r;
    }
    return sum;
  };
  constexpr int kSteps = 40;
  double e_lo = 0.005, e_hi = 1.0, h_lo = -1.0, h_hi = 15.0;
  double best_e = 1.0, best_h = 0.0;
  double best_cost = cost(best_e, best_h);
  for (int round = 0; round < 20; ++round) {
    const double de = (e_hi - e_lo) / kSteps;
    const double dh = (h_hi - h_lo) / kSteps;
    for (int i = 0; i <= kSteps; ++i) {
      for (int j = 0; j <= kSteps; ++j) {
        const double e = e_lo + de * i;
        const double h = h_lo + dh * j;
        const double c = cost(e, h);
        if (c < best_cost) {
          best_cost = c;
          best_e = e;
          best_h = h;
        }
      }
    }
    e_lo = std::max(0.005, best_e - 2 * de);
    e_hi = std::min(1.0, best_e + 2 * de);
    h_lo = best_h - 2 * dh;
    h_hi = best_h + 2 * dh;
  }
  return EfficiencyCurve{best_e, std::pow(10.0, best_h)};
}

// Combined efficiency of a forward (1 F) plus backward (2.5 F) pass.
double fwd_bwd_efficiency(double eff_fwd, double eff_bwd) {
  return 3.5 / (1.0 / eff_fwd + 2.5 / eff_bwd);
}

}  // namespace

EfficiencyCurve fit_gemm_curve(std::span<const GemmMeasurement> rows, std::string_view hardware,
                               double peak_flops) {
  std::vector<FitPoint> points;
  for (const GemmMeasurement& row : rows) {
    if (row.hardware != hardware) continue;
    const double size = gemm_size(row.m, row.n, row.k);
    points.push_back({row.tflops * 1e12 / peak_flops,
                      [size](const EfficiencyCurve& curve) { return curve(size); }});
  }
  return fit_curve(points);
}

AttentionCurves fit_attention_curves(std::span<const AttentionMeasurement> rows,
                                     std::string_view hardware, std::string_view kernel,
                                     double peak_flops) {
  std::vector<FitPoint> fwd_points;
  for (const AttentionMeasurement& row : rows) {
    if (row.hardware != hardware || row.kernel != kernel || row.pass != "fwd") continue;
    const double size = attention_size(row.seq, row.causal);
    fwd_points.push_back({row.tflops * 1e12 / peak_flops,
                          [size](const EfficiencyCurve& curve) { return curve(size); }});
  }
  const std::optional<EfficiencyCurve> fwd =
      fwd_points.empty() ? std::nullopt : std::optional(fit_curve(fwd_points));
  std::vector<FitPoint> bwd_points;
  for (const AttentionMeasurement& row : rows) {
    if (row.hardware != hardware || row.kernel != kernel || row.pass != "fwd_bwd") continue;
    const double size = attention_size(row.seq, row.causal);
    bwd_points.push_back({row.tflops * 1e12 / peak_flops, [size, fwd](const EfficiencyCurve& bwd) {
                            return fwd_bwd_efficiency(fwd ? (*fwd)(size) : bwd(size), bwd(size));
                          }});
  }
  if (bwd_points.empty()) {
    CLUSTERSIM_CHECK(fwd.has_value(),
                     "no attention rows for " + std::string(hardware) + " " + std::string(kernel));
    return {*fwd, *fwd};
  }
  const EfficiencyCurve bwd = fit_curve(bwd_points);
  return {fwd.value_or(bwd), bwd};
}

double predicted_tflops(const GemmMeasurement& row, const GpuComputeSpec& spec) {
  return spec.peak_flops * spec.gemm(gemm_size(row.m, row.n, row.k)) / 1e12;
}

double predicted_tflops(const AttentionMeasurement& row, const GpuComputeSpec& spec) {
  const double size = attention_size(row.seq, row.causal);
  const double eff = row.pass == "fwd"
                         ? spec.attention_fwd(size)
                         : fwd_bwd_efficiency(spec.attention_fwd(size), spec.attention_bwd(size));
  return spec.peak_flops * eff / 1e12;
}

}  // namespace clustersim::workloads
