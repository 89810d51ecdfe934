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
// try_read_file_text is the same read for callers that word their own
// errors (the scenario loader: "cannot open the scenario", a profile's
// missing `extends` base).
// Thread safety: safe to call concurrently.
#pragma once

#include <string>

namespace clustersim::sim {

std::string read_file_text(const std::string& path);

// Why a file could not be read; kNone when it was.
enum class ReadFailure { kNone, kMissing, kDirectory, kNotRegular, kUnreadable, kReadError };

struct ReadOutcome {
  ReadFailure failure = ReadFailure::kNone;
  int os_error = 0;  // errno of the failing call (0 when none)
};

// Reads the whole file into `text` (left as is on failure). `regular_only`:
// refuse anything but a regular file before opening it (kNotRegular), so
// that a FIFO cannot block the caller; otherwise devices and FIFOs are read.
ReadOutcome try_read_file_text(const std::string& path, std::string& text, bool regular_only);

}  // namespace clustersim::sim
