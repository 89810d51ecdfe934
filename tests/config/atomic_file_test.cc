#include "config/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::read_all;
using test_support::ScratchDir;

namespace fs = std::filesystem;

TEST(WriteFileAtomically, WritesTheContentExactly) {
  const ScratchDir dir;
  const std::string path = dir.file("report.txt");
  // Bytes a text-mode writer could alter: NUL, CR LF, no final newline.
  const std::string content("line 1\r\nnul:\0:end\n\xff\xfe last", 25);
  write_file_atomically(path, content);
  EXPECT_EQ(read_all(path), content);
  EXPECT_EQ(fs::file_size(path), content.size());
}

TEST(WriteFileAtomically, WritesLargeAndEmptyContent) {
  const ScratchDir dir;
  std::string big;
  for (int i = 0; big.size() < (3u << 20); ++i) big += std::to_string(i) + ",";
  write_file_atomically(dir.file("big.csv"), big);
  EXPECT_EQ(read_all(dir.file("big.csv")), big);

  write_file_atomically(dir.file("empty.txt"), "");
  EXPECT_TRUE(fs::is_regular_file(dir.file("empty.txt")));
  EXPECT_EQ(fs::file_size(dir.file("empty.txt")), 0u);
}

TEST(WriteFileAtomically, ReplacesAnExistingFile) {
  const ScratchDir dir;
  const std::string path = dir.file("out.md");
  {
    std::ofstream old(path, std::ios::binary);
    old << "an older and much longer report that must disappear entirely\n";
  }
  write_file_atomically(path, "new\n");
  EXPECT_EQ(read_all(path), "new\n");
  write_file_atomically(path, "newer\n");
  EXPECT_EQ(read_all(path), "newer\n");
}

TEST(WriteFileAtomically, LeavesNoTemporaryFilesBehind) {
  const ScratchDir dir;
  write_file_atomically(dir.file("a.txt"), "a");
  write_file_atomically(dir.file("b.txt"), "b");
  write_file_atomically(dir.file("a.txt"), "a again");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST(WriteFileAtomically, MissingDirectoryThrowsNamingThePath) {
  const ScratchDir dir;
  const std::string path = dir.file("no/such/dir/out.md");
  try {
    write_file_atomically(path, "x");
    FAIL() << "expected an OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': No such file or directory");
  }
  EXPECT_TRUE(dir.list().empty());
}

TEST(WriteFileAtomically, TargetThatIsADirectoryThrowsAndCleansUp) {
  const ScratchDir dir;
  const std::string path = dir.file("taken");
  fs::create_directory(path);
  try {
    write_file_atomically(path, "x");
    FAIL() << "expected an OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': rename failed: Is a directory");
  }
  // The temporary file was removed; the directory is untouched.
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"taken"}));
  EXPECT_TRUE(fs::is_empty(path));
}

TEST(WriteFileAtomically, ReadOnlyDirectoryThrowsAndKeepsTheOldFile) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "running as root: permission bits do not stop root from writing";
  }
  const ScratchDir dir;
  const std::string path = dir.file("kept.txt");
  write_file_atomically(path, "old");
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  try {
    write_file_atomically(path, "new");
    FAIL() << "expected an OutputError";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': Permission denied");
  }
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"kept.txt"}));
}

TEST(WriteFileAtomically, ConcurrentWritersToDifferentPaths) {
  const ScratchDir dir;
  std::vector<std::thread> threads;
  std::vector<std::string> expected;
  for (int t = 0; t < 8; ++t) {
    const std::string name = "out" + std::to_string(t) + ".txt";
    expected.push_back(name);
    threads.emplace_back([&dir, name, t] {
      for (int i = 0; i < 20; ++i) {
        write_file_atomically(dir.file(name), std::string(static_cast<size_t>(1000 + t), 'x'));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.list(), expected);
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(fs::file_size(dir.file("out" + std::to_string(t) + ".txt")),
              static_cast<uintmax_t>(1000 + t));
  }
}

}  // namespace
}  // namespace clustersim::sim
