#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <utility>

#include "cli/table_text.h"
#include "config/text_fields.h"
#include "scenario/work_limits.h"

namespace clustersim::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string two_digits(int64_t n) { return (n < 10 ? "0" : "") + std::to_string(n); }

}  // namespace

OptionSpec quiet_option() {
  return {"--quiet", "", false,
          "print no progress, estimates or names of files written on stderr (errors and "
          "warnings still)"};
}

StatusMode status_mode(const ParsedCommand& parsed, const std::ostream& err) {
  if (parsed.has("--quiet")) return StatusMode::kQuiet;
  return &err == &std::cerr && isatty(STDERR_FILENO) == 1 ? StatusMode::kTerminal
                                                          : StatusMode::kLines;
}

std::string count_text(double n) {
  if (n < 9999.5) return sim::with_separators(static_cast<int64_t>(std::llround(n)));
  if (n < 999'950) return fixed(n / 1e3, 1) + " k";
  if (n < 999'950'000) return fixed(n / 1e6, 1) + " M";
  return fixed(n / 1e9, 1) + " G";
}

std::string duration_text(double seconds) {
  const int64_t s = std::max<int64_t>(0, std::llround(seconds));
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + two_digits(s % 60) + " s";
  const int64_t minutes = (s + 30) / 60;
  return std::to_string(minutes / 60) + " h " + two_digits(minutes % 60) + " min";
}

int percent_done(double fraction) {
  if (!(fraction > 0)) return 0;  // NaN too
  return static_cast<int>(std::min(99.0, std::floor(100.0 * fraction)));
}

std::string files_text(const std::vector<std::string>& files, std::string_view pattern) {
  if (files.size() > 3) return std::to_string(files.size()) + " files " + std::string(pattern);
  std::string text;
  for (const std::string& f : files) text += (text.empty() ? "" : ", ") + f;
  return text;
}

std::string step_work_text(const workloads::StepWork& work) {
  return "simulating " + timelines_text(work) + " x " + sim::with_separators(work.tasks_per_rank) +
         " tasks (" + count_text(static_cast<double>(work.task_timelines())) + " tasks)";
}

// ---- StatusLine ----

StatusLine::StatusLine(std::ostream& err, std::string command, StatusMode mode, SteadyNow now)
    : err_(err),
      command_(std::move(command)),
      mode_(mode),
      now_(now ? std::move(now) : SteadyNow([] { return Clock::now(); })),
      last_(now_()) {}

StatusLine::~StatusLine() { end_redrawn_line(); }

void StatusLine::end_redrawn_line() {
  if (redrawn_ == 0) return;
  err_ << "\n" << std::flush;
  redrawn_ = 0;
}

void StatusLine::note(std::string_view text) {
  if (quiet()) return;
  end_redrawn_line();
  err_ << command_ << ": " << text << "\n" << std::flush;
}

bool StatusLine::due() {
  if (quiet()) return false;
  const Clock::time_point t = now_();
  const auto interval = mode_ == StatusMode::kTerminal
                            ? std::chrono::duration_cast<Clock::duration>(kRedrawInterval)
                            : std::chrono::duration_cast<Clock::duration>(kLineInterval);
  if (t - last_ < interval) return false;
  last_ = t;
  return true;
}

void StatusLine::show(std::string_view text) {
  if (quiet()) return;
  shown_ = true;
  const std::string line = command_ + ": " + std::string(text);
  if (mode_ == StatusMode::kLines) {
    err_ << line << "\n" << std::flush;
    return;
  }
  // Spaces over what is left of a longer previous line.
  err_ << "\r" << line << std::string(redrawn_ > line.size() ? redrawn_ - line.size() : 0, ' ')
       << std::flush;
  redrawn_ = line.size();
}

void StatusLine::finish(std::string_view text) {
  if (!shown_) return;
  show(text);
  end_redrawn_line();
  shown_ = false;
}

// ---- ProgressMeter ----

ProgressMeter::ProgressMeter(StatusLine& line, std::string label)
    : line_(line), label_(std::move(label)), started_(line.now()) {}

double ProgressMeter::elapsed_s() const { return seconds_between(started_, line_.now()); }

std::string ProgressMeter::text(std::string_view label, double fraction, std::string_view what,
                                double elapsed_s, std::optional<double> eta_s) {
  return std::string(label) + std::to_string(percent_done(fraction)) + "%, " + std::string(what) +
         ", " + duration_text(elapsed_s) + " elapsed, ETA " +
         (eta_s ? duration_text(*eta_s) : std::string("unknown"));
}

void ProgressMeter::update(double fraction, const std::function<std::string()>& what) {
  if (line_.quiet()) return;
  fraction = std::max(fraction, fraction_);
  fraction_ = fraction;
  const Clock::time_point t = line_.now();
  if (!first_) first_.emplace(t, fraction);
  if (!line_.due()) return;
  // The rate since the first report; before a second one, since the start.
  const auto [t0, f0] = *first_;
  const bool measured = t > t0 && fraction > f0;
  const double span = measured ? seconds_between(t0, t) : seconds_between(started_, t);
  const double gained = measured ? fraction - f0 : fraction;
  std::optional<double> eta;
  if (fraction >= 1) {
    eta = 0;
  } else if (gained > 0 && span > 0) {
    eta = (1 - fraction) * span / gained;
  }
  line_.show(text(label_, fraction, what(), seconds_between(started_, t), eta));
}

void ProgressMeter::finish(std::string_view what) {
  line_.finish(label_ + "100%, " + std::string(what) + " in " + duration_text(elapsed_s()));
}

// ---- EngineMeter ----

workloads::EngineProgressFn EngineMeter::callback() {
  if (meter_.quiet()) return {};
  return [this](const workloads::EngineProgress& p) { (*this)(p); };
}

void EngineMeter::operator()(const workloads::EngineProgress& p) {
  const double fraction =
      p.ops_total > 0 ? static_cast<double>(p.ops_done) / static_cast<double>(p.ops_total) : 0;
  meter_.update(fraction, [&] {
    const double s = meter_.elapsed_s();
    const double events = static_cast<double>(p.events);
    return count_text(events) + " events, " + count_text(s > 0 ? events / s : 0) + " events/s";
  });
}

void EngineMeter::finish(uint64_t events) {
  meter_.finish(count_text(static_cast<double>(events)) + " events");
}

// ---- CountMeter ----

CountMeter::CountMeter(StatusLine& line, int64_t total, std::string unit, bool at_most,
                       std::string label)
    : meter_(line, std::move(label)), total_(total), unit_(std::move(unit)), at_most_(at_most) {}

void CountMeter::update(int64_t done, std::optional<double> fraction) {
  const double f = fraction
                       ? *fraction
                       : (total_ > 0 ? static_cast<double>(done) / static_cast<double>(total_) : 0);
  meter_.update(f, [&] {
    return sim::with_separators(done) + " of " + (at_most_ ? "at most " : "") +
           sim::with_separators(total_) + " " + unit_;
  });
}

void CountMeter::finish(int64_t done) { meter_.finish(sim::with_separators(done) + " " + unit_); }

}  // namespace clustersim::cli
