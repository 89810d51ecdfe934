// The units a size, a bandwidth and a duration may be written in
// (internal to config/: units.h is the API): each unit's factor to the base
// unit (bytes, bytes per second, nanoseconds) and the words messages use.
// Thread safety: constant tables; pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "config/units.h"

namespace clustersim::sim::units_detail {

// One accepted unit: a number n in this unit is n * factor * 10^pow10 in the
// base unit (bytes, bytes per second, nanoseconds).
struct UnitDef {
  std::string_view name;
  uint64_t factor;
  int pow10;
  bool listed;  // shown in unit_names(); aliases are not
};

std::span<const UnitDef> units_of(UnitKind kind);
std::string_view noun_of(UnitKind kind);                         // "size", "bandwidth", "duration"
std::string_view example_of(UnitKind kind);                      // "80GiB", "400Gbps", "10min"
const UnitDef* find_unit(UnitKind kind, std::string_view name);  // nullptr if none
std::string quoted(std::string_view s);                          // 'like this'

}  // namespace clustersim::sim::units_detail
