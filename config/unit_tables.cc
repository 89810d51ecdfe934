#include "config/unit_tables.h"

#include "sim/check.h"

namespace clustersim::sim::units_detail {

namespace {

constexpr uint64_t kKi = uint64_t{1} << 10;
constexpr uint64_t kMi = uint64_t{1} << 20;
constexpr uint64_t kGi = uint64_t{1} << 30;
constexpr uint64_t kTi = uint64_t{1} << 40;
constexpr uint64_t kPi = uint64_t{1} << 50;

constexpr UnitDef kSizeUnits[] = {
    {"B", 1, 0, true},
    {"KB", 1'000, 0, true},
    {"MB", 1'000'000, 0, true},
    {"GB", 1'000'000'000, 0, true},
    {"TB", 1'000'000'000'000, 0, true},
    {"PB", 1'000'000'000'000'000, 0, true},
    {"KiB", kKi, 0, true},
    {"MiB", kMi, 0, true},
    {"GiB", kGi, 0, true},
    {"TiB", kTi, 0, true},
    {"PiB", kPi, 0, true},
};

// Bits per second are bytes per second times 125 * 10^-3.
constexpr UnitDef kBandwidthUnits[] = {
    {"bps", 125, -3, true},  {"Kbps", 125, 0, true},  {"Mbps", 125, 3, true},
    {"Gbps", 125, 6, true},  {"Tbps", 125, 9, true},  {"b/s", 125, -3, true},
    {"Kb/s", 125, 0, true},  {"Mb/s", 125, 3, true},  {"Gb/s", 125, 6, true},
    {"Tb/s", 125, 9, true},  {"B/s", 1, 0, true},     {"KB/s", 1, 3, true},
    {"MB/s", 1, 6, true},    {"GB/s", 1, 9, true},    {"TB/s", 1, 12, true},
    {"KiB/s", kKi, 0, true}, {"MiB/s", kMi, 0, true}, {"GiB/s", kGi, 0, true},
    {"TiB/s", kTi, 0, true},
};

constexpr UnitDef kDurationUnits[] = {
    {"ns", 1, 0, true},
    {"us", 1'000, 0, true},
    {"\xC2\xB5s", 1'000, 0, true},   // micro sign U+00B5
    {"\xCE\xBCs", 1'000, 0, false},  // Greek small mu U+03BC, looks the same
    {"ms", 1'000'000, 0, true},
    {"s", 1'000'000'000, 0, true},
    {"min", 60'000'000'000, 0, true},
    {"h", 3'600'000'000'000, 0, true},
    {"d", 86'400'000'000'000, 0, true},
};

}  // namespace

std::span<const UnitDef> units_of(UnitKind kind) {
  switch (kind) {
    case UnitKind::kSize:
      return kSizeUnits;
    case UnitKind::kBandwidth:
      return kBandwidthUnits;
    case UnitKind::kDuration:
      return kDurationUnits;
  }
  CLUSTERSIM_CHECK(false, "unknown UnitKind");
  return {};
}

std::string_view noun_of(UnitKind kind) {
  switch (kind) {
    case UnitKind::kSize:
      return "size";
    case UnitKind::kBandwidth:
      return "bandwidth";
    case UnitKind::kDuration:
      return "duration";
  }
  return "quantity";
}

std::string_view example_of(UnitKind kind) {
  switch (kind) {
    case UnitKind::kSize:
      return "80GiB";
    case UnitKind::kBandwidth:
      return "400Gbps";
    case UnitKind::kDuration:
      return "10min";
  }
  return "";
}

const UnitDef* find_unit(UnitKind kind, std::string_view name) {
  for (const UnitDef& u : units_of(kind)) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace clustersim::sim::units_detail
