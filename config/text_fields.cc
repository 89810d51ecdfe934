#include "config/text_fields.h"

namespace clustersim::sim {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

}  // namespace

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string with_separators(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::vector<TextLine> split_lines(std::string_view text) {
  std::vector<TextLine> lines;
  int number = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(TextLine{number++, line});
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<TextField> split_commas(std::string_view line) {
  std::vector<TextField> fields;
  size_t start = 0;
  for (;;) {
    size_t first = start;
    while (first < line.size() && is_blank(line[first])) ++first;
    if (first < line.size() && line[first] == '"') {
      const size_t close = line.find('"', first + 1);
      const size_t text_end = close == std::string_view::npos ? line.size() : close;
      fields.push_back(
          TextField{line.substr(first + 1, text_end - first - 1), static_cast<int>(first) + 2});
      const size_t comma = close == std::string_view::npos ? close : line.find(',', close);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
      continue;
    }
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields.push_back(
        TextField{trim_blanks(line.substr(start, end - start)), static_cast<int>(first) + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::vector<TextField> split_blanks(std::string_view line) {
  std::vector<TextField> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > start) {
      tokens.push_back(TextField{line.substr(start, i - start), static_cast<int>(start) + 1});
    }
  }
  return tokens;
}

}  // namespace clustersim::sim
