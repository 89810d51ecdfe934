// libFuzzer target: a torch.profiler / Kineto trace as `validate --kineto`
// and `calibrate` read it (calibration/kineto_trace.h). Properties:
// fuzz_support.h.
#include <string_view>

#include "calibration/kineto_trace.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  fz::parses([&] { clustersim::calibration::parse_kineto_trace(text, "fuzz.json"); }, "fuzz.json",
             text);
  return 0;
}
