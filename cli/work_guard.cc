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

ProgressLine::ProgressLine(std::ostream& err, std::string command)
    : err_(err),
      command_(std::move(command)),
      enabled_(isatty(STDERR_FILENO) == 1),
      started_(std::chrono::steady_clock::now()),
      last_(started_) {}

void ProgressLine::update(const std::function<std::string(double)>& text) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  shown_ = true;
  err_ << "\r" << command_ << ": " << text(std::chrono::duration<double>(now - started_).count())
       << "   " << std::flush;
}

void ProgressLine::done() {
  if (shown_) err_ << "\n" << std::flush;
  shown_ = false;
}

void EventProgress::operator()(uint64_t events) {
  line_.update([events](double s) {
    const double millions = static_cast<double>(events) * 1e-6;
    return fixed(millions, 1) + " M events, " + fixed(s > 0 ? millions / s : 0, 1) + " M/s, " +
           fixed(s, 0) + " s";
  });
}

std::function<void()> StepCountProgress::callback() {
  if (!line_.enabled()) return {};
  return [this] {
    ++steps_;
    line_.update([this](double s) {
      return std::to_string(steps_) + " steps simulated, " + fixed(s, 0) + " s";
    });
  };
}

}  // namespace clustersim::cli
