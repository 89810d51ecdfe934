#include "scenario/scenario_problems.h"

namespace clustersim::cli {

void ScenarioProblems::add_all(sim::DiagnosticSink&& sink) {
  for (const sim::Diagnostic& d : sink.diagnostics()) note_key(d.key_path);
  sink_.append(std::move(sink));
}

void ScenarioProblems::add_stage(const sim::ConfigError& error) {
  // Against the keys of earlier stages only: one stage may say two things
  // about one key.
  const std::set<std::string, std::less<>> earlier = reported_keys_;
  for (const sim::Diagnostic& d : error.diagnostics()) {
    if (!d.key_path.empty() && earlier.contains(d.key_path)) continue;
    note_key(d.key_path);
    sink_.add(d.where, d.key_path, d.message);
  }
}

void ScenarioProblems::throw_if_any() { sink_.throw_if_any(); }

}  // namespace clustersim::cli
