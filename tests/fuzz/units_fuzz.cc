// libFuzzer target: unit strings (config/units.h), sizes, bandwidths and
// durations, with and without a bare unit. Properties: a parse gives a value
// or a non-empty reason, never both, and never throws; a value written back
// (format_bytes, format_bandwidth, format_duration) parses to the same value.
#include <cmath>
#include <string>
#include <string_view>

#include "config/units.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace sim = clustersim::sim;

namespace {

template <class T>
void check_outcome(const sim::Parsed<T>& p, std::string_view text) {
  if (p.value.has_value() == !p.error.empty()) {
    fz::finding("a parse with both or neither of a value and a reason", std::string(text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  try {
    for (const std::string_view bare : {"B", ""}) {
      const sim::Parsed<int64_t> b = sim::parse_bytes(text, bare);
      check_outcome(b, text);
      if (b) {
        const std::string written = sim::format_bytes(*b);
        const sim::Parsed<int64_t> back = sim::parse_bytes(written, "");
        if (!back || *back != *b) fz::finding("format_bytes does not parse back", written);
      }
    }
    for (const std::string_view bare : {"B/s", ""}) {
      const sim::Parsed<double> bw = sim::parse_bandwidth(text, bare);
      check_outcome(bw, text);
      if (bw && std::isfinite(*bw)) {
        const std::string written = sim::format_bandwidth(*bw);
        const sim::Parsed<double> back = sim::parse_bandwidth(written, "");
        if (!back || *back != *bw) fz::finding("format_bandwidth does not parse back", written);
      }
    }
    for (const std::string_view bare : {"", "s", "us"}) {
      const sim::Parsed<sim::SimTime> d = sim::parse_duration(text, bare);
      check_outcome(d, text);
      if (d) {
        const std::string written = sim::format_duration(*d);
        const sim::Parsed<sim::SimTime> back = sim::parse_duration(written, "");
        if (!back || *back != *d) fz::finding("format_duration does not parse back", written);
      }
    }
  } catch (const std::exception& e) {
    fz::finding("a unit parser threw", e.what());
  }
  return 0;
}
