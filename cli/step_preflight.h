// What `run` checks of a loaded step before it simulates it, shared with
// `check`, which stops there: the peak memory per GPU against the GPU's,
// and the step's estimated work against the limits (scenario/work_limits.h).
// Both problems are found in one pass. An out-of-memory step prints its
// memory table and "<command>: error: out of memory: ..." on `err` (unless
// allowed, then a warning); an excess of work is a ConfigError at the key
// that drives it, thrown after the memory's lines.
// Thread safety: pure functions writing only to `err`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "scenario/step_config.h"
#include "scenario/work_limits.h"
#include "workloads/model/memory_model.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

struct StepPreflight {
  workloads::MemoryBreakdown memory;
  bool fits = false;
  workloads::StepWork work;
  // False when the step must not be simulated (out of memory, not allowed).
  bool ok = false;
};

// `values`: the scenario's, where an excess of work is reported.
StepPreflight preflight_step(const sim::ConfigValues& values, const workloads::StepConfig& config,
                             const WorkLimits& limits, bool allow_oom, std::string_view command,
                             std::ostream& err);

// The peak-memory table of the summary ("peak memory per GPU", one row per
// part, capacity and headroom); with pp > 1 the stage that peaks highest.
std::string memory_table(const workloads::MemoryBreakdown& m, int64_t capacity, int64_t pp);

// "61.25 GiB".
std::string gib_text(int64_t bytes);

}  // namespace clustersim::cli
