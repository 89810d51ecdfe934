// Always-on invariant checks.
//
// A failed check is a bug in clustersim, not bad user input (that is a
// ConfigError): it throws InvariantError naming the invariant and where it was
// checked, so that the command can report it and exit 1 instead of crashing.
#pragma once

#include <stdexcept>
#include <string>

namespace clustersim::sim {

class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_invariant(const char* invariant, const char* file, int line,
                                 const std::string& detail);

}  // namespace clustersim::sim

// CLUSTERSIM_CHECK(cond, detail): `detail` is any expression convertible to
// std::string, evaluated only when the check fails.
#define CLUSTERSIM_CHECK(cond, detail)                                        \
  do {                                                                        \
    if (!(cond)) [[unlikely]] {                                               \
      ::clustersim::sim::fail_invariant(#cond, __FILE__, __LINE__, (detail)); \
    }                                                                         \
  } while (false)
