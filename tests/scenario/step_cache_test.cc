// StepCache: simulated steps kept on disk under a key of what a step
// depends on.
#include "scenario/step_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "config/scenario_loader.h"
#include "scenario/scenario_schema.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::ScratchDir;

const std::string kBase = "name: t\nhardware: " CLUSTERSIM_SOURCE_DIR
                          "/scenarios/hardware/h100.yaml\ncluster:\n  nodes: 2\n  node: hgx_h100\n"
                          "workload:\n  model: llama3-8b\n  seq_len: 4096\n  local_batch: 1\n";

std::string key_of(const std::string& yaml) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", yaml);
  return step_cache_key(path, sim::load_scenario_file(path, build_scenario_schema()));
}

TEST(StepCache, EntriesReadBackExactly) {
  const ScratchDir dir;
  const StepCache cache(dir.file("cache"), "0123456789abcdef");
  EXPECT_FALSE(cache.get("full").has_value());
  const double step = 48.900000000000006;  // not a short decimal
  cache.put("full", step);                 // creates the directory
  ASSERT_TRUE(cache.get("full").has_value());
  EXPECT_EQ(*cache.get("full"), step);
  EXPECT_EQ(cache.writes(), 1);
  EXPECT_EQ(cache.hits(), 2);
  EXPECT_FALSE(cache.get("groups_3").has_value());
  dir.write("cache/0123456789abcdef.groups_3", "12.5 s\n");  // malformed: a miss
  EXPECT_FALSE(cache.get("groups_3").has_value());
}

TEST(StepCache, CachedStepSimulatesOncePerItem) {
  const ScratchDir dir;
  const StepCache cache(dir.path(), "k");
  int runs = 0;
  const auto simulate = [&runs] {
    ++runs;
    return 2.5;
  };
  EXPECT_EQ(cached_step(&cache, "full", simulate), 2.5);
  EXPECT_EQ(cached_step(&cache, "full", simulate), 2.5);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(cached_step(nullptr, "full", simulate), 2.5);  // no cache: always simulated
  EXPECT_EQ(runs, 2);
}

// The key follows what changes a step and ignores what does not.
TEST(StepCache, KeyOfWhatAStepDependsOn) {
  const std::string base = key_of(kBase);
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(key_of(kBase), base);
  EXPECT_EQ(key_of(kBase + "failures:\n  job_mtbf: 2h\nrecovery:\n  policy: ft_hsdp\n"
                           "campaign:\n  trials: 7\n"),
            base);
  EXPECT_EQ(key_of("name: other\ndescription: d\n" + kBase.substr(kBase.find('\n') + 1)), base);
  std::string longer = kBase;
  longer.replace(longer.find("4096"), 4, "8192");
  EXPECT_NE(key_of(longer), base);
  EXPECT_NE(key_of(kBase + "seed: 3\n"), base);
  EXPECT_NE(key_of(kBase + "collectives:\n  routing: ecmp\n"), base);
}

}  // namespace
}  // namespace clustersim::cli
