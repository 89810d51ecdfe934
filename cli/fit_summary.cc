#include "cli/fit_summary.h"

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "cli/table_text.h"
#include "sim/statistics.h"

namespace clustersim::cli {

std::string fit_date() {
  std::time_t now = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    now = static_cast<std::time_t>(std::strtoll(epoch, nullptr, 10));
  }
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string fit_percent(double fraction) { return fixed(fraction * 100.0, 2) + "%"; }

ErrorSummary summarize_errors(const std::vector<double>& errors) {
  sim::Samples s;
  for (double e : errors) s.add(std::fabs(e));
  if (s.size() == 0) return {};
  return {static_cast<int>(s.size()), s.percentile(50), s.percentile(100)};
}

}  // namespace clustersim::cli
