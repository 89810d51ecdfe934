// JsonWriter: a small streaming JSON writer for reports and traces. It
// writes as it goes (no document tree), so a trace of millions of events
// costs no more memory than the stream's buffer.
//
// Output is deterministic: the same calls give the same bytes on every
// platform and run.
//  * Strings are escaped as RFC 8259 requires: '"' and '\' get a backslash,
//    \b \f \n \r \t their short forms, other bytes below 0x20 \u00XX.
//    Everything else, UTF-8 included, is copied as is.
//  * Doubles are printed with the fewest digits that read back to the same
//    double (std::to_chars), laid out as JavaScript's Number#toString (and
//    so JSON.stringify) does: fixed notation from 1e-6 up to below 1e21,
//    scientific outside: 0.1 -> 0.1, 2.0 -> 2, 0.0006 -> 0.0006,
//    1e16 -> 10000000000000000, 1.25e-7 -> 1.25e-7, 1e21 -> 1e+21, and -0 -> 0.
//    NaN and infinities, which JSON cannot express, are written as null.
//  * decimal(units, scale) writes units x 10^-scale exactly, without going
//    through a double: decimal(12345, 3) -> 12.345 (trailing zeros dropped:
//    decimal(12000, 3) -> 12). Traces use it for nanoseconds as microseconds.
//
// Layout: the elements of the outermost `wrap_levels` containers each go
// on their own line, indented by `indent` spaces per level; deeper
// containers stay on one line. wrap_levels kAuto means every level when
// indent > 0 and none when indent is 0 (everything on one line). With
// indent > 0 separators are ": " and ", " (Python's json.dumps layout),
// with indent 0 ":" and "," (so (0, 2) puts each element of a top-level
// array member on a line of its own without spaces: the trace layout).
// No newline follows the document.
// Misuse (a value in an object without a key, a key in an array, an end
// that does not match, a second top-level value, finishing an unclosed
// document) is a bug and fails an invariant check (sim::InvariantError).
// Thread safety: one writer per stream; not shared between threads.
#pragma once

#include <climits>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::sim {

class JsonWriter {
 public:
  static constexpr int kAllLevels = INT_MAX;
  static constexpr int kAuto = -1;

  explicit JsonWriter(std::ostream& out, int indent = 0, int wrap_levels = kAuto);

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();

  // The key of the next member; only directly inside an object.
  JsonWriter& key(std::string_view name);

  JsonWriter& str(std::string_view text);
  JsonWriter& int64(int64_t number);
  JsonWriter& uint64(uint64_t number);
  JsonWriter& number(double number);              // null when not finite
  JsonWriter& decimal(int64_t units, int scale);  // units x 10^-scale, scale in [0, 18]
  JsonWriter& boolean(bool flag);
  JsonWriter& null();

  // True once one complete top-level value has been written.
  bool complete() const { return stack_.empty() && wrote_top_; }
  // Checks that the document is complete (the invariant above).
  void finish() const;

 private:
  struct Frame {
    bool is_object = false;
    bool empty = true;
    bool has_key = false;  // objects: a key was written, its value not yet
  };

  // Separator and indentation before a value (or a key) at the current spot.
  void before_value();
  void before_key();
  void newline_and_indent(size_t depth);
  void close(bool is_object);
  void write_escaped(std::string_view text);
  bool wrapped(size_t depth) const { return depth <= wrap_levels_; }

  std::ostream& out_;
  int indent_;
  size_t wrap_levels_;
  std::vector<Frame> stack_;
  bool wrote_top_ = false;
};

// `text` as a JSON string literal, quotes included (the escaping above).
std::string json_quote(std::string_view text);

}  // namespace clustersim::sim
