#include "config/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "config/config_error.h"
#include "config/text_fields.h"
#include "config/units.h"

namespace clustersim::sim {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& reason) {
  throw ConfigError(
      {Diagnostic{SourceLocation{path, 0, 0}, "", "cannot read the file: " + reason}});
}

// Fixed words for the reasons users meet, so that messages (and the tests
// pinning them) do not depend on the C library's wording.
std::string open_reason(int error) {
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return "no such file";
    case EISDIR:
      return "is a directory";
    case EACCES:
    case EPERM:
      return "permission denied";
    default:
      return std::strerror(error);
  }
}

// Closes the descriptor on every way out, exceptions included.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

}  // namespace

int64_t max_input_bytes() {
  constexpr int64_t kDefault = int64_t{256} << 20;
  const char* text = std::getenv("CLUSTERSIM_MAX_INPUT_BYTES");
  if (text == nullptr || *text == '\0') return kDefault;
  const Parsed<int64_t> parsed = parse_bytes(text);
  return parsed.value && *parsed.value > 0 ? *parsed.value : kDefault;
}

std::string read_failure_text(const ReadOutcome& outcome) {
  switch (outcome.failure) {
    case ReadFailure::kMissing:
    case ReadFailure::kUnreadable:
      return open_reason(outcome.os_error);
    case ReadFailure::kDirectory:
      return "is a directory";
    case ReadFailure::kNotRegular:
      return "is not a regular file";
    case ReadFailure::kSymlinkLoop:
      return "a loop of symbolic links";
    case ReadFailure::kTooLarge:
      return "is " + with_separators(outcome.size) + " bytes, over the " +
             format_bytes(max_input_bytes()) +
             " limit on input files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)";
    case ReadFailure::kReadError:
      return std::string("read error (") + std::strerror(outcome.os_error) + ")";
    case ReadFailure::kNone:
      break;
  }
  return "read";
}

namespace {

ReadOutcome open_failure(int error) {
  if (error == ENOENT || error == ENOTDIR) return {ReadFailure::kMissing, error};
  if (error == EISDIR) return {ReadFailure::kDirectory, error};
  if (error == ELOOP) return {ReadFailure::kSymlinkLoop, error};
  return {ReadFailure::kUnreadable, error};
}

}  // namespace

ReadOutcome try_read_file_text(const std::string& path, std::string& text, bool regular_only,
                               int64_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return open_failure(errno);
  if (S_ISDIR(info.st_mode)) return {ReadFailure::kDirectory, EISDIR};
  if (regular_only && !S_ISREG(info.st_mode)) return {ReadFailure::kNotRegular, 0};
  if (S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    return {ReadFailure::kTooLarge, 0, static_cast<int64_t>(info.st_size)};
  }
  // O_NONBLOCK: a FIFO put in the file's place since stat() cannot block the
  // open (no effect on regular files).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return open_failure(errno);
  const Descriptor guard{fd};
  // Ask again about what was opened: a directory opens read-only without
  // complaint (only read() would say EISDIR), and the path may have changed.
  if (::fstat(fd, &info) != 0) return {ReadFailure::kReadError, errno};
  if (S_ISDIR(info.st_mode)) return {ReadFailure::kDirectory, EISDIR};
  if (regular_only && !S_ISREG(info.st_mode)) return {ReadFailure::kNotRegular, 0};
  std::string content;
  if (S_ISREG(info.st_mode) && info.st_size > 0) {
    if (info.st_size > max_bytes)
      return {ReadFailure::kTooLarge, 0, static_cast<int64_t>(info.st_size)};
    content.reserve(static_cast<size_t>(info.st_size));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return {ReadFailure::kReadError, errno};
    }
    content.append(buffer, static_cast<size_t>(got));
    // A file that grows while read, or a device without end.
    if (static_cast<int64_t>(content.size()) > max_bytes) {
      return {ReadFailure::kTooLarge, 0, static_cast<int64_t>(content.size())};
    }
  }
  text = std::move(content);
  return {};
}

ReadOutcome check_input_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return open_failure(errno);
  if (S_ISDIR(info.st_mode)) return {ReadFailure::kDirectory, EISDIR};
  if (!S_ISREG(info.st_mode)) return {ReadFailure::kNotRegular, 0};
  if (info.st_size > max_input_bytes()) {
    return {ReadFailure::kTooLarge, 0, static_cast<int64_t>(info.st_size)};
  }
  if (::access(path.c_str(), R_OK) != 0) return {ReadFailure::kUnreadable, errno};
  return {};
}

std::string found_phrase(const ReadOutcome& outcome, const std::string& path) {
  switch (outcome.failure) {
    case ReadFailure::kMissing:
      return "no file at '" + path + "'";
    case ReadFailure::kDirectory:
      return "a directory at '" + path + "'";
    case ReadFailure::kNotRegular:
      return "'" + path + "', which is not a regular file";
    case ReadFailure::kSymlinkLoop:
      return "'" + path + "', a loop of symbolic links";
    case ReadFailure::kUnreadable:
      return "'" + path + "', which cannot be opened for reading (permission denied?)";
    case ReadFailure::kTooLarge:
      return "'" + path + "', which " + read_failure_text(outcome);
    case ReadFailure::kReadError:
    case ReadFailure::kNone:
      break;
  }
  return "'" + path + "', which could not be read (read error)";
}

std::string read_file_text(const std::string& path) {
  std::string text;
  const ReadOutcome outcome = try_read_file_text(path, text, /*regular_only=*/true);
  if (outcome.failure != ReadFailure::kNone) fail(path, read_failure_text(outcome));
  return text;
}

}  // namespace clustersim::sim
