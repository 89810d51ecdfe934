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

inline bool contains(const std::string& text, std::string_view piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace clustersim::test_support
