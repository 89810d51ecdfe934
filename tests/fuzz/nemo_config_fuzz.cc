// libFuzzer target: a NeMo / Megatron-Core recipe (YAML, with OmegaConf
// interpolations), what `clustersim import nemo CONFIG.yaml --hardware h100`
// reads (scenario/nemo_import.h). Properties: fuzz_support.h for a config it
// rejects, import_fuzz.h for one it accepts.
#include <string>
#include <string_view>

#include "scenario/nemo_import.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/import_fuzz.h"

namespace fz = clustersim::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  clustersim::cli::ImportOptions options;
  options.hardware = "h100";
  clustersim::cli::ImportedScenario scenario;
  if (!fz::parses([&] { scenario = clustersim::cli::import_nemo_text(text, "fuzz.yaml", options); },
                  "fuzz.yaml", text)) {
    return 0;
  }
  fz::check_written_scenario(scenario);
  return 0;
}
