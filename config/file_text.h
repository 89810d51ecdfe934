// Reading a whole input file (scenario, profile, measurements, journal) into
// memory: every reader of user files goes through here, so that a file that
// cannot be read is reported the same way everywhere.
//
// Binary-safe: the bytes come back exactly as stored (NULs, "\r\n" and a
// missing last line break included); splitting lines is the caller's job.
// Errors: sim::ConfigError with one diagnostic at the path (no line), e.g.
//   data/m.csv: error: cannot read the file: no such file
// the reason being one of: no such file, is a directory, permission denied,
// read error (OS text), or the OS's text for anything else that stops open().
// Thread safety: safe to call concurrently.
#pragma once

#include <string>

namespace clustersim::sim {

std::string read_file_text(const std::string& path);

}  // namespace clustersim::sim
