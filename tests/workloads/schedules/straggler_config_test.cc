#include "workloads/schedules/straggler_config.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/scenario_loader.h"

namespace clustersim::workloads {
namespace {

sim::ConfigSchema straggler_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_straggler_keys(schema);
  return schema;
}

std::vector<Straggler> read(std::string_view yaml, int64_t world = 128) {
  return read_stragglers(sim::load_scenario_text(yaml, "s.yaml", straggler_schema()), world);
}

std::string error_of(std::string_view yaml, int64_t world = 128) {
  try {
    read(yaml, world);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(StragglerConfig, NoneByDefault) { EXPECT_TRUE(read("name: t\n").empty()); }

TEST(StragglerConfig, ListedRanksWithTheSlowdown) {
  const std::vector<Straggler> s =
      read("name: t\nstragglers:\n  ranks: \"17,3,100-102\"\n  slowdown: 1.5\n");
  ASSERT_EQ(s.size(), 5u);
  const int64_t expected[] = {3, 17, 100, 101, 102};
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].rank, expected[i]);
    EXPECT_EQ(s[i].slowdown, 1.5);
  }
  EXPECT_EQ(read("name: t\nstragglers:\n  ranks: 5\n").at(0).slowdown, 1.2);
}

TEST(StragglerConfig, RankBeyondTheWorldNamesTheKey) {
  EXPECT_EQ(error_of("name: t\nstragglers:\n  ranks: 3,8\n", 8),
            "s.yaml:3:10: error: stragglers.ranks: expected ranks below the world size 8, found "
            "'3,8': rank 8 (in '8') is not below 8");
}

TEST(StragglerConfig, MalformedListNamesTheKey) {
  EXPECT_EQ(error_of("name: t\nstragglers:\n  ranks: 3,x\n"),
            "s.yaml:3:10: error: stragglers.ranks: expected a list of ranks such as "
            "'3,17,100-103' (item 'x' is not a rank or a range A-B), found '3,x'");
}

TEST(StragglerConfig, SlowdownBelowOneIsRejected) {
  EXPECT_EQ(error_of("name: t\nstragglers:\n  ranks: 1\n  slowdown: 0.9\n"),
            "s.yaml:4:13: error: stragglers.slowdown: expected a number >= 1, found '0.9'");
}

}  // namespace
}  // namespace clustersim::workloads
