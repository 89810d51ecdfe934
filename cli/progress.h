// What the commands that may run longer than a few seconds print on stderr
// while they work, and the line that names each file a command writes
// (issue 39). stdout and the files written are the same bytes whatever is
// printed here, and nothing here changes a result.
//
// Every line starts with "clustersim COMMAND: ":
//  * the work estimated, before it starts, when it is large (each command
//    says when; a step of kLargeTaskTimelines tasks x timelines or more):
//      clustersim run: simulating 16,384 ranks x 7,475 tasks (122.5 M tasks)
//  * while it runs, the percentage done, what is done, the time and an ETA:
//      clustersim run: 45%, 15.1 M events, 1.3 M events/s, 12 s elapsed, ETA 15 s
//    on a terminal one line redrawn ("\r") every kRedrawInterval; otherwise
//    one line every kLineInterval, the first kLineInterval after the start,
//    so that a command that ends sooner prints no progress at all;
//  * when a progress line was printed, a last one: "100%, 33.2 M events in 26 s";
//  * "wrote FILE" for each file written.
// --quiet (StatusMode::kQuiet) silences all of these; errors and warnings
// are printed whatever the mode.
//
// Percentages are floored and held at 99 until the work is finished, so they
// never reach 100 early; the fraction a command reports never decreases, so
// neither does the percentage. The ETA is the rest of the work at the rate
// measured since the first report (setup before it does not count).
//
// Thread safety: none. A command reports from one thread at a time (the
// sweep and the campaign, whose work runs on several, report under a lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "exec/engine.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

enum class StatusMode {
  kTerminal,  // progress redrawn on one line
  kLines,     // progress as a line every kLineInterval (a log, a pipe, Python)
  kQuiet      // nothing (--quiet)
};

inline constexpr std::chrono::milliseconds kRedrawInterval{500};
inline constexpr std::chrono::seconds kLineInterval{5};
// A step of this many tasks x timelines or more gets its estimate printed before
// it runs: at 0.05 to 0.5 engine events per task-rank that is 1 to 10 M
// events, seconds at the engine's few M events/s (docs/progress.md: the
// shipped 64- and 256-GPU examples, 0.3 M and 5.4 M, stay silent; Llama 3
// 405B 3D on 16,384 GPUs, 122 M, took 26 s).
inline constexpr int64_t kLargeTaskTimelines = 20'000'000;

// The --quiet option, for a CommandSpec.
OptionSpec quiet_option();
// kQuiet with --quiet; kTerminal when `err` is std::cerr and stderr is a
// terminal; kLines otherwise (a file, a pipe, a string in tests or Python).
StatusMode status_mode(const ParsedCommand& parsed, const std::ostream& err);

using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;

// "9,999", "12.3 k", "1.5 M", "2.1 G": a count as a person reads it.
std::string count_text(double n);
// "42 s", "3 min 05 s", "2 h 10 min" (rounded to the second).
std::string duration_text(double seconds);
// floor(100 x fraction) within [0, 99]: 100 is said by the last line alone.
int percent_done(double fraction);
// "F", "F, G, H", or "64 files PATTERN" past three: the files a command
// wrote, for "wrote ...".
std::string files_text(const std::vector<std::string>& files, std::string_view pattern);

// "simulating 16,384 ranks x 7,475 tasks (122.5 M tasks)": a step's work as
// estimated before it is built (workloads/schedules/step_work.h).
std::string step_work_text(const workloads::StepWork& work);

// The stderr lines of one command, with their cadence.
class StatusLine {
 public:
  // `command`: "clustersim run"; `now`: the clock (steady_clock when empty).
  StatusLine(std::ostream& err, std::string command, StatusMode mode, SteadyNow now = {});
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool quiet() const { return mode_ == StatusMode::kQuiet; }
  std::chrono::steady_clock::time_point now() const { return now_(); }
  // A line of its own now (an estimate, "wrote FILE"); a redrawn progress
  // line is ended first. Nothing when quiet.
  void note(std::string_view text);
  // Whether a progress line is due (never when quiet); when it is, the
  // caller calls show() at once.
  bool due();
  void show(std::string_view text);
  // The last line of a piece of work, when a progress line of it was shown.
  void finish(std::string_view text);
  // Whether a progress line was shown since the last finish().
  bool shown() const { return shown_; }

 private:
  void end_redrawn_line();

  std::ostream& err_;
  std::string command_;
  StatusMode mode_;
  SteadyNow now_;
  std::chrono::steady_clock::time_point last_;
  bool shown_ = false;
  size_t redrawn_ = 0;  // length of the line on screen (terminal), 0 when none
};

// One piece of work measured as the fraction of it done.
class ProgressMeter {
 public:
  // `label`: what precedes the percentage ("" or "trials: ").
  explicit ProgressMeter(StatusLine& line, std::string label = "");
  bool quiet() const { return line_.quiet(); }
  // The work is at `fraction` (0 to 1, never less than before). When a line
  // is due: "LABEL45%, WHAT, 12 s elapsed, ETA 15 s", `what` computed then.
  void update(double fraction, const std::function<std::string()>& what);
  // "LABEL100%, WHAT in 12 s" when a progress line was shown.
  void finish(std::string_view what);
  double elapsed_s() const;

  // The text of a progress line (pure, for tests): the ETA when known.
  static std::string text(std::string_view label, double fraction, std::string_view what,
                          double elapsed_s, std::optional<double> eta_s);

 private:
  StatusLine& line_;
  std::string label_;
  std::chrono::steady_clock::time_point started_;
  double fraction_ = 0;  // the highest reported (a sum of credits may wobble by a rounding)
  // The first report: the origin of the rate the ETA uses.
  std::optional<std::pair<std::chrono::steady_clock::time_point, double>> first_;
};

// The engine's progress (EngineOptions::progress) as a ProgressMeter:
// operations done of the step's, and the events with their rate.
class EngineMeter {
 public:
  explicit EngineMeter(StatusLine& line, std::string label = "") : meter_(line, std::move(label)) {}
  // For EngineOptions::progress; empty when quiet (the engine then skips it).
  workloads::EngineProgressFn callback();
  void operator()(const workloads::EngineProgress& p);
  // After the run: the last line with its `events`.
  void finish(uint64_t events);

 private:
  ProgressMeter meter_;
};

// Items of a known number (points, trials, files, steps) done one by one.
class CountMeter {
 public:
  // `unit`: plural ("points"); `at_most`: `total` is an upper bound.
  CountMeter(StatusLine& line, int64_t total, std::string unit, bool at_most = false,
             std::string label = "");
  // `done` items finished; `fraction` of the work done when it is not
  // done / total (a sweep weighs its points by their estimated work).
  void update(int64_t done, std::optional<double> fraction = std::nullopt);
  void finish(int64_t done);

 private:
  ProgressMeter meter_;
  int64_t total_;
  std::string unit_;
  bool at_most_;
};

}  // namespace clustersim::cli
