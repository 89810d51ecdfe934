// What a call throws as sim::ConfigError, for tests that pin messages.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/config_error.h"

namespace clustersim::test_support {

// The message f() throws; a test failure (and "") when it throws nothing.
template <typename F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError";
  return "";
}

// what() of the ConfigError that read(path) throws ("" if none), after
// checking that it has one diagnostic naming the file and no line (how every
// reader of whole files reports a file it cannot read).
template <typename Read>
std::string file_read_error(Read&& read, const std::string& path) {
  try {
    read(path);
  } catch (const sim::ConfigError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].where.file, path);
    EXPECT_EQ(e.diagnostics()[0].where.line, 0);
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, std::string_view piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace clustersim::test_support
