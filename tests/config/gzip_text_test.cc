#include "config/gzip_text.h"

#include <gtest/gtest.h>

#include <string>

#include "config/config_error.h"
#include "config/text_fields.h"
#include "tests/support/config_errors.h"
#include "tests/support/gzip_input.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::sim {
namespace {

using test_support::gzip_bytes;
using test_support::InputLimit;
using test_support::ScratchDir;

std::string error_reading(const std::string& path) {
  return test_support::file_read_error(
      [](const std::string& p) { return read_file_text_or_gunzip(p); }, path);
}

// Text of more than one 64 KiB output buffer, that compresses well.
std::string long_text() {
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "{\"ts\": " + std::to_string(i) + "},\n";
  return text;
}

TEST(GzipText, TheMagicNumberIsTheFirstTwoBytes) {
  EXPECT_TRUE(looks_like_gzip("\x1f\x8b"));
  EXPECT_TRUE(looks_like_gzip(gzip_bytes("{}")));
  EXPECT_FALSE(looks_like_gzip("\x1f"));
  EXPECT_FALSE(looks_like_gzip("\x8b\x1f"));
  EXPECT_FALSE(looks_like_gzip("{\"traceEvents\": []}"));
  EXPECT_FALSE(looks_like_gzip(""));
}

TEST(GzipText, APlainFileComesBackByteForByte) {
  const ScratchDir dir;
  const std::string bytes("a\r\nb\0c\n\xff\x1f no final break", 24);
  // The name does not matter: a plain file called .gz is read as it is.
  for (const char* name : {"plain.json", "plain.json.gz"}) {
    const std::string path = dir.write(name, bytes);
    EXPECT_EQ(read_file_text_or_gunzip(path), bytes);
    EXPECT_EQ(read_file_text_or_gunzip(path), read_file_text(path));
  }
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("one_byte", "\x1f")), "\x1f");
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("empty", "")), "");
}

TEST(GzipText, AGzipFileIsDecompressedWhateverItsName) {
  const ScratchDir dir;
  const std::string text = long_text();
  ASSERT_GT(text.size(), size_t{1} << 16);
  const std::string gz = gzip_bytes(text);
  ASSERT_LT(gz.size(), text.size() / 4);
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("trace.json.gz", gz)), text);
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("trace.json", gz)), text);
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("empty.gz", gzip_bytes(""))), "");
  EXPECT_EQ(gunzip_text(gz, "mem.gz"), text);
}

TEST(GzipText, ConcatenatedMembersAreOneTextAndNulPaddingIsIgnored) {
  const ScratchDir dir;
  const std::string two = gzip_bytes("{\"a\": 1,") + gzip_bytes(" \"b\": 2}\n");
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("two.gz", two)), "{\"a\": 1, \"b\": 2}\n");
  EXPECT_EQ(read_file_text_or_gunzip(dir.write("padded.gz", two + std::string(512, '\0'))),
            "{\"a\": 1, \"b\": 2}\n");
}

TEST(GzipText, OtherBytesAfterAMemberAreRefused) {
  const ScratchDir dir;
  const std::string gz = gzip_bytes("{}");
  const std::string path = dir.write("tail.gz", gz + "junk");
  EXPECT_EQ(error_reading(path), path +
                                     ": error: expected another gzip member or the end of the file "
                                     "at byte " +
                                     std::to_string(gz.size()) +
                                     ", found other data (the file is gzip up to there)");
}

TEST(GzipText, ATruncatedFileNamesTheFileAndWhereItEnds) {
  const ScratchDir dir;
  const std::string gz = gzip_bytes(long_text());
  const std::string cut = gz.substr(0, gz.size() / 2);
  const std::string path = dir.write("cut.json.gz", cut);
  EXPECT_EQ(error_reading(path), path +
                                     ": error: expected a gzip stream, found a truncated one (the "
                                     "file ends after " +
                                     with_separators(static_cast<int64_t>(cut.size())) + " bytes)");
  // Only the trailer (CRC-32 and size) missing, or only the magic number.
  const std::string no_trailer = dir.write("no_trailer.gz", gz.substr(0, gz.size() - 8));
  EXPECT_NE(error_reading(no_trailer).find("found a truncated one"), std::string::npos);
  const std::string magic = dir.write("magic.gz", "\x1f\x8b");
  EXPECT_EQ(error_reading(magic),
            magic +
                ": error: expected a gzip stream, found a truncated one (the file ends after 2 "
                "bytes)");
}

TEST(GzipText, CorruptDataIsRefusedWithZlibsReason) {
  const ScratchDir dir;
  std::string gz = gzip_bytes("{\"traceEvents\": []}");
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 0x55);  // the CRC-32
  const std::string path = dir.write("crc.gz", gz);
  const std::string error = error_reading(path);
  EXPECT_EQ(error.rfind(path + ": error: expected a gzip stream, found corrupt data near byte ", 0),
            0u)
      << error;
  EXPECT_NE(error.find("(zlib: incorrect data check)"), std::string::npos) << error;
  // An unknown compression method in the header.
  std::string method = gzip_bytes("{}");
  method[2] = 9;
  const std::string bad_header = dir.write("method.gz", method);
  EXPECT_NE(error_reading(bad_header).find("(zlib: unknown compression method)"),
            std::string::npos);
}

TEST(GzipText, TheDecompressedSizeIsBoundedByTheInputLimit) {
  const ScratchDir dir;
  // 1 MiB of one byte: about a kilobyte compressed, a small zip bomb.
  const std::string bomb = dir.write("bomb.json.gz", gzip_bytes(std::string(1 << 20, ' ')));
  const InputLimit limit("64KiB");
  EXPECT_EQ(error_reading(bomb),
            bomb +
                ": error: cannot read the file: decompresses to more than the 64KiB limit on "
                "input files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)");
  // Exactly at the limit is allowed.
  const std::string full = dir.write("full.gz", gzip_bytes(std::string(64 << 10, 'x')));
  EXPECT_EQ(read_file_text_or_gunzip(full).size(), size_t{64} << 10);
  const std::string over = dir.write("over.gz", gzip_bytes(std::string((64 << 10) + 1, 'x')));
  EXPECT_NE(error_reading(over).find("decompresses to more than the 64KiB limit"),
            std::string::npos);
  EXPECT_THROW(gunzip_text(gzip_bytes("abcd"), "mem.gz", 3), ConfigError);
  EXPECT_EQ(gunzip_text(gzip_bytes("abcd"), "mem.gz", 4), "abcd");
}

}  // namespace
}  // namespace clustersim::sim
