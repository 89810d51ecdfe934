#include "sweep/sweep_rows.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace clustersim::cli {

const std::vector<std::string> kFigureColumns = {
    "status", "reason", "step_time_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu",
    "peak_memory_bytes", "fits_in_memory", "exposed_comm_s",
    // Where the step went (seconds per rank, means over ranks; they sum to
    // step_time_s): StepBreakdown's parts.
    "compute_s", "exposed_all_gather_s", "exposed_reduce_scatter_s", "exposed_all_reduce_s",
    "exposed_tp_s", "exposed_cp_s", "exposed_pcie_s", "pipeline_bubble_s", "sync_wait_s",
    "launch_bound_s", "idle_s",
    // Energy: tokens per joule at the GPUs' power limit and at the system's
    // maximum power per GPU (blank where the profile gives none).
    "tokens_per_joule_gpu", "tokens_per_joule_system"};
const std::vector<std::string> kCampaignColumns = {"ettr_mean", "time_to_train_days"};

std::string number_text(double x) {
  if (x == 0) return "0";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x);
  return ec == std::errc() ? std::string(buffer, end) : "nan";
}

std::string csv_field(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::vector<std::string> csv_split(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += separator;
    text += parts[i];
  }
  return text;
}

std::string reason_of(const sim::ConfigError& e) {
  std::vector<std::string> parts;
  for (const sim::Diagnostic& d : e.diagnostics()) {
    parts.push_back(d.keyed_message());
  }
  return join(parts, "; ");
}

std::string sweep_header(const std::vector<SweepAxis>& axes, bool campaign) {
  std::vector<std::string> header;
  for (const SweepAxis& axis : axes) header.push_back(axis.key);
  header.insert(header.end(), kFigureColumns.begin(), kFigureColumns.end());
  if (campaign) header.insert(header.end(), kCampaignColumns.begin(), kCampaignColumns.end());
  return join(header, ",");
}

namespace {

std::string row_of(const SweepPoint& point, const std::vector<std::string>& figures) {
  std::vector<std::string> fields;
  for (const std::string& v : point.values) fields.push_back(csv_field(v));
  for (const std::string& f : figures) fields.push_back(csv_field(f));
  return join(fields, ",");
}

std::string unsimulated_row(const SweepPoint& point, const char* status, const std::string& reason,
                            bool campaign) {
  std::vector<std::string> figures(kFigureColumns.size() + (campaign ? kCampaignColumns.size() : 0),
                                   "");
  figures[kStatus] = status;
  figures[kReason] = reason;
  return row_of(point, figures);
}

}  // namespace

std::string simulated_row(const SweepPoint& point, const workloads::StepResult& r,
                          const std::optional<CampaignFigures>& campaign) {
  std::vector<std::string> figures = {r.fits_in_memory ? "ok" : "out_of_memory",
                                      "",
                                      number_text(r.step_time_s),
                                      number_text(r.tokens_per_s_per_gpu),
                                      number_text(r.tflops_per_gpu),
                                      number_text(r.mfu),
                                      std::to_string(r.memory.total()),
                                      r.fits_in_memory ? "true" : "false",
                                      number_text(r.breakdown.exposed_comm_s())};
  const workloads::StepBreakdown& b = r.breakdown;
  for (const double s : {b.compute_s, b.exposed_all_gather_s, b.exposed_reduce_scatter_s,
                         b.exposed_all_reduce_s, b.exposed_tp_s, b.exposed_cp_s, b.exposed_pcie_s,
                         b.pipeline_bubble_s, b.sync_wait_s, b.launch_bound_s, b.idle_s}) {
    figures.push_back(number_text(s));
  }
  for (const double per_joule : {r.tokens_per_joule_gpu, r.tokens_per_joule_system}) {
    figures.push_back(per_joule > 0 ? number_text(per_joule) : "");
  }
  if (campaign) {
    figures.push_back(number_text(campaign->ettr_mean));
    figures.push_back(campaign->time_to_train_days ? number_text(*campaign->time_to_train_days)
                                                   : "");
  }
  return row_of(point, figures);
}

std::string skipped_row(const SweepPoint& point, const std::string& reason, bool campaign) {
  return unsimulated_row(point, "skipped", reason, campaign);
}

std::string oversized_row(const SweepPoint& point, const workloads::MemoryBreakdown& memory,
                          int64_t capacity_bytes, bool campaign) {
  const auto gib = [](int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / (1 << 30));
    return std::string(text);
  };
  std::string reason = "does not fit in GPU memory (--fitting-only: not simulated): " +
                       gib(memory.total()) + " GiB per GPU";
  if (memory.stage > 0) reason += " on pipeline stage " + std::to_string(memory.stage);
  reason += " against " + gib(capacity_bytes) + " GiB";
  std::vector<std::string> figures(kFigureColumns.size() + (campaign ? kCampaignColumns.size() : 0),
                                   "");
  figures[kStatus] = "skipped";
  figures[kReason] = reason;
  figures[kPeak] = std::to_string(memory.total());
  figures[kFits] = "false";
  return row_of(point, figures);
}

std::string failed_row(const SweepPoint& point, const std::string& reason, bool campaign) {
  return unsimulated_row(point, "failed", reason, campaign);
}

}  // namespace clustersim::cli
