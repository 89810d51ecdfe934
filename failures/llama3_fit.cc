#include "failures/llama3_fit.h"

#include <array>
#include <cstdio>

#include "sim/check.h"

namespace clustersim::failures {

namespace {

// arXiv:2407.21783, Table 5 (counts; the printed 30.1% for faulty GPU is
// inconsistent with its count of 148, which the counts' sum of 419 confirms).
constexpr std::array<Llama3Count, 18> kCounts = {{
    {"faulty_gpu", 148},
    {"gpu_hbm3_memory", 72},
    {"software_bug", 54},
    {"network_switch_cable", 35},
    {"host_maintenance", 32},
    {"gpu_sram_memory", 19},
    {"gpu_system_processor", 17},
    {"nic", 7},
    {"nccl_watchdog_timeout", 7},
    {"silent_data_corruption", 6},
    {"gpu_thermal_interface_sensor", 6},
    {"ssd", 3},
    {"power_supply", 3},
    {"server_chassis", 2},
    {"io_expansion_board", 2},
    {"dependency", 2},
    {"cpu", 2},
    {"system_memory", 2},
}};

constexpr double kFitHours = static_cast<double>(kLlama3Days * 24);

std::string printf_line(const char* format, auto... args) {
  std::array<char, 256> buffer{};
  const int n = std::snprintf(buffer.data(), buffer.size(), format, args...);
  CLUSTERSIM_CHECK(n >= 0 && static_cast<size_t>(n) < buffer.size(), "fit line too long");
  return std::string(buffer.data(), static_cast<size_t>(n));
}

}  // namespace

std::span<const Llama3Count> llama3_54day_counts() { return kCounts; }

topology::ClusterSpec llama3_fitting_cluster() {
  topology::ClusterSpec spec;
  spec.nodes = kLlama3Nodes;
  const bool known = topology::node_preset("hgx_h100", spec.node);
  CLUSTERSIM_CHECK(known, "node preset hgx_h100 missing");
  return spec;
}

FailureFit llama3_h100_fit() {
  const JobComponents job(llama3_fitting_cluster(), kLlama3Gpus);
  CLUSTERSIM_CHECK(job.nodes() == kLlama3Nodes, "fitting cluster has 2,048 nodes");
  const std::span<const FailureCategory> categories = failure_categories();
  FailureFit fit;
  fit.node_hours = static_cast<double>(kLlama3Nodes) * kFitHours;
  for (size_t i = 0; i < kCounts.size(); ++i) {
    const FailureCategory& category = categories[i];
    CLUSTERSIM_CHECK(category.name == kCounts[i].category, "Table 5 rows follow the category list");
    FitRow row;
    row.category = category.name;
    row.group = category.group;
    row.component = category.component;
    row.count = kCounts[i].count;
    row.components = job.count(category.component);
    row.exposure_component_hours = static_cast<double>(row.components) * kFitHours;
    row.rate_per_hour = static_cast<double>(row.count) / row.exposure_component_hours;
    row.expected_count = row.rate_per_hour * row.exposure_component_hours;
    row.per_1000_node_days =
        per_1000_node_days_from_rate(row.rate_per_hour, row.components, job.nodes());
    fit.total_count += row.count;
    fit.expected_total += row.expected_count;
    fit.rows.push_back(row);
  }
  fit.per_1000_node_days =
      static_cast<double>(fit.total_count) / (fit.node_hours / kNodeHoursPer1000NodeDays);
  fit.job_mtbf_hours = kFitHours / static_cast<double>(fit.total_count);
  return fit;
}

std::string format_fit(const FailureFit& fit) {
  std::string out = printf_line(
      "llama3_h100 fit: %lld unexpected interruptions on %lld H100 (%lld nodes) over %lld days\n",
      static_cast<long long>(fit.total_count), static_cast<long long>(kLlama3Gpus),
      static_cast<long long>(kLlama3Nodes), static_cast<long long>(kLlama3Days));
  out +=
      printf_line("%-29s %-13s %5s %6s %12s %13s %15s %8s %9s\n", "category", "component", "count",
                  "N", "exposure_h", "rate_per_h", "mtbf_per_comp_h", "expected", "per_1k_nd");
  for (const FitRow& r : fit.rows) {
    const std::string_view kind = component_kind_name(r.component);
    out +=
        printf_line("%-29.*s %-13.*s %5lld %6lld %12.0f %13.6e %15.0f %8.3f %9.4f\n",
                    static_cast<int>(r.category.size()), r.category.data(),
                    static_cast<int>(kind.size()), kind.data(), static_cast<long long>(r.count),
                    static_cast<long long>(r.components), r.exposure_component_hours,
                    r.rate_per_hour, 1.0 / r.rate_per_hour, r.expected_count, r.per_1000_node_days);
  }
  out += printf_line(
      "total: %lld interruptions (expected %.3f) in %.0f node-hours: %.4f per 1,000 node-days, "
      "job MTBF %.3f h\n",
      static_cast<long long>(fit.total_count), fit.expected_total, fit.node_hours,
      fit.per_1000_node_days, fit.job_mtbf_hours);
  return out;
}

FailureModel llama3_h100_model(const JobComponents& job) {
  const FailureFit fit = llama3_h100_fit();
  FailureModel model = empty_failure_model(job);
  for (size_t i = 0; i < fit.rows.size(); ++i)
    model.causes[i].rate_per_hour = fit.rows[i].rate_per_hour;
  return model;
}

}  // namespace clustersim::failures
