#include "scenario/torchtitan_pipeline.h"

#include <array>

#include "config/text_fields.h"

namespace clustersim::cli {

namespace {

struct KnownSchedule {
  std::string_view torch_name;  // as torch names it; compared in lower case
  TorchtitanSchedule schedule;
};

const std::array<KnownSchedule, 9>& known_schedules() {
  static const std::array<KnownSchedule, 9> kSchedules = {{
      {"GPipe", {"gpipe", false, ""}},
      {"1F1B", {"1f1b", false, ""}},
      {"Interleaved1F1B", {"interleaved_1f1b", true, ""}},
      // mid-2024 torchtitan's own spelling of the same.
      {"interleaved_1f1b", {"interleaved_1f1b", true, ""}},
      {"ZBVZeroBubble", {"zbv", true, ""}},
      {"DualPipeV", {"dualpipev", true, ""}},
      {"FlexibleInterleaved1F1B",
       {"interleaved_1f1b", true,
        "its stage count need not be a multiple of pp; modelled as interleaved 1F1B"}},
      {"LoopedBFS",
       {"interleaved_1f1b", true,
        "it runs every micro-batch of one local stage before the next (breadth first); "
        "modelled as interleaved 1F1B, the looped schedule here"}},
      {"InterleavedZeroBubble",
       {"interleaved_1f1b", true,
        "its weight gradients fill the bubbles of a looped schedule, which is modelled here "
        "only in a V (zbv); modelled as interleaved 1F1B"}},
  }};
  return kSchedules;
}

}  // namespace

std::optional<TorchtitanSchedule> torchtitan_schedule(std::string_view name) {
  const std::string lower = sim::ascii_lower(name);
  for (const KnownSchedule& k : known_schedules()) {
    if (sim::ascii_lower(k.torch_name) == lower) return k.schedule;
  }
  return std::nullopt;
}

std::string torchtitan_schedule_names() {
  std::string out;
  for (const KnownSchedule& k : known_schedules()) {
    out += (out.empty() ? "" : ", ") + std::string(k.torch_name);
  }
  return out;
}

std::vector<int64_t> torchtitan_2024_split(int64_t layers, int64_t stages) {
  if (stages <= 0 || stages > layers) return {};
  const int64_t base = layers / stages;
  int64_t extra = layers % stages;
  std::vector<int64_t> counts;
  int64_t given = 0;
  for (int64_t i = 0; i + 1 < stages; ++i) {
    const int64_t n = i > 0 && extra > 0 ? base + 1 : base;
    if (i > 0 && extra > 0) --extra;
    counts.push_back(n);
    given += n;
  }
  counts.push_back(layers - given);
  return counts;
}

std::vector<int64_t> torchtitan_2025_split(int64_t layers, int64_t stages, int64_t input_weight,
                                           int64_t output_weight) {
  if (stages <= 0) return {};
  if (stages == 1) return {layers};
  const int64_t effective = layers + input_weight + output_weight;
  const int64_t base = effective / stages;
  const int64_t extra = effective % stages;
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < stages; ++i) {
    int64_t n = i < extra ? base + 1 : base;
    if (i == 0) n -= input_weight;
    if (i == stages - 1) n -= output_weight;
    if (n < 1) return {};
    counts.push_back(n);
  }
  return counts;
}

std::optional<std::vector<int64_t>> split_from_points(int64_t layers,
                                                      const std::vector<std::string>& points) {
  std::vector<int64_t> counts;
  int64_t previous = 0;
  for (const std::string& point : points) {
    const std::string_view prefix = "layers.";
    if (point.rfind(prefix, 0) != 0) return std::nullopt;
    const std::optional<int64_t> first = sim::parse_number<int64_t>(point.substr(prefix.size()));
    if (!first || *first <= previous || *first >= layers) return std::nullopt;
    counts.push_back(*first - previous);
    previous = *first;
  }
  counts.push_back(layers - previous);
  return counts;
}

std::string layers_per_stage_text(const std::vector<int64_t>& counts) {
  std::string out;
  for (const int64_t n : counts) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

}  // namespace clustersim::cli
