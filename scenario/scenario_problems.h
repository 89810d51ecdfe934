// Every problem of a scenario in one pass: its keys, then what they mean
// (the cluster they build, the hardware profile they name, the workload on
// that cluster), each stage checked even when an earlier one found
// problems, so that one run of a command reports them all.
//
// A stage that fails throws sim::ConfigError as it would alone; its
// diagnostics join the list unless an earlier stage already reported the
// same key (a key that failed its schema check and took its default would
// otherwise be blamed twice). A stage may also stop on a broken invariant
// when it reads a key an earlier problem left without a value: that only
// means it could not run, and is dropped when problems are already listed
// (alone it is a bug, and rethrown).
// Thread safety: one object per load; not shared.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include "config/config_error.h"
#include "sim/check.h"

namespace clustersim::cli {

class ScenarioProblems {
 public:
  // Adds what `sink` holds (a loader's key problems), every key of it.
  void add_all(sim::DiagnosticSink&& sink);
  // Adds the problems of a failed stage, skipping keys already reported.
  void add_stage(const sim::ConfigError& error);

  // Runs `stage`; its value, or nothing when it failed (its problems added).
  template <typename Stage>
  auto attempt(Stage&& stage) -> std::optional<std::invoke_result_t<Stage>> {
    try {
      return std::forward<Stage>(stage)();
    } catch (const sim::ConfigError& e) {
      add_stage(e);
    } catch (const sim::InvariantError&) {
      if (empty()) throw;
    }
    return std::nullopt;
  }
  // The same for a stage that returns nothing: whether it passed.
  template <typename Stage>
  bool check(Stage&& stage) {
    return attempt([&] {
             std::forward<Stage>(stage)();
             return true;
           })
        .has_value();
  }

  bool empty() const { return sink_.empty(); }
  // Throws sim::ConfigError with every problem, in the order found.
  void throw_if_any();

 private:
  void note_key(const std::string& key) { reported_keys_.insert(key); }

  sim::DiagnosticSink sink_;
  std::set<std::string, std::less<>> reported_keys_;
};

}  // namespace clustersim::cli
