// libFuzzer target: the communicator-group JSON of a Chakra export
// (workloads/chakra/chakra_trace.h). Properties: fuzz_support.h, and what reads
// round-trips: writing the groups and reading them again gives the same
// groups.
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_support.h"
#include "workloads/chakra/chakra_trace.h"

namespace fz = clustersim::fuzz;
namespace chakra = clustersim::workloads::chakra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  chakra::CommGroups groups;
  if (!fz::parses([&] { groups = chakra::parse_comm_groups(text, "fuzz.json"); }, "fuzz.json",
                  text)) {
    return 0;
  }
  const std::string written = chakra::comm_groups_json(groups);
  try {
    if (chakra::parse_comm_groups(written, "written.json") != groups) {
      fz::finding("written groups read back differently", written);
    }
  } catch (const std::exception& e) {
    fz::finding("written groups do not read back", std::string(e.what()) + "\n" + written);
  }
  return 0;
}
