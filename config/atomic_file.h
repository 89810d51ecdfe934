// Writing output files atomically: the content goes to a temporary file in
// the same directory, is flushed to disk, and is renamed over the target. A
// reader (or an interrupted run) sees either the old file or the complete
// new one, never half a report.
// Thread safety: safe to call concurrently for different paths.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace clustersim::sim {

// A file could not be written; what() names the path and the reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace clustersim::sim
