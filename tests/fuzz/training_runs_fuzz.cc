// libFuzzer target: a training-runs file (scenario/training_runs.h), what
// `validate RUNS.csv` and `calibrate` read. Properties: fuzz_support.h, and
// what reads is what the format promises: at least one run, each with a
// unique non-empty id, a scenario, a measured throughput > 0 or a step time
// > 0 (not both), a memory > 0 when given, and overrides of the form
// KEY=VALUE.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/training_runs.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
using clustersim::cli::TrainingRun;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fz::bytes(data, size);
  std::vector<TrainingRun> runs;
  if (!fz::parses([&] { runs = clustersim::cli::parse_training_runs(text, "fuzz.csv"); },
                  "fuzz.csv", text)) {
    return 0;
  }
  if (runs.empty()) fz::finding("a runs file read without a run", std::string(text));
  std::set<std::string> ids;
  for (const TrainingRun& run : runs) {
    if (run.id.empty() || !ids.insert(run.id).second) {
      fz::finding("a run without a unique id", run.id);
    }
    if (run.scenario.empty()) fz::finding("a run without a scenario", run.id);
    // Measured one way: a throughput > 0, or a step time > 0 that stands for
    // it (its throughput is 0 until set_measured_throughput).
    if (run.step_time_s ? !(*run.step_time_s > 0) || run.tokens_per_s_per_gpu != 0
                        : !(run.tokens_per_s_per_gpu > 0)) {
      fz::finding("a run without one measurement > 0 (throughput or step time)", run.id);
    }
    if (run.memory_gib && !(*run.memory_gib > 0)) fz::finding("a memory <= 0 read", run.id);
    for (const std::string& o : run.overrides) {
      if (o.find('=') == std::string::npos) fz::finding("an override without '='", o);
    }
  }
  return 0;
}
