#include "config/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace clustersim::sim {

namespace {

std::string reason(int error) { return std::strerror(error); }

// Unique within the process; the pid makes it unique across processes.
std::string temporary_name(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temp = temporary_name(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw OutputError("cannot write '" + path + "': " + reason(errno));
  }
  const auto fail = [&](const char* what) {
    const int error = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    throw OutputError("cannot write '" + path + "': " + what + ": " + reason(error));
  };
  const char* data = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("write failed");
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  if (::fsync(fd) != 0) fail("fsync failed");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    throw OutputError("cannot write '" + path + "': close failed: " + reason(error));
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    throw OutputError("cannot write '" + path + "': rename failed: " + reason(error));
  }
}

}  // namespace clustersim::sim
