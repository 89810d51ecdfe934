#include "config/file_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

std::string read_file_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, open_reason(errno));
  const Descriptor guard{fd};
  // Linux opens a directory read-only without complaint; only read() would
  // say EISDIR, so ask first.
  struct stat info {};
  const bool known = ::fstat(fd, &info) == 0;
  if (known && S_ISDIR(info.st_mode)) fail(path, "is a directory");
  std::string text;
  if (known && S_ISREG(info.st_mode) && info.st_size > 0) {
    text.reserve(static_cast<size_t>(info.st_size));
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(path, std::string("read error (") + std::strerror(errno) + ")");
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

}  // namespace clustersim::sim
