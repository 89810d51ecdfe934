// Small text helpers for the tables the commands print (nccl-tests style:
// right-aligned fixed-width columns).
#pragma once

#include <cstdio>
#include <string>

namespace clustersim::cli {

inline std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

inline std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

}  // namespace clustersim::cli
