#include "cli/step_preflight.h"

#include <optional>

#include "cli/step_report.h"
#include "cli/table_text.h"

namespace clustersim::cli {

namespace {

double gib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

std::string out_of_memory_text(const workloads::MemoryBreakdown& m, int64_t capacity) {
  return "out of memory: needs " + gib_text(m.total()) + " per GPU, has " + gib_text(capacity) +
         " (" + std::to_string(m.total()) + " > " + std::to_string(capacity) + " bytes)";
}

}  // namespace

std::string gib_text(int64_t bytes) { return fixed(gib(bytes), 2) + " GiB"; }

std::string memory_table(const workloads::MemoryBreakdown& m, int64_t capacity, int64_t pp) {
  std::string text = columns_row("peak memory per GPU", {"GiB", "% of GPU"});
  if (pp > 1) {
    text += figures("stage (highest of " + std::to_string(pp) + ")", {std::to_string(m.stage)});
  }
  const auto part = [&](std::string_view label, int64_t bytes) {
    text += figures(label, {fixed(gib(bytes), 2),
                            percent(static_cast<double>(bytes), static_cast<double>(capacity))});
  };
  part("params", m.params);
  part("grads", m.grads);
  part("optimizer", m.optimizer);
  part("unsharded params", m.unsharded_params);
  part("activations", m.activations);
  part("comm buffers", m.comm_buffers);
  part("reserve", m.reserve);
  part("total", m.total());
  if (capacity > 0) {
    part("capacity", capacity);
    part("headroom", capacity - m.total());
  }
  if (m.host_bytes > 0) text += figures("on the host (offload)", {fixed(gib(m.host_bytes), 2)});
  return text;
}

StepPreflight preflight_step(const sim::ConfigValues& values, const workloads::StepConfig& config,
                             const WorkLimits& limits, bool allow_oom, std::string_view command,
                             std::ostream& err) {
  const workloads::WorkloadSpec& w = config.workload;
  const int64_t capacity = config.memory_capacity_bytes;
  StepPreflight p;
  // The memory model needs no simulation: a step that cannot run is
  // reported before spending the time to replay it.
  p.memory = workloads::memory_breakdown(w);
  p.fits = workloads::fits(p.memory, capacity);
  p.work = workloads::estimate_step_work(config);
  const std::optional<WorkExcess> excess = work_excess(p.work, w, values, limits);
  if (!p.fits && !allow_oom) {
    err << memory_table(p.memory, capacity, w.pp) << command
        << ": error: " << out_of_memory_text(p.memory, capacity)
        << "\n(--allow-oom simulates the step anyway)\n";
  } else if (!p.fits) {
    err << command << ": warning: " << out_of_memory_text(p.memory, capacity)
        << "; allowed by --allow-oom\n";
  }
  if (excess) check_step_work(p.work, w, values, limits);
  p.ok = p.fits || allow_oom;
  return p;
}

}  // namespace clustersim::cli
