// libFuzzer target: a torchtitan train config (TOML), what `clustersim
// import torchtitan CONFIG.toml --gpus 8 --hardware h100` reads
// (scenario/torchtitan_import.h). Properties: fuzz_support.h for a config
// it rejects, import_fuzz.h for one it accepts.
#include <string>
#include <string_view>

#include "scenario/torchtitan_import.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/import_fuzz.h"

namespace fz = clustersim::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  clustersim::cli::ImportOptions options;
  options.gpus = 8;
  options.hardware = "h100";
  clustersim::cli::ImportedScenario scenario;
  if (!fz::parses(
          [&] { scenario = clustersim::cli::import_torchtitan_text(text, "fuzz.toml", options); },
          "fuzz.toml", text)) {
    return 0;
  }
  fz::check_written_scenario(scenario);
  return 0;
}
