#include "cli/work_guard.h"

#include <unistd.h>

#include <utility>

#include "cli/table_text.h"

namespace clustersim::cli {

std::vector<OptionSpec> work_limit_options() {
  const WorkLimits defaults;
  return {{"--max-tasks-per-rank", "N", false,
           "refuse a step whose schedule has more tasks per rank (default " +
               with_separators(defaults.max_tasks_per_rank) + ", about 2.3 GB)"},
          {"--max-events", "N", false,
           "refuse a step of more tasks x ranks to simulate (default " +
               with_separators(defaults.max_task_ranks) + ")"}};
}

WorkLimits work_limits_from(const ParsedCommand& parsed) {
  WorkLimits limits;
  for (auto [option, limit] : {std::pair{"--max-tasks-per-rank", &limits.max_tasks_per_rank},
                               std::pair{"--max-events", &limits.max_task_ranks}}) {
    *limit = parsed.non_negative_int_or(option, *limit, "a limit");
    if (*limit == 0) {
      throw UsageError(std::string("option '") + option + "' expects a limit > 0, found '0'");
    }
  }
  return limits;
}

EventProgress::EventProgress(std::ostream& err, std::string command)
    : err_(err),
      command_(std::move(command)),
      enabled_(isatty(STDERR_FILENO) == 1),
      started_(std::chrono::steady_clock::now()),
      last_(started_) {}

void EventProgress::done() {
  if (shown_) err_ << "\n" << std::flush;
  shown_ = false;
}

void EventProgress::operator()(uint64_t events) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  shown_ = true;
  const double s = std::chrono::duration<double>(now - started_).count();
  const double millions = static_cast<double>(events) * 1e-6;
  err_ << "\r" << command_ << ": " << fixed(millions, 1) << " M events, "
       << fixed(s > 0 ? millions / s : 0, 1) << " M/s, " << fixed(s, 0) << " s   " << std::flush;
}

StepCountProgress::StepCountProgress(std::ostream& err, std::string command)
    : err_(err),
      command_(std::move(command)),
      enabled_(isatty(STDERR_FILENO) == 1),
      started_(std::chrono::steady_clock::now()),
      last_(started_) {}

void StepCountProgress::step_done() {
  ++steps_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  shown_ = true;
  err_ << "\r" << command_ << ": " << steps_ << " steps simulated, "
       << fixed(std::chrono::duration<double>(now - started_).count(), 0) << " s   " << std::flush;
}

std::function<void()> StepCountProgress::callback() {
  if (!enabled_) return {};
  return [this] { step_done(); };
}

void StepCountProgress::done() {
  if (shown_) err_ << "\n" << std::flush;
  shown_ = false;
}

}  // namespace clustersim::cli
