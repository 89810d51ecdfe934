// libFuzzer target: a hardware profile file (hardware/hardware_profile.h)
// through its schema and checks. Properties: fuzz_support.h, and what loads
// round-trips through the profile writer (calibration/profile_writer.h):
// the written profile loads, and writing it again gives the same text.
#include <string>
#include <string_view>

#include "calibration/profile_writer.h"
#include "hardware/hardware_profile.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace cal = clustersim::calibration;
namespace collectives = clustersim::collectives;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  // An `extends:` would read other files: not this target's input.
  if (text.find("extends") != std::string_view::npos) return 0;
  collectives::HardwareProfile profile;
  if (!fz::parses([&] { profile = collectives::parse_hardware_profile(text, "fuzz.yaml"); },
                  "fuzz.yaml", text)) {
    return 0;
  }
  const std::string written = cal::hardware_profile_yaml(profile, {});
  try {
    const collectives::HardwareProfile back =
        collectives::parse_hardware_profile(written, "written.yaml");
    if (cal::hardware_profile_yaml(back, {}) != written) {
      fz::finding("a written profile writes back differently", written);
    }
  } catch (const std::exception& e) {
    fz::finding("a written profile does not load", std::string(e.what()) + "\n" + written);
  }
  return 0;
}
