// A strict JSON reader (RFC 8259) for measurement files (Kineto traces) that
// points every error at file:line:col.
//
// The whole text must be one JSON value, surrounded by optional whitespace.
// Numbers follow JSON's grammar (no NaN/Infinity, no '+', no leading zeros,
// no '.5' or '5.'); each is kept as a double, as written, and, when written
// without fraction or exponent and within int64, also as an exact int64.
// Strings decode every escape, \uXXXX included (surrogate pairs to one code
// point; a lone surrogate is an error), to UTF-8; other bytes are copied as
// they are (no UTF-8 validation). Objects keep their members in file order;
// a duplicate key keeps the LAST value, at the position of the first
// occurrence (what browsers' JSON.parse and Python's json do).
// Nesting deeper than kMaxJsonDepth is an error rather than a stack overflow.
//
// Errors are sim::ConfigError with one Diagnostic at the offending byte
// (line and column 1-based, column counted in bytes), phrased "expected X,
// found Y", e.g.
//   trace.json:3:7: error: expected ',' or '}' after an object member, found 'x'
//   trace.json:9:1: error: unexpected end of file in a string
// Every value remembers where it starts, so that a reader checking meaning
// (a negative duration) can point at the value too, with its JSON path
// ("traceEvents[12].dur") from json_path_member / json_path_index.
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"

namespace clustersim::sim {

inline constexpr int kMaxJsonDepth = 512;

struct JsonMember;

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind = Kind::kNull;
  bool boolean = false;             // kBool
  double number = 0;                // kNumber
  bool is_integer = false;          // kNumber written as an integer that fits int64
  int64_t integer = 0;              // kNumber with is_integer
  std::string text;                 // kString: the decoded string; kNumber: as written
  std::vector<JsonValue> items;     // kArray
  std::vector<JsonMember> members;  // kObject, in file order
  int line = 0;                     // where the value starts (1-based)
  int column = 0;                   // 1-based, in bytes

  bool is(Kind k) const { return kind == k; }
  // The member `key` of an object, or nullptr (also when not an object).
  const JsonValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // The member `key`, which the caller knows is there (InvariantError
  // otherwise: check user input with find()).
  const JsonValue& operator[](std::string_view key) const;
  // "a number", "a string", "an object", ... for "expected X, found Y".
  std::string_view kind_name() const;
  // The value for messages: a number as written, a string quoted (long ones
  // shortened), true/false/null, "an array", "an object".
  std::string describe() const;
  // Where the value starts, in `file`.
  SourceLocation where(const std::string& file) const { return {file, line, column}; }
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

// Parses `text`; `file` is what messages show. Throws ConfigError.
JsonValue parse_json(std::string_view text, const std::string& file);
// Reads and parses the file at `path` (an unreadable file is a ConfigError).
JsonValue read_json_file(const std::string& path);

// JSON paths for messages: json_path_member("", "traceEvents") ==
// "traceEvents", json_path_index("traceEvents", 12) == "traceEvents[12]",
// json_path_member("traceEvents[12]", "dur") == "traceEvents[12].dur".
// A key that is not an identifier is written ["quoted"].
std::string json_path_member(std::string_view parent, std::string_view key);
std::string json_path_index(std::string_view parent, size_t index);

}  // namespace clustersim::sim
