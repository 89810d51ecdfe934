// StepCache: simulated step times kept on disk between runs (`campaign
// --step-cache DIR`), so that a campaign whose steps were simulated once
// (the full job, the job with k of R replica groups, with a fabric
// component down, with a straggler) replays in about a second the next time,
// whatever its failures, recovery and campaign keys say.
//
// An entry is DIR/KEY.ITEM, one line: the step in seconds (%.17g, so the
// value read back is the value written). KEY (16 hex digits) is a 64-bit
// FNV-1a hash of what a step depends on: the clustersim binary that
// simulates it (its bytes, so that any rebuild of the model invalidates the
// cache), the hardware profile file's text, and every scenario value outside
// the sections that do not change a step (failures, recovery, campaign,
// sweep, output, name, description), as `path=value` lines in path order
// (a profile's `extends` base is not read: change the profile that names it,
// or use another DIR).
// ITEM names the step ("full", "groups_7", "spine_switch", "straggler_1.2").
// A missing or unreadable entry is a miss; a malformed one is a miss too
// (and is overwritten).
//
// Errors: sim::OutputError when an entry cannot be written (the directory is
// created if missing). Thread safety: get() and put() may run concurrently
// (an entry is written atomically; two writers of one item write the same
// value).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_values.h"

namespace clustersim::cli {

class StepCache {
 public:
  // `key`: step_cache_key()'s.
  StepCache(std::string dir, std::string key);

  std::optional<double> get(std::string_view item) const;
  void put(std::string_view item, double step_s) const;

  const std::string& key() const { return key_; }
  const std::string& dir() const { return dir_; }
  // Entries found and entries written so far.
  int64_t hits() const { return hits_.load(); }
  int64_t writes() const { return writes_.load(); }

 private:
  std::string entry_path(std::string_view item) const;

  std::string dir_;
  std::string key_;
  mutable std::atomic<int64_t> hits_{0};
  mutable std::atomic<int64_t> writes_{0};
};

// The cached step `item`, or simulate() (seconds) written to the cache; with
// no cache, simulate(). What simulate() throws passes through, uncached.
double cached_step(const StepCache* cache, std::string_view item,
                   const std::function<double()>& simulate);

// The hex key of the header for the scenario at `scenario_path` with these
// values (the profile resolved as the scenario resolves it).
std::string step_cache_key(const std::string& scenario_path, const sim::ConfigValues& values);

}  // namespace clustersim::cli
