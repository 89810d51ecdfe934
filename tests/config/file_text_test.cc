#include "config/file_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "config/config_error.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::ScratchDir;

// what() of the ConfigError that reading `path` throws ("" if none).
std::string error_reading(const std::string& path) {
  try {
    read_file_text(path);
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].where.file, path);
    EXPECT_EQ(e.diagnostics()[0].where.line, 0);
    return e.what();
  }
  return "";
}

TEST(FileText, ReturnsTheBytesExactlyAsStored) {
  const ScratchDir dir;
  const std::string bytes("a\r\nb\0c\n\xff\xfe no final break", 25);
  const std::string path = dir.write("binary.dat", bytes);
  EXPECT_EQ(read_file_text(path), bytes);
  EXPECT_EQ(read_file_text(path).size(), 25u);
}

TEST(FileText, AnEmptyFileIsAnEmptyString) {
  const ScratchDir dir;
  EXPECT_EQ(read_file_text(dir.write("empty", "")), "");
}

TEST(FileText, ReadsMoreThanOneBufferFull) {
  const ScratchDir dir;
  std::string big;
  for (int i = 0; i < 50000; ++i) big += std::to_string(i) + "\n";
  ASSERT_GT(big.size(), size_t{1} << 16);
  EXPECT_EQ(read_file_text(dir.write("big.txt", big)), big);
}

TEST(FileText, MissingFileNamesThePathAndTheReason) {
  const ScratchDir dir;
  const std::string path = dir.file("absent.yaml");
  EXPECT_EQ(error_reading(path), path + ": error: cannot read the file: no such file");
  // A missing directory on the way is the same thing to the user.
  const std::string deeper = dir.file("no/such/dir.yaml");
  EXPECT_EQ(error_reading(deeper), deeper + ": error: cannot read the file: no such file");
}

TEST(FileText, DirectoryIsNotAFile) {
  const ScratchDir dir;
  EXPECT_EQ(error_reading(dir.path()),
            dir.path() + ": error: cannot read the file: is a directory");
}

TEST(FileText, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not stop reading";
  const ScratchDir dir;
  const std::string path = dir.write("secret.yaml", "name: x\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  EXPECT_EQ(error_reading(path), path + ": error: cannot read the file: permission denied");
}

TEST(FileText, ReadErrorCarriesTheOsReason) {
  // Reading a process's memory at address 0 opens fine and then fails in
  // read() (EIO): a read error that needs no broken disk.
  if (!std::filesystem::exists("/proc/self/mem")) GTEST_SKIP() << "no /proc";
  EXPECT_EQ(error_reading("/proc/self/mem"),
            "/proc/self/mem: error: cannot read the file: read error (Input/output error)");
}

}  // namespace
}  // namespace clustersim::sim
