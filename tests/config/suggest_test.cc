#include "config/suggest.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace clustersim::sim {
namespace {

TEST(EditDistance, ClassicExamples) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(EditDistance, AdjacentTranspositionCostsOne) {
  EXPECT_EQ(edit_distance("nmae", "name"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 1u);
  EXPECT_EQ(edit_distance("GiB", "iGB"), 1u);
}

TEST(EditDistance, OptimalStringAlignmentEditsNoSubstringTwice) {
  // True Damerau-Levenshtein gives 2 (swap, then insert between); OSA may not
  // edit the swapped pair again, so it needs 3.
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);
}

TEST(EditDistance, IsSymmetric) {
  const std::vector<std::string> words = {"", "a", "ab", "ba", "kitten", "sitting", "GiB", "Gb"};
  for (const std::string& a : words) {
    for (const std::string& b : words) {
      EXPECT_EQ(edit_distance(a, b), edit_distance(b, a)) << a << " / " << b;
    }
  }
}

TEST(EditDistance, CountsBytes) {
  // "µs" is two bytes of UTF-8 plus 's'.
  EXPECT_EQ(edit_distance("\xC2\xB5s", "us"), 2u);
}

TEST(Suggest, ReturnsClosestWithinThreshold) {
  const std::vector<std::string> keys = {"name", "nodes", "gpus_per_node"};
  EXPECT_EQ(suggest("nmae", keys), "name");
  EXPECT_EQ(suggest("gpus_per_nod", keys), "gpus_per_node");
  EXPECT_EQ(suggest("nodez", keys), "nodes");
}

TEST(Suggest, ThresholdIsAThirdOfTheWordButAtLeastOne) {
  const std::vector<std::string> candidates = {"abcdef"};
  // Length 6: threshold 2.
  EXPECT_EQ(suggest("abcdxx", candidates), "abcdef");
  EXPECT_EQ(suggest("abcxxx", candidates), std::nullopt);
  // Length 2: threshold max(1, 0) = 1.
  const std::vector<std::string> short_ones = {"GB"};
  EXPECT_EQ(suggest("Gx", short_ones), "GB");
  EXPECT_EQ(suggest("xx", short_ones), std::nullopt);
  // Length 1: threshold 1.
  const std::vector<std::string> one = {"s"};
  EXPECT_EQ(suggest("x", one), "s");
}

TEST(Suggest, NothingCloseGivesNullopt) {
  const std::vector<std::string> keys = {"name", "nodes"};
  EXPECT_EQ(suggest("bandwidth", keys), std::nullopt);
  EXPECT_EQ(suggest("x", std::vector<std::string>{}), std::nullopt);
}

TEST(Suggest, EmptyWordGetsNoSuggestion) {
  const std::vector<std::string> keys = {"a", "b"};
  EXPECT_EQ(suggest("", keys), std::nullopt);
}

TEST(Suggest, TiesGoToTheEarlierCandidate) {
  const std::vector<std::string> ab = {"cat", "car"};
  EXPECT_EQ(suggest("caz", ab), "cat");
  const std::vector<std::string> ba = {"car", "cat"};
  EXPECT_EQ(suggest("caz", ba), "car");
}

TEST(Suggest, CaseInsensitiveMatchWinsOverCloserSpellings) {
  // "gb" is 1 away from "Gb" and from "GB" alike; a later exact
  // case-insensitive match beats an earlier near miss.
  const std::vector<std::string> units = {"Kb", "GB"};
  EXPECT_EQ(suggest("gb", units), "GB");
  // A long word whose threshold would not allow its case changes.
  const std::vector<std::string> keys = {"other", "ABCDEFGHI"};
  EXPECT_EQ(suggest("abcdefghi", keys), "ABCDEFGHI");
}

TEST(Suggest, ExactMatchBeatsCaseInsensitiveOne) {
  const std::vector<std::string> units = {"Gb/s", "GB/s"};
  EXPECT_EQ(suggest("GB/s", units), "GB/s");
  EXPECT_EQ(suggest("gb/s", units), "Gb/s");
}

TEST(Suggest, AcceptsStringViewCandidates) {
  const std::vector<std::string_view> keys = {"seed", "steps"};
  EXPECT_EQ(suggest("sede", keys), "seed");
  EXPECT_EQ(suggest("zzzzzz", keys), std::nullopt);
}

}  // namespace
}  // namespace clustersim::sim
