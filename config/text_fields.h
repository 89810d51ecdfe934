// Splitting line-oriented text (CSV files, tool output) into fields that
// remember their 1-based line and column, so that a reader can point every
// error at file:line:col; strict number parsing for those fields; and the
// one case folding that every name comparison uses.
// No quoting: none of the measurement layouts we read has a comma inside a
// field. Thread safety: pure functions.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace clustersim::sim {

struct TextLine {
  int number;             // 1-based
  std::string_view text;  // without the line break (and a trailing '\r')
};

struct TextField {
  std::string_view text;  // without surrounding blanks
  int column;             // 1-based column of its first character
};

std::vector<TextLine> split_lines(std::string_view text);
// Without leading and trailing spaces, tabs and carriage returns.
std::string_view trim_blanks(std::string_view text);
// Comma-separated fields (an empty line gives one empty field). A field
// whose first non-blank character is a double quote runs to the next double
// quote, commas included, and its text is what lies between them (CSV's
// quoting, without doubled quotes inside); an unclosed quote runs to the
// end of the line.
std::vector<TextField> split_commas(std::string_view line);
// Whitespace-separated tokens.
std::vector<TextField> split_blanks(std::string_view line);

// ASCII lower case: 'A'-'Z' become 'a'-'z', every other byte (UTF-8
// sequences included) stays. Unlike std::tolower it ignores the C locale and
// takes plain (possibly negative) chars, so names compare the same anywhere.
constexpr char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
std::string ascii_lower(std::string_view text);

// "12,345,678": an integer with its digits grouped by three.
std::string with_separators(int64_t n);

// The whole of `text` as a T (integer or finite floating point), or nothing.
template <class T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return std::nullopt;
  }
  return value;
}

}  // namespace clustersim::sim
