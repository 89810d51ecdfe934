#include "config/suggest.h"

#include <algorithm>
#include <vector>

#include "config/text_fields.h"

namespace clustersim::sim {
namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

template <class S>
std::optional<std::string> suggest_impl(std::string_view word, std::span<const S> candidates) {
  if (word.empty()) return std::nullopt;
  for (const S& c : candidates) {
    if (std::string_view(c) == word) return std::string(c);
  }
  for (const S& c : candidates) {
    if (equal_ignoring_case(c, word)) return std::string(c);
  }
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  const S* best = nullptr;
  size_t best_distance = limit + 1;
  for (const S& c : candidates) {
    // Cheap bound first: the distance is at least the difference in length.
    const std::string_view cv(c);
    const size_t gap = cv.size() > word.size() ? cv.size() - word.size() : word.size() - cv.size();
    if (gap >= best_distance) continue;
    const size_t d = edit_distance(word, cv);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  if (best == nullptr) return std::nullopt;
  return std::string(*best);
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: the transposition step looks
  // two rows back.
  const size_t n = b.size();
  std::vector<size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (size_t j = 0; j <= n; ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d = std::min(d, before[j - 2] + 1);
      }
      current[j] = d;
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::optional<std::string> suggest(std::string_view word, std::span<const std::string> candidates) {
  return suggest_impl(word, candidates);
}

std::optional<std::string> suggest(std::string_view word,
                                   std::span<const std::string_view> candidates) {
  return suggest_impl(word, candidates);
}

}  // namespace clustersim::sim
