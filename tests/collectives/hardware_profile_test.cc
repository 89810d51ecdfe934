#include "collectives/hardware_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/config_error.h"

namespace clustersim::collectives {
namespace {

const std::string kHardwareDir = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/";

TEST(HardwareProfile, LoadsShippedProfiles) {
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  EXPECT_EQ(h100.name, "h100");
  EXPECT_TRUE(h100.nvls_supported);
  EXPECT_DOUBLE_EQ(h100.nvls_latency_us, 25.0);
  EXPECT_DOUBLE_EQ(h100.protocol(Protocol::kLL).ring.base_us, 6.6);
  EXPECT_DOUBLE_EQ(h100.protocol(Protocol::kLL128).tree.nvlink_hop_us, 1.25);
  EXPECT_DOUBLE_EQ(h100.protocol(Protocol::kSimple).ring.network_hop_us, 14.0);
  EXPECT_DOUBLE_EQ(h100.protocol(Protocol::kLL).max_busbw_Bps, 141e9);
  EXPECT_EQ(h100.protocol(Protocol::kLL).full_bandwidth_bytes, 384 * 1024);
  EXPECT_EQ(h100.max_channels, 32);

  const HardwareProfile h200 = load_hardware_profile(kHardwareDir + "h200.yaml");
  EXPECT_EQ(h200.name, "h200");
  EXPECT_TRUE(h200.nvls_supported);

  const HardwareProfile a100 = load_hardware_profile(kHardwareDir + "a100.yaml");
  EXPECT_EQ(a100.name, "a100");
  EXPECT_FALSE(a100.nvls_supported);
  EXPECT_DOUBLE_EQ(a100.launch_overhead_us, 29.0);
}

TEST(HardwareProfile, BadValueNamesFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_hw_profile_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.yaml").string();
  {
    std::ifstream in(kHardwareDir + "h100.yaml");
    std::ofstream out(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("  efficiency: 0.94", 0) == 0) line = "  efficiency: 1.5";
      if (line.rfind("launch_overhead:", 0) == 0) line = "launch_overhead: 3 parsecs";
      out << line << "\n";
    }
  }
  try {
    load_hardware_profile(path);
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.yaml:12:"), std::string::npos) << what;  // launch_overhead
    EXPECT_NE(what.find("network.efficiency"), std::string::npos) << what;
    EXPECT_NE(what.find("launch_overhead"), std::string::npos) << what;
    EXPECT_EQ(e.diagnostics().size(), 2u) << what;
  }
}

TEST(HardwareProfile, ResolvesPathAgainstScenarioDirectory) {
  EXPECT_EQ(resolve_hardware_path("/a/b/scenario.yaml", "../hardware/h100.yaml"),
            "/a/hardware/h100.yaml");
  EXPECT_EQ(resolve_hardware_path("scenario.yaml", "h100.yaml"), "h100.yaml");
  EXPECT_EQ(resolve_hardware_path("/a/b/s.yaml", "/x/h.yaml"), "/x/h.yaml");
}

TEST(HardwareProfile, AddsHardwareKey) {
  sim::ConfigSchema schema;
  add_hardware_keys(schema);
  const sim::KeySpec* key = schema.find_key("hardware");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->type, sim::ValueType::kString);
}

}  // namespace
}  // namespace clustersim::collectives
