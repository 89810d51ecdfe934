// Small text helpers for the tables the commands print (nccl-tests style:
// right-aligned fixed-width columns).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace clustersim::cli {

inline std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

inline std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// `text` left-aligned in `width` columns (never cut).
inline std::string pad_right(std::string text, size_t width) {
  if (text.size() < width) text += std::string(width - text.size(), ' ');
  return text;
}

// One line of a summary: the label in a column of `label_width`, then the value.
inline std::string labelled_row(std::string_view label, const std::string& value,
                                size_t label_width) {
  return pad_right(std::string(label), label_width) + value + "\n";
}

}  // namespace clustersim::cli
