// What `run`, `replay`, `sweep`, `campaign`, `calibrate` and `validate`
// share to keep a run's work bounded and visible: the --max-tasks-per-rank
// and --max-events options (scenario/work_limits.h) and progress lines on
// stderr when it is a terminal.
// Thread safety: a progress object belongs to one run on one thread.
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

// One line "\r<command>: ..." rewritten at most twice a second; nothing
// when stderr is not a terminal.
class ProgressLine {
 public:
  ProgressLine(std::ostream& err, std::string command);
  ~ProgressLine() { done(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Writes `text(seconds since the start)` if a line is due.
  void update(const std::function<std::string(double)>& text);
  // Ends the line when one was written (before the command's own output).
  void done();

 private:
  std::ostream& err_;
  std::string command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_;
};

// "<command>: 123.4 M events, 41.2 M/s, 3 s", for EngineOptions::progress.
class EventProgress {
 public:
  EventProgress(std::ostream& err, std::string command) : line_(err, std::move(command)) {}
  bool enabled() const { return line_.enabled(); }
  void operator()(uint64_t events);
  void done() { line_.done(); }

 private:
  ProgressLine line_;
};

// "<command>: 12 steps simulated, 3 s", for the commands that simulate many
// steps (calibrate and validate of training runs).
class StepCountProgress {
 public:
  StepCountProgress(std::ostream& err, std::string command) : line_(err, std::move(command)) {}
  // A callback for StepDone (scenario/training_runs.h); empty when disabled.
  std::function<void()> callback();
  void done() { line_.done(); }

 private:
  ProgressLine line_;
  int64_t steps_ = 0;
};

}  // namespace clustersim::cli
