#include "scenario/step_cache.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <system_error>
#include <variant>

#include "config/atomic_file.h"
#include "config/file_text.h"
#include "hardware/hardware_profile.h"
#include "sim/random_stream.h"

namespace clustersim::cli {

namespace {

// Sections whose keys never change a simulated step.
constexpr std::array<std::string_view, 7> kStepless = {
    "failures.", "recovery.", "campaign.", "sweep.", "output.", "name", "description"};

bool stepless(std::string_view path) {
  for (const std::string_view p : kStepless) {
    if (p.back() == '.' ? path.starts_with(p) : path == p) return true;
  }
  return false;
}

std::string exact(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string value_text(const sim::ConfigValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return exact(x);
        } else if constexpr (std::is_same_v<T, sim::SimTime>) {
          return std::to_string(x.count_ns()) + "ns";
        } else {
          return std::to_string(x);
        }
      },
      v);
}

// The running binary's bytes; empty when it cannot be read (then only the
// scenario and profile key the cache).
const std::string& own_binary() {
  static const std::string bytes = [] {
    std::string text;
    // Not an input: no size limit (a sanitizer build's binary is large).
    sim::try_read_file_text("/proc/self/exe", text, /*regular_only=*/true,
                            std::numeric_limits<int64_t>::max());
    return text;
  }();
  return bytes;
}

}  // namespace

StepCache::StepCache(std::string dir, std::string key)
    : dir_(std::move(dir)), key_(std::move(key)) {}

std::string StepCache::entry_path(std::string_view item) const {
  return (std::filesystem::path(dir_) / (key_ + "." + std::string(item))).string();
}

std::optional<double> StepCache::get(std::string_view item) const {
  std::string text;
  if (sim::try_read_file_text(entry_path(item), text, /*regular_only=*/true).failure !=
      sim::ReadFailure::kNone) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double s = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\n' || end[1] != '\0' || !(s > 0)) return std::nullopt;
  ++hits_;
  return s;
}

void StepCache::put(std::string_view item, double step_s) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);  // a failure shows in the write below
  sim::write_file_atomically(entry_path(item), exact(step_s) + "\n");
  ++writes_;
}

double cached_step(const StepCache* cache, std::string_view item,
                   const std::function<double()>& simulate) {
  if (cache == nullptr) return simulate();
  if (const std::optional<double> s = cache->get(item)) return *s;
  const double s = simulate();
  cache->put(item, s);
  return s;
}

std::string step_cache_key(const std::string& scenario_path, const sim::ConfigValues& values) {
  uint64_t h = sim::kFnvOffsetBasis;
  const std::string& binary = own_binary();
  h = sim::fnv1a64(std::to_string(binary.size()), h);
  h = sim::fnv1a64(binary, h);
  if (values.has("hardware")) {
    std::string profile;
    sim::try_read_file_text(
        collectives::resolve_hardware_path(scenario_path, values.get_string("hardware")), profile,
        /*regular_only=*/true);
    h = sim::fnv1a64("\nprofile\n", h);
    h = sim::fnv1a64(profile, h);
  }
  for (const auto& [path, entry] : values.entries()) {
    if (stepless(path)) continue;
    h = sim::fnv1a64("\n" + path + "=" + value_text(entry.value), h);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace clustersim::cli
