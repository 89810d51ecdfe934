#include "config/gzip_text.h"

// next_in as a pointer to const: the input is never written.
#define ZLIB_CONST
#include <zlib.h>

#include <algorithm>

#include "config/config_error.h"
#include "config/text_fields.h"
#include "config/units.h"

namespace clustersim::sim {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& message) {
  throw ConfigError({Diagnostic{SourceLocation{file, 0, 0}, "", message}});
}

// zlib takes at most 4 GiB at a time (uInt counts); larger inputs are fed in
// pieces.
constexpr size_t kMaxFeed = size_t{1} << 30;

// Deflate expands at most about 1032 to 1: a bound on the useful reservation.
constexpr int64_t kMaxRatio = 1032;

// A gzip member ends with the size of its text modulo 2^32, little-endian
// (RFC 1952, ISIZE): a hint for the reservation only, never trusted.
int64_t last_member_size(std::string_view compressed) {
  if (compressed.size() < 18) return 0;  // smaller than any member
  int64_t size = 0;
  for (size_t i = 0; i < 4; ++i) {
    size |= int64_t{static_cast<unsigned char>(compressed[compressed.size() - 4 + i])} << (8 * i);
  }
  return size;
}

// One inflate stream, ended on every way out, exceptions included.
class Inflater {
 public:
  explicit Inflater(const std::string& file) {
    // 16 + MAX_WBITS: a gzip header and trailer (CRC-32 and size) around the
    // deflate data, both checked.
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) {
      fail(file, "cannot read the file: out of memory to decompress it");
    }
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  z_stream& stream() { return stream_; }

 private:
  z_stream stream_{};
};

}  // namespace

bool looks_like_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip_text(std::string_view compressed, const std::string& file, int64_t max_bytes) {
  Inflater inflater(file);
  z_stream& s = inflater.stream();
  const size_t size = compressed.size();
  size_t fed = 0;  // bytes of `compressed` handed to zlib so far
  const auto feed_from = [&](size_t offset) {
    const size_t piece = std::min(size - offset, kMaxFeed);
    s.next_in = reinterpret_cast<const Bytef*>(compressed.data() + offset);
    s.avail_in = static_cast<uInt>(piece);
    fed = offset + piece;
  };
  feed_from(0);

  std::string text;
  text.reserve(static_cast<size_t>(
      std::min({last_member_size(compressed), max_bytes, static_cast<int64_t>(size) * kMaxRatio})));
  char buffer[1 << 16];
  for (;;) {
    if (s.avail_in == 0 && fed < size) feed_from(fed);
    s.next_out = reinterpret_cast<Bytef*>(buffer);
    s.avail_out = sizeof buffer;
    const int result = inflate(&s, Z_NO_FLUSH);
    const size_t produced = sizeof buffer - s.avail_out;
    if (static_cast<int64_t>(text.size() + produced) > max_bytes) {
      fail(file, "cannot read the file: decompresses to more than the " + format_bytes(max_bytes) +
                     " limit on input files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)");
    }
    text.append(buffer, produced);
    const size_t at = fed - s.avail_in;  // the first byte zlib has not taken
    switch (result) {
      case Z_OK:
        continue;
      case Z_STREAM_END: {
        // The member is complete and its CRC-32 and size checked. Padding
        // (NULs) may follow, or another member.
        size_t next = at;
        while (next < size && compressed[next] == '\0') ++next;
        if (next == size) return text;
        if (!looks_like_gzip(compressed.substr(next))) {
          fail(file, "expected another gzip member or the end of the file at byte " +
                         with_separators(static_cast<int64_t>(next)) +
                         ", found other data (the file is gzip up to there)");
        }
        if (inflateReset(&s) != Z_OK) fail(file, "cannot read the file: decompression failed");
        feed_from(next);
        continue;
      }
      case Z_BUF_ERROR:
        // No progress with room for output: the input ran out mid-member.
        if (s.avail_in == 0 && fed == size) {
          fail(file, "expected a gzip stream, found a truncated one (the file ends after " +
                         with_separators(static_cast<int64_t>(size)) + " bytes)");
        }
        break;
      case Z_MEM_ERROR:
        fail(file, "cannot read the file: out of memory to decompress it");
      default:
        break;
    }
    // Z_DATA_ERROR (bad header, bad deflate data, CRC or size mismatch),
    // Z_NEED_DICT (a preset dictionary, which gzip never uses), or a
    // Z_BUF_ERROR with input left, which zlib does not return.
    fail(file, "expected a gzip stream, found corrupt data near byte " +
                   with_separators(static_cast<int64_t>(at)) + " (zlib: " +
                   (s.msg != nullptr ? std::string(s.msg) : "error " + std::to_string(result)) +
                   ")");
  }
}

std::string read_file_text_or_gunzip(const std::string& path) {
  std::string text = read_file_text(path);
  if (!looks_like_gzip(text)) return text;
  return gunzip_text(text, path);
}

}  // namespace clustersim::sim
