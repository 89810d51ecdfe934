// What the libFuzzer targets of tests/fuzz share: the properties they hold
// every input to beyond "no crash".
//  * A rejected input ends in sim::ConfigError (any other exception is a
//    finding), and every diagnostic names a place inside the input: its
//    file is the name the target gave the input (or a command-line
//    option's, "--set seed=x", "--gpus 8"), its line is 0 (the whole file)
//    or a line of the input (or the line after the last, where a missing
//    key is reported), and a column only with a line.
//  * A finding aborts, so that libFuzzer keeps the input.
// Thread safety: libFuzzer runs one input at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "config/config_error.h"

namespace clustersim::fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding: %s\n%s\n", what, detail.c_str());
  std::abort();
}

inline std::string_view bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline int64_t line_count(std::string_view text) {
  return static_cast<int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

// The ConfigError's diagnostics point inside `text`, read as `file`.
inline void check_located(const sim::ConfigError& e, const std::string& file,
                          std::string_view text) {
  if (e.diagnostics().empty()) finding("a ConfigError without a diagnostic", e.what());
  const int64_t lines = line_count(text);
  for (const sim::Diagnostic& d : e.diagnostics()) {
    const sim::SourceLocation& w = d.where;
    // A command-line option's own place ("--set seed=x", "--gpus 8").
    if (w.file.rfind("--", 0) == 0) continue;
    if (w.file != file) finding("a diagnostic names another file", e.what());
    if (w.line < 0 || w.line > lines + 1)
      finding("a diagnostic's line is outside the input", e.what());
    if (w.line == 0 && w.column != 0) finding("a column without a line", e.what());
    if (w.column < 0) finding("a negative column", e.what());
  }
}

// Runs `parse`; a ConfigError is checked to point inside `text` and ends the
// input (false); any other exception is a finding; true when it parsed.
template <class Parse>
bool parses(Parse&& parse, const std::string& file, std::string_view text) {
  try {
    parse();
    return true;
  } catch (const sim::ConfigError& e) {
    check_located(e, file, text);
    return false;
  } catch (const std::exception& e) {
    finding("an exception other than ConfigError", e.what());
  }
}

}  // namespace clustersim::fuzz
