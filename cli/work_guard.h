// What `run`, `replay` and `sweep` share to keep a run's work bounded and
// visible: the --max-tasks-per-rank and --max-events options
// (scenario/work_limits.h) and a progress line of engine events on stderr
// when it is a terminal.
// Thread safety: an EventProgress belongs to one run on one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "scenario/work_limits.h"

namespace clustersim::cli {

// The two options, for a CommandSpec.
std::vector<OptionSpec> work_limit_options();
// Their values (the defaults of WorkLimits when absent); UsageError when one
// is not a whole number > 0.
WorkLimits work_limits_from(const ParsedCommand& parsed);

// "\r<command>: 123.4 M events, 41.2 M/s, 3 s" at most twice a second, for
// EngineOptions::progress; enabled() false when stderr is not a terminal.
class EventProgress {
 public:
  EventProgress(std::ostream& err, std::string command);
  ~EventProgress() { done(); }
  // Ends the line when one was written (before the command's own output).
  void done();
  EventProgress(const EventProgress&) = delete;
  EventProgress& operator=(const EventProgress&) = delete;

  bool enabled() const { return enabled_; }
  void operator()(uint64_t events);

 private:
  std::ostream& err_;
  std::string command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_;
};

// "\r<command>: 12 steps simulated, 3 s" at most twice a second, for the
// commands that simulate many steps (calibrate and validate of training
// runs); enabled() false when stderr is not a terminal.
class StepCountProgress {
 public:
  StepCountProgress(std::ostream& err, std::string command);
  ~StepCountProgress() { done(); }
  StepCountProgress(const StepCountProgress&) = delete;
  StepCountProgress& operator=(const StepCountProgress&) = delete;

  bool enabled() const { return enabled_; }
  void step_done();
  // A callback for StepDone (scenario/training_runs.h); empty when disabled.
  std::function<void()> callback();
  void done();

 private:
  std::ostream& err_;
  std::string command_;
  bool enabled_;
  bool shown_ = false;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace clustersim::cli
