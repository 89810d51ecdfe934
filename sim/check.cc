#include "sim/check.h"

namespace clustersim::sim {

void fail_invariant(const char* invariant, const char* file, int line, const std::string& detail) {
  std::string message = "internal error: invariant '";
  message += invariant;
  message += "' failed at ";
  message += file;
  message += ':';
  message += std::to_string(line);
  if (!detail.empty()) {
    message += ": ";
    message += detail;
  }
  throw InvariantError(message);
}

}  // namespace clustersim::sim
