// Reading gzip-compressed input files: what torch.profiler's
// tensorboard_trace_handler(use_gzip=True) writes (trace.json.gz). A file is
// gzip when its first two bytes are gzip's magic number (0x1f 0x8b, RFC 1952),
// whatever its name; anything else is returned exactly as read_file_text
// returns it (config/file_text.h), byte for byte.
//
// Members: several gzip members one after another (what `cat a.gz b.gz`
// makes) decompress to their texts one after another, as gzip(1) does; NUL
// bytes after the last member (padding) are ignored; any other bytes after a
// member are an error.
// Sizes, in bytes: the compressed file is at most max_input_bytes() (checked
// by read_file_text, before it is read), and so is its decompressed text:
// decompression stops, with an error, as soon as it would produce more (a
// "zip bomb" of a few KB that expands to gigabytes is refused after using at
// most the limit in memory).
// Errors: sim::ConfigError with one diagnostic at the path (no line):
//   trace.json.gz: error: expected a gzip stream, found a truncated one (the file ends after
//   1,234 bytes)
//   trace.json.gz: error: expected a gzip stream, found corrupt data near byte 20 (zlib: invalid
//   block type)
//   trace.json.gz: error: cannot read the file: decompresses to more than the 256MiB limit on
//   input files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)
// Messages about the content (a JSON syntax error) are the caller's and give
// line:col in the decompressed text, under the compressed file's name.
// Ownership: the text is returned by value; nothing is kept.
// Thread safety: safe to call concurrently (zlib's state is per call).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/file_text.h"

namespace clustersim::sim {

// True when `bytes` starts with gzip's magic number 0x1f 0x8b.
bool looks_like_gzip(std::string_view bytes);

// The decompressed content of `compressed`, the bytes of a gzip file (one
// member or several); `file` is what messages show. At most `max_bytes` of
// output, else a ConfigError (above).
std::string gunzip_text(std::string_view compressed, const std::string& file,
                        int64_t max_bytes = max_input_bytes());

// The file at `path` as text: read_file_text(path), decompressed when it
// starts with the gzip magic number. For readers that take torch.profiler's
// traces (calibration/kineto_trace.h, calibration/measurement_files.h).
std::string read_file_text_or_gunzip(const std::string& path);

}  // namespace clustersim::sim
