#include "config/file_text.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "config/config_error.h"
#include "tests/support/config_errors.h"
#include "tests/support/gzip_input.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::InputLimit;
using test_support::ScratchDir;

std::string error_reading(const std::string& path) {
  return test_support::file_read_error([](const std::string& p) { return read_file_text(p); },
                                       path);
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

TEST(FileText, AFifoIsRefusedWithoutBlocking) {
  const ScratchDir dir;
  const std::string path = dir.file("pipe.yaml");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  // No writer: opening it for reading would block forever.
  EXPECT_EQ(error_reading(path), path + ": error: cannot read the file: is not a regular file");
  EXPECT_EQ(check_input_file(path).failure, ReadFailure::kNotRegular);
}

TEST(FileText, ADeviceIsNotAnInputFile) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  EXPECT_EQ(error_reading("/dev/zero"),
            "/dev/zero: error: cannot read the file: is not a regular file");
  EXPECT_EQ(found_phrase(check_input_file("/dev/zero"), "/dev/zero"),
            "'/dev/zero', which is not a regular file");
}

TEST(FileText, ASymlinkLoopIsNamed) {
  const ScratchDir dir;
  const std::string a = dir.file("a.yaml");
  const std::string b = dir.file("b.yaml");
  std::filesystem::create_symlink(b, a);
  std::filesystem::create_symlink(a, b);
  EXPECT_EQ(error_reading(a), a + ": error: cannot read the file: a loop of symbolic links");
  EXPECT_EQ(found_phrase(check_input_file(a), a), "'" + a + "', a loop of symbolic links");
}

TEST(FileText, TheSizeLimitIs256MiBUnlessTheEnvironmentSaysOtherwise) {
  EXPECT_EQ(max_input_bytes(), int64_t{256} << 20);
  {
    const InputLimit limit("1KiB");
    EXPECT_EQ(max_input_bytes(), 1024);
  }
  {
    const InputLimit limit("lots");  // not a size: the default stands
    EXPECT_EQ(max_input_bytes(), int64_t{256} << 20);
  }
}

TEST(FileText, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  const ScratchDir dir;
  const std::string path = dir.write("big.yaml", std::string(2000, 'x'));
  const InputLimit limit("1KiB");
  EXPECT_EQ(error_reading(path),
            path +
                ": error: cannot read the file: is 2,000 bytes, over the 1KiB limit on input files "
                "(set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)");
  const ReadOutcome outcome = check_input_file(path);
  EXPECT_EQ(outcome.failure, ReadFailure::kTooLarge);
  EXPECT_EQ(outcome.size, 2000);
  EXPECT_EQ(read_file_text(dir.write("small.yaml", std::string(1024, 'y'))).size(), 1024u);
}

TEST(FileText, ANonRegularReadStopsAtTheLimit) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  std::string text = "kept";
  const ReadOutcome outcome =
      try_read_file_text("/dev/zero", text, /*regular_only=*/false, /*max_bytes=*/100000);
  EXPECT_EQ(outcome.failure, ReadFailure::kTooLarge);
  EXPECT_GT(outcome.size, 100000);
  EXPECT_EQ(text, "kept");
}

TEST(FileText, CheckInputFileAcceptsARegularFile) {
  const ScratchDir dir;
  EXPECT_EQ(check_input_file(dir.write("ok.yaml", "a: 1\n")).failure, ReadFailure::kNone);
  EXPECT_EQ(found_phrase(check_input_file(dir.file("none.yaml")), "none.yaml"),
            "no file at 'none.yaml'");
  EXPECT_EQ(found_phrase(check_input_file(dir.path()), "d"), "a directory at 'd'");
}

}  // namespace
}  // namespace clustersim::sim
