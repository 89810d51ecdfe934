#include "config/config_error.h"

#include <string>
#include <string_view>

namespace clustersim::sim {

namespace {

// What a message quotes from the input may hold control characters: a line
// break would split one diagnostic over two lines, an escape sequence would
// drive the user's terminal. They are written as C escapes (\n, \t, \x1b),
// and so are the C1 controls (U+0080..U+009F, which some terminals obey);
// other bytes, UTF-8 included, pass as they are.
std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      const auto c1 = static_cast<unsigned char>(text[++i]);
      out += {'\\', 'u', '0', '0', kHex[c1 >> 4], kHex[c1 & 15]};
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string join_lines(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += d.to_string();
  }
  return text;
}

}  // namespace

std::string SourceLocation::to_string() const {
  std::string text = file;
  if (line > 0) {
    text += ':' + std::to_string(line);
    if (column > 0) text += ':' + std::to_string(column);
  }
  return text;
}

std::string Diagnostic::keyed_message() const {
  if (key_path.empty()) return printable(message);
  return printable(key_path) + (where.defaulted ? " (not set: its default): " : ": ") +
         printable(message);
}

std::string Diagnostic::to_string() const {
  return printable(where.to_string()) + ": error: " + keyed_message();
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_lines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void DiagnosticSink::throw_if_any() {
  if (!diagnostics_.empty()) throw ConfigError(std::move(diagnostics_));
}

}  // namespace clustersim::sim
