#include "config/config_error.h"

namespace clustersim::sim {

namespace {

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

std::string Diagnostic::to_string() const {
  std::string text = where.to_string() + ": error: ";
  if (!key_path.empty()) text += key_path + ": ";
  return text + message;
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_lines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void DiagnosticSink::throw_if_any() {
  if (!diagnostics_.empty()) throw ConfigError(std::move(diagnostics_));
}

}  // namespace clustersim::sim
