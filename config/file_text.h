// Reading a whole input file (scenario, profile, measurements, journal) into
// memory: every reader of user files goes through here, so that a file that
// cannot be read is reported the same way everywhere.
//
// Binary-safe: the bytes come back exactly as stored (NULs, "\r\n" and a
// missing last line break included); splitting lines is the caller's job.
// Only regular files are read (a FIFO, socket or device is refused before
// it is opened, and the open itself never blocks), at most
// max_input_bytes() of them (a larger file is refused before it is read).
// Errors: sim::ConfigError with one diagnostic at the path (no line), e.g.
//   data/m.csv: error: cannot read the file: no such file
// the reason being one of: no such file, is a directory, is not a regular
// file, a loop of symbolic links, permission denied, too large (with the
// limit and how to raise it), read error (OS text), or the OS's text for
// anything else that stops open().
// try_read_file_text is the same read for callers that word their own
// errors (the scenario loader: "cannot open the scenario", a profile's
// missing `extends` base).
// Thread safety: safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>

namespace clustersim::sim {

std::string read_file_text(const std::string& path);

// The largest input file read, in bytes: 256 MiB, or the size in the
// environment variable CLUSTERSIM_MAX_INPUT_BYTES ("2GiB", "500MB", a number
// of bytes) when it holds one. Large enough for any scenario, profile or
// measurement file; a Kineto trace of a long profile may need more.
int64_t max_input_bytes();

// Why a file could not be read; kNone when it was.
enum class ReadFailure {
  kNone,
  kMissing,
  kDirectory,
  kNotRegular,
  kSymlinkLoop,
  kUnreadable,
  kTooLarge,
  kReadError
};

struct ReadOutcome {
  ReadFailure failure = ReadFailure::kNone;
  int os_error = 0;  // errno of the failing call (0 when none)
  int64_t size = 0;  // kTooLarge: the file's size (or the bytes read before stopping)
};

// The words every reader uses for a failure other than kNone, e.g. "is not a
// regular file" or "is 1GB, over the 256MiB limit on input files (set
// CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)".
std::string read_failure_text(const ReadOutcome& outcome);

// What is at `path` as an input file, without reading it: kNone for a
// regular file within max_input_bytes(), else why it could not be read.
ReadOutcome check_input_file(const std::string& path);

// The same words as a "found ..." phrase for `expected X, found ...`
// messages: "no file at 'P'", "a directory at 'P'", "'P', which is not a
// regular file", "'P', a loop of symbolic links", ...
std::string found_phrase(const ReadOutcome& outcome, const std::string& path);

// Reads the whole file into `text` (left as is on failure), refusing one of
// more than `max_bytes`. `regular_only`: refuse anything but a regular file
// (kNotRegular); otherwise devices and FIFOs are read (never for user input:
// /proc files, which report no size). Never blocks on opening a FIFO.
ReadOutcome try_read_file_text(const std::string& path, std::string& text, bool regular_only,
                               int64_t max_bytes = max_input_bytes());

}  // namespace clustersim::sim
