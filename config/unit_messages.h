// Why a written unit is not accepted, in words a user can act on (internal to
// config/: units.h is the API): a unit of the wrong kind ("'GB/s' is a unit
// of bandwidth, but a size is expected"), known slips (a missing byte unit,
// bits for a bandwidth, 'm' for minutes), the same letters in another case,
// or the closest accepted unit.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "config/units.h"

namespace clustersim::sim::units_detail {

std::string unknown_unit(UnitKind kind, std::string_view unit);

}  // namespace clustersim::sim::units_detail
