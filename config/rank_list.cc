#include "config/rank_list.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>
#include <utility>

#include "config/text_fields.h"

namespace clustersim::sim {

namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// A whole non-negative decimal number, or why not.
Parsed<int64_t> parse_rank(std::string_view text, std::string_view item) {
  text = trim_blanks(text);
  if (text.empty()) return Parsed<int64_t>::fail("item " + quoted(item) + " lacks a number");
  for (char c : text) {
    if (c < '0' || c > '9') {
      return Parsed<int64_t>::fail("item " + quoted(item) + " is not a rank or a range A-B");
    }
  }
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return Parsed<int64_t>::fail("rank " + quoted(text) + " is too large");
  }
  return Parsed<int64_t>::ok(value);
}

using Range = std::pair<int64_t, int64_t>;  // first, last (included)

Parsed<std::vector<Range>> parse_ranges(std::string_view text, int64_t limit) {
  using Result = Parsed<std::vector<Range>>;
  std::vector<Range> ranges;
  if (trim_blanks(text).empty()) return Result::ok(ranges);
  for (const TextField& field : split_commas(text)) {
    const std::string_view item = field.text;
    if (item.empty()) return Result::fail("empty item in the list (two commas, or one at an end)");
    const size_t dash = item.find('-');
    const Parsed<int64_t> first = parse_rank(item.substr(0, dash), item);
    if (!first) return Result::fail(first.error);
    int64_t last = *first;
    if (dash != std::string_view::npos) {
      const Parsed<int64_t> end = parse_rank(item.substr(dash + 1), item);
      if (!end) return Result::fail(end.error);
      last = *end;
      if (last < *first) {
        return Result::fail("range " + quoted(item) + " ends before it starts");
      }
    }
    if (last >= limit) {
      return Result::fail("rank " + std::to_string(last) + " (in " + quoted(item) +
                          ") is not below " + std::to_string(limit));
    }
    ranges.emplace_back(*first, last);
  }
  return Result::ok(std::move(ranges));
}

}  // namespace

Parsed<std::vector<int64_t>> parse_rank_list(std::string_view text, int64_t limit) {
  using Result = Parsed<std::vector<int64_t>>;
  const Parsed<std::vector<Range>> ranges = parse_ranges(text, limit);
  if (!ranges) return Result::fail(ranges.error);
  std::vector<int64_t> ranks;
  for (const auto& [first, last] : *ranges) {
    for (int64_t r = first; r <= last; ++r) ranks.push_back(r);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return Result::ok(std::move(ranks));
}

std::string rank_list_problem(std::string_view text) {
  return parse_ranges(text, std::numeric_limits<int64_t>::max()).error;
}

std::string format_rank_list(const std::vector<int64_t>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace clustersim::sim
