// Lists of ranks (or any non-negative ids) as users write them on the
// command line and in scenarios: "0", "3,17,100-103", " 0 - 7 , 64 ".
//
// Grammar: items separated by commas; an item is a number N or a range A-B
// (A <= B, both ends included); blanks around numbers are ignored. The empty
// text (or only blanks) is the empty list. The result is sorted and without
// duplicates ("4,0-7" -> 0..7).
// Errors (Parsed::error, lower case, no key or file): an empty item, a sign,
// a non-digit, a reversed range, a number that does not fit int64, and any
// rank >= `limit` (checked before a range is expanded, so "0-999999999999"
// costs nothing).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "config/units.h"

namespace clustersim::sim {

Parsed<std::vector<int64_t>> parse_rank_list(std::string_view text,
                                             int64_t limit = std::numeric_limits<int64_t>::max());

// Syntax only, without the limit and without expanding ranges: "" when
// `text` is a valid list, else the same error as parse_rank_list gives.
// For schema validators, which do not know the world size yet.
std::string rank_list_problem(std::string_view text);

// The compact form of a sorted, duplicate-free list: {0,1,2,3,8} -> "0-3,8".
std::string format_rank_list(const std::vector<int64_t>& ranks);

}  // namespace clustersim::sim
