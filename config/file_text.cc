#include "config/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "config/config_error.h"

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

ReadOutcome try_read_file_text(const std::string& path, std::string& text, bool regular_only) {
  if (regular_only) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      return {
          errno == ENOENT || errno == ENOTDIR ? ReadFailure::kMissing : ReadFailure::kUnreadable,
          errno};
    }
    if (S_ISDIR(info.st_mode)) return {ReadFailure::kDirectory, EISDIR};
    if (!S_ISREG(info.st_mode)) return {ReadFailure::kNotRegular, 0};
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) return {ReadFailure::kMissing, error};
    if (error == EISDIR) return {ReadFailure::kDirectory, error};
    return {ReadFailure::kUnreadable, error};
  }
  const Descriptor guard{fd};
  // Linux opens a directory read-only without complaint; only read() would
  // say EISDIR, so ask first.
  struct stat info {};
  const bool known = ::fstat(fd, &info) == 0;
  if (known && S_ISDIR(info.st_mode)) return {ReadFailure::kDirectory, EISDIR};
  std::string content;
  if (known && S_ISREG(info.st_mode) && info.st_size > 0) {
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
  }
  text = std::move(content);
  return {};
}

std::string read_file_text(const std::string& path) {
  std::string text;
  const ReadOutcome outcome = try_read_file_text(path, text, /*regular_only=*/false);
  switch (outcome.failure) {
    case ReadFailure::kNone:
      return text;
    case ReadFailure::kMissing:
    case ReadFailure::kUnreadable:
      fail(path, open_reason(outcome.os_error));
    case ReadFailure::kDirectory:
      fail(path, "is a directory");
    case ReadFailure::kNotRegular:
      fail(path, "is not a regular file");
    case ReadFailure::kReadError:
      fail(path, std::string("read error (") + std::strerror(outcome.os_error) + ")");
  }
  return text;
}

}  // namespace clustersim::sim
