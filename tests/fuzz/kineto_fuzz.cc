// libFuzzer target: a torch.profiler / Kineto trace as `validate --kineto`
// and `calibrate` read it (calibration/kineto_trace.h). Properties:
// fuzz_support.h, and a distributedInfo read is a rank >= 0 and a world size
// >= 1 whose place is inside the input.
#include <string>
#include <string_view>

#include "calibration/kineto_trace.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  clustersim::calibration::KinetoTrace trace;
  if (!fz::parses([&] { trace = clustersim::calibration::parse_kineto_trace(text, "fuzz.json"); },
                  "fuzz.json", text)) {
    return 0;
  }
  if (trace.rank && *trace.rank < 0)
    fz::finding("a negative rank read", std::to_string(*trace.rank));
  if (trace.world_size && (*trace.world_size < 1 || trace.world_size_where.line < 1)) {
    fz::finding("a world size < 1 read, or one without its place",
                std::to_string(*trace.world_size));
  }
  return 0;
}
