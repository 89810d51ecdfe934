// ConfigError: everything wrong with one piece of user input, reported at once.
//
// Each Diagnostic names where (file:line:col, 1-based; or the command-line
// override it came from), the key path, and what was wrong, phrased as
// "expected X, found Y". ConfigError::what() is the text the command prints:
// one line per diagnostic, in the order found (file order), e.g.
//   scenario.yaml:2:1: error: nmae: unknown key (did you mean 'name'?); expected one of: ...
// A check that fails on a key's default names the key's section, e.g.
//   scenario.yaml:16:5: error: workload.pipeline.virtual_stages (not set: its default): ...
// Thread safety: value types.
#pragma once

#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::sim {

struct SourceLocation {
  std::string file;  // a path, or "--set seed=x" for a command-line override
  int line = 0;      // 1-based; 0 when the input has no lines (a flag)
  int column = 0;    // 1-based; 0 when unknown
  // The key is not in the input and its default applies: file, line and
  // column then locate the section that would hold it (or the file).
  bool defaulted = false;

  // "file:line:col", "file:line", or "file".
  std::string to_string() const;
};

struct Diagnostic {
  SourceLocation where;
  std::string key_path;  // "workload.seq_len"; empty when the problem is the file itself
  std::string message;   // what was expected and what was found

  // "KEY: MESSAGE" ("KEY (not set: its default): MESSAGE" where the default
  // was rejected; MESSAGE alone without a key), control characters escaped.
  std::string keyed_message() const;
  // "WHERE: error: " then keyed_message().
  std::string to_string() const;
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Collects diagnostics while parsing continues, so that one run reports
// every problem in a file.
class DiagnosticSink {
 public:
  void add(SourceLocation where, std::string key_path, std::string message) {
    diagnostics_.push_back(Diagnostic{std::move(where), std::move(key_path), std::move(message)});
  }
  bool empty() const { return diagnostics_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // Moves every diagnostic of `other` to the end of this sink.
  void append(DiagnosticSink&& other) {
    diagnostics_.insert(diagnostics_.end(), std::make_move_iterator(other.diagnostics_.begin()),
                        std::make_move_iterator(other.diagnostics_.end()));
    other.diagnostics_.clear();
  }
  // Throws ConfigError if anything was reported.
  void throw_if_any();

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace clustersim::sim
