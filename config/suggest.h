// Did-you-mean for user input: edit distance and nearest-candidate lookup,
// used for misspelt scenario keys ("nmae" -> "name") and units ("GIB" -> "GiB").
//
// Contract:
//  * Strings are compared byte by byte: a UTF-8 letter outside ASCII counts as
//    its bytes. Keys and units are ASCII (except 'µs'), so this is enough.
//  * Case-insensitivity, where mentioned, is ASCII only.
//  * Candidates are never reordered: ties go to the earlier candidate, so the
//    caller's order (declaration order of keys, say) decides.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace clustersim::sim {

// Optimal string alignment distance: the number of single-byte insertions,
// deletions, substitutions and swaps of two adjacent bytes that turn `a` into
// `b`, no substring edited twice. kitten/sitting = 3, nmae/name = 1,
// ""/abc = 3.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate `word` most probably meant, or nullopt when none is close:
//  1. a candidate equal to `word`;
//  2. else the first candidate equal to it ignoring ASCII case;
//  3. else the first candidate at the smallest edit distance, provided that
//     distance is at most max(1, word.size() / 3).
// An empty `word` gets no suggestion.
std::optional<std::string> suggest(std::string_view word, std::span<const std::string> candidates);
std::optional<std::string> suggest(std::string_view word,
                                   std::span<const std::string_view> candidates);

}  // namespace clustersim::sim
