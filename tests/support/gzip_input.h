// Test support for gzip'd inputs (config/gzip_text.h): gzip files made at test
// time with zlib, so that no binary fixture is committed, and
// CLUSTERSIM_MAX_INPUT_BYTES set for the length of a scope.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <string>
#include <string_view>

namespace clustersim::test_support {

// `text` as one gzip member, what gzip(1) and Python's gzip module write.
inline std::string gzip_bytes(std::string_view text) {
  z_stream s{};
  // 16 + MAX_WBITS: a gzip header and trailer rather than zlib's.
  EXPECT_EQ(deflateInit2(&s, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&s, static_cast<uLong>(text.size())), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// Sets CLUSTERSIM_MAX_INPUT_BYTES (config/file_text.h) until it goes out of
// scope.
class InputLimit {
 public:
  explicit InputLimit(const char* value) { ::setenv("CLUSTERSIM_MAX_INPUT_BYTES", value, 1); }
  ~InputLimit() { ::unsetenv("CLUSTERSIM_MAX_INPUT_BYTES"); }
  InputLimit(const InputLimit&) = delete;
  InputLimit& operator=(const InputLimit&) = delete;
};

}  // namespace clustersim::test_support
