// libFuzzer target: sweep grid specs ("KEY=V1,V2,...; KEY=A..B:xF",
// scenario/sweep_grid.h), as --grid and sweep.axes take them. Properties:
// a value or a reason, never both, never an exception; every parsed axis
// has a key and values (or is a divisors axis), and each value that is a
// plain word parses again as a one-value axis of the same key.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/sweep_grid.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace cli = clustersim::cli;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  try {
    const auto axes = cli::parse_sweep_axes(text);
    if (axes.value.has_value() == !axes.error.empty()) {
      fz::finding("a grid with both or neither of a value and a reason", std::string(text));
    }
    if (!axes) return 0;
    for (const cli::SweepAxis& axis : *axes) {
      if (axis.key.empty()) fz::finding("an axis without a key", std::string(text));
      if (axis.divisors != axis.values.empty()) {
        fz::finding("an axis with neither values nor divisors", std::string(text));
      }
      // The first values only: a range may expand to the parser's bound of
      // 100,000, and re-parsing each would time out, not find anything new.
      const size_t checked = std::min<size_t>(axis.values.size(), 64);
      for (size_t i = 0; i < checked; ++i) {
        const std::string& v = axis.values[i];
        // Plain words only: a value with blanks, quotes, separators or ".."
        // would need quoting to be read back as itself.
        if (v.empty() || v.find("..") != std::string::npos ||
            v.find_first_not_of(
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
                std::string::npos) {
          continue;
        }
        const auto one = cli::parse_sweep_axis(axis.key + "=" + v);
        if (!one || one->values.size() != 1 || one->values[0] != v) {
          fz::finding("an expanded value does not parse as itself", axis.key + "=" + v);
        }
      }
    }
  } catch (const std::exception& e) {
    fz::finding("the grid parser threw", e.what());
  }
  return 0;
}
