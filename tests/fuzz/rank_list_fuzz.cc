// libFuzzer target: rank lists ("0,8-15", config/rank_list.h), with a world
// size taken from the input's first byte. Properties: a value or a reason,
// never both; the syntax check agrees with the parse; what parses is sorted
// and duplicate-free, within the limit, and its compact form parses back to
// the same ranks.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "config/rank_list.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace sim = clustersim::sim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t limit = 1 + data[0] * 4;  // 1 .. 1021 ranks
  const std::string_view text = fz::bytes(data + 1, size - 1);
  try {
    const sim::Parsed<std::vector<int64_t>> ranks = sim::parse_rank_list(text, limit);
    if (ranks.value.has_value() == !ranks.error.empty()) {
      fz::finding("a rank list with both or neither of a value and a reason", std::string(text));
    }
    const std::string problem = sim::rank_list_problem(text);
    if (ranks && !problem.empty())
      fz::finding("the syntax check refuses a list that parses", problem);
    if (!ranks) return 0;
    const std::vector<int64_t>& r = *ranks;
    if (!std::is_sorted(r.begin(), r.end()) || std::adjacent_find(r.begin(), r.end()) != r.end()) {
      fz::finding("a parsed list is not sorted and unique", std::string(text));
    }
    if (!r.empty() && (r.front() < 0 || r.back() >= limit)) {
      fz::finding("a parsed rank is outside the limit", std::string(text));
    }
    const std::string compact = sim::format_rank_list(r);
    const sim::Parsed<std::vector<int64_t>> back = sim::parse_rank_list(compact, limit);
    if (!back || *back != r) fz::finding("format_rank_list does not parse back", compact);
  } catch (const std::exception& e) {
    fz::finding("the rank-list parser threw", e.what());
  }
  return 0;
}
