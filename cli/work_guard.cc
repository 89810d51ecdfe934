#include "cli/work_guard.h"

#include <utility>

#include "cli/table_text.h"

namespace clustersim::cli {

std::vector<OptionSpec> work_limit_options() {
  const WorkLimits defaults;
  return {{"--max-tasks-per-rank", "N", false,
           "refuse a step whose schedule has more tasks per rank (default " +
               with_separators(defaults.max_tasks_per_rank) + ", about 2.3 GB)"},
          {"--max-events", "N", false,
           "refuse a step of more tasks x timelines to simulate (default " +
               with_separators(defaults.max_task_timelines) + ")"}};
}

WorkLimits work_limits_from(const ParsedCommand& parsed) {
  WorkLimits limits;
  for (auto [option, limit] : {std::pair{"--max-tasks-per-rank", &limits.max_tasks_per_rank},
                               std::pair{"--max-events", &limits.max_task_timelines}}) {
    *limit = parsed.non_negative_int_or(option, *limit, "a limit");
    if (*limit == 0) {
      throw UsageError(std::string("option '") + option + "' expects a limit > 0, found '0'");
    }
  }
  return limits;
}

}  // namespace clustersim::cli
