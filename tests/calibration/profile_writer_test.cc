#include "calibration/profile_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/scenario_loader.h"
#include "hardware/hardware_profile.h"
#include "sim/check.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::calibration {
namespace {

using collectives::EfficiencyCurveParams;
using collectives::HardwareProfile;
using collectives::Protocol;

const std::string kHardwareDir = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/";

// Collects the first field in which two profiles differ, as "field: a vs b".
class Differ {
 public:
  template <class T>
  void field(const std::string& name, const T& a, const T& b) {
    if (!first_.empty() || a == b) return;
    std::ostringstream text;
    text << std::setprecision(17) << name << ": " << a << " vs " << b;
    first_ = text.str();
  }

  void curve(const std::string& name, const EfficiencyCurveParams& a,
             const EfficiencyCurveParams& b) {
    field(name + ".e_max", a.e_max, b.e_max);
    field(name + ".x_half", a.x_half, b.x_half);
    field(name + ".dim_half", a.dim_half, b.dim_half);
    field(name + ".causal_x_half", a.causal_x_half, b.causal_x_half);
  }

  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

// Every field but source_file (where a profile was loaded from is no part of
// its content), compared exactly.
bool profiles_equal(const HardwareProfile& a, const HardwareProfile& b,
                    std::string* first_difference) {
  Differ d;
  d.field("name", a.name, b.name);
  d.field("launch_overhead_us", a.launch_overhead_us, b.launch_overhead_us);
  d.field("max_channels", a.max_channels, b.max_channels);
  d.field("nvlink_ring_efficiency", a.nvlink_ring_efficiency, b.nvlink_ring_efficiency);
  d.field("network_efficiency", a.network_efficiency, b.network_efficiency);
  d.field("tree_efficiency", a.tree_efficiency, b.tree_efficiency);
  d.field("nvls_supported", a.nvls_supported, b.nvls_supported);
  d.field("nvls_latency_us", a.nvls_latency_us, b.nvls_latency_us);
  d.field("nvls_busbw_efficiency", a.nvls_busbw_efficiency, b.nvls_busbw_efficiency);
  d.field("nvls_full_bandwidth_bytes", a.nvls_full_bandwidth_bytes, b.nvls_full_bandwidth_bytes);
  for (Protocol p : collectives::kAllProtocols) {
    const std::string name = std::string("protocols[") + collectives::to_string(p) + "]";
    const collectives::ProtocolParams& pa = a.protocol(p);
    const collectives::ProtocolParams& pb = b.protocol(p);
    d.field(name + ".ring.base_us", pa.ring.base_us, pb.ring.base_us);
    d.field(name + ".ring.nvlink_hop_us", pa.ring.nvlink_hop_us, pb.ring.nvlink_hop_us);
    d.field(name + ".ring.network_hop_us", pa.ring.network_hop_us, pb.ring.network_hop_us);
    d.field(name + ".tree.base_us", pa.tree.base_us, pb.tree.base_us);
    d.field(name + ".tree.nvlink_hop_us", pa.tree.nvlink_hop_us, pb.tree.nvlink_hop_us);
    d.field(name + ".tree.network_hop_us", pa.tree.network_hop_us, pb.tree.network_hop_us);
    d.field(name + ".efficiency", pa.efficiency, pb.efficiency);
    d.field(name + ".max_busbw_Bps", pa.max_busbw_Bps, pb.max_busbw_Bps);
    d.field(name + ".full_bandwidth_bytes", pa.full_bandwidth_bytes, pb.full_bandwidth_bytes);
  }
  d.field("gpu.curves_fitted_to", a.gpu.curves_fitted_to, b.gpu.curves_fitted_to);
  d.field("gpu.peak_flops_per_s", a.gpu.peak_flops_per_s, b.gpu.peak_flops_per_s);
  d.field("gpu.peak_fp8_flops_per_s", a.gpu.peak_fp8_flops_per_s, b.gpu.peak_fp8_flops_per_s);
  d.field("gpu.fp8_gemm_efficiency", a.gpu.fp8_gemm_efficiency, b.gpu.fp8_gemm_efficiency);
  d.field("gpu.memory_bytes", a.gpu.memory_bytes, b.gpu.memory_bytes);
  d.field("gpu.hbm_Bps", a.gpu.hbm_Bps, b.gpu.hbm_Bps);
  d.field("gpu.mem_efficiency", a.gpu.mem_efficiency, b.gpu.mem_efficiency);
  d.curve("gpu.gemm", a.gpu.gemm, b.gpu.gemm);
  d.curve("gpu.attention_fwd", a.gpu.attention_fwd, b.gpu.attention_fwd);
  d.curve("gpu.attention_bwd", a.gpu.attention_bwd, b.gpu.attention_bwd);
  d.field("gpu.comm_overlap_slowdown", a.gpu.comm_overlap_slowdown, b.gpu.comm_overlap_slowdown);
  d.field("gpu.sustained_clock", a.gpu.sustained_clock, b.gpu.sustained_clock);
  d.field("gpu.speed_variation", a.gpu.speed_variation, b.gpu.speed_variation);
  d.field("gpu.segment_jitter", a.gpu.segment_jitter, b.gpu.segment_jitter);
  d.field("host.kernel_launch_us", a.host.kernel_launch_us, b.host.kernel_launch_us);
  d.field("host.graph_launch_us", a.host.graph_launch_us, b.host.graph_launch_us);
  d.field("host.pcie_efficiency", a.host.pcie_efficiency, b.host.pcie_efficiency);
  d.field("host.cpu_adam_params_per_s", a.host.cpu_adam_params_per_s, b.host.cpu_adam_params_per_s);
  if (first_difference != nullptr) *first_difference = d.first();
  return d.first().empty();
}

// Microseconds as the loader computes them from whole nanoseconds.
double us_of_ns(int64_t ns) { return static_cast<double>(ns) / 1e3; }

std::vector<std::string> shipped_profiles() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(kHardwareDir)) {
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

HardwareProfile h100() { return collectives::load_hardware_profile(kHardwareDir + "h100.yaml"); }

// Writes the profile, saves it to a file and loads that back.
HardwareProfile round_trip(const HardwareProfile& profile,
                           const ProfileProvenance& provenance = {}) {
  const test_support::ScratchDir dir;
  const std::string path = dir.write("written.yaml", hardware_profile_yaml(profile, provenance));
  return collectives::load_hardware_profile(path);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ProfileWriter, ShippedProfilesRoundTripExactly) {
  const std::vector<std::string> paths = shipped_profiles();
  ASSERT_GE(paths.size(), 4u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const HardwareProfile original = collectives::load_hardware_profile(path);
    const std::string yaml = hardware_profile_yaml(original, {});
    const HardwareProfile back = round_trip(original);
    std::string difference;
    EXPECT_TRUE(profiles_equal(original, back, &difference)) << difference << "\n" << yaml;
    // Deterministic, and a fixed point: writing what was read gives the same bytes.
    EXPECT_EQ(hardware_profile_yaml(original, {}), yaml);
    EXPECT_EQ(hardware_profile_yaml(back, {}), yaml);
  }
}

TEST(ProfileWriter, WritesEverySchemaKeyAndNoOther) {
  const sim::ConfigSchema schema = collectives::hardware_profile_schema();
  ProfileProvenance provenance;
  provenance.description = "fitted";
  const sim::ConfigValues values =
      sim::load_scenario_text(hardware_profile_yaml(h100(), provenance), "written.yaml", schema);
  std::set<std::string> written;
  for (const auto& [path, entry] : values.entries()) {
    EXPECT_FALSE(entry.is_default) << path << " was left to the schema's default";
    written.insert(path);
  }
  std::set<std::string> declared;
  for (const auto& [path, spec] : schema.keys()) declared.insert(path);
  // A written profile is whole: it extends nothing.
  EXPECT_EQ(declared.erase(std::string(sim::kExtendsKey)), 1u);
  // Optional keys without a default that h100.yaml leaves out stay out.
  for (const char* optional :
       {"gpu.peak_clock_mhz", "gpu.mem_efficiency_by_class.norm",
        "gpu.mem_efficiency_by_class.elementwise", "gpu.mem_efficiency_by_class.embedding",
        "gpu.mem_efficiency_by_class.loss", "gpu.mem_efficiency_by_class.optimizer"}) {
    EXPECT_EQ(declared.erase(optional), 1u) << optional;
  }
  EXPECT_EQ(written, declared);
  EXPECT_EQ(values.get_string("description"), "fitted");
}

// A profile that sets them writes them, and they read back as set.
TEST(ProfileWriter, OptionalKeysThatAreSetAreWritten) {
  const HardwareProfile measured = collectives::load_hardware_profile(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/hardware/h200_measured.yaml");
  const std::string yaml = hardware_profile_yaml(measured, {});
  EXPECT_NE(yaml.find("  peak_clock_mhz: 1830\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  mem_efficiency_by_class:\n    norm: 0.558\n    elementwise: 0.845\n"
                      "    loss: 0.54\n    optimizer: 0.754\n"),
            std::string::npos)
      << yaml;
  const HardwareProfile back = collectives::parse_hardware_profile(yaml, "written.yaml");
  EXPECT_EQ(back.gpu.peak_clock_mhz, 1830);
  EXPECT_EQ(back.gpu.mem_efficiency_by_class.norm, 0.558);
  EXPECT_EQ(back.gpu.mem_efficiency_by_class.embedding, 0);
  EXPECT_EQ(back.gpu.mem_efficiency_by_class.optimizer, 0.754);
}

// h200.yaml extends h100.yaml: what goes out is the merged profile, which
// stands alone (round_trip loads it from a folder without h100.yaml).
TEST(ProfileWriter, ProfileThatExtendsAnotherIsWrittenMerged) {
  const HardwareProfile h200 = collectives::load_hardware_profile(kHardwareDir + "h200.yaml");
  const std::string yaml = hardware_profile_yaml(h200, {});
  EXPECT_EQ(yaml.find("extends"), std::string::npos) << yaml;
  const std::vector<std::string> lines = lines_of(yaml);
  for (const char* line :
       {"name: h200", "  ring_efficiency: 0.816", "  latency: 25us", "  memory: 141GB",
        "  sustained_clock: 0.897", "  pcie_efficiency: 0.859"}) {
    EXPECT_NE(std::find(lines.begin(), lines.end(), line), lines.end()) << line << " in\n" << yaml;
  }
  const HardwareProfile back = round_trip(h200);
  std::string difference;
  EXPECT_TRUE(profiles_equal(h200, back, &difference)) << difference;
}

TEST(ProfileWriter, SectionOrderFollowsTheExampleFiles) {
  std::vector<std::string> top;
  for (const std::string& line : lines_of(hardware_profile_yaml(h100(), {}))) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#')
      top.push_back(line.substr(0, line.find(':')));
  }
  EXPECT_EQ(top, (std::vector<std::string>{"name", "description", "node", "launch_overhead",
                                           "max_channels", "nvlink", "network", "tree", "nvls",
                                           "protocols", "gpu", "host"}));
}

TEST(ProfileWriter, ValuesAreInTheSchemasUnits) {
  const std::string yaml = hardware_profile_yaml(h100(), {});
  for (const char* line :
       {"\nlaunch_overhead: 0us\n",
        "\n    ring: {base: 6.6us, nvlink_hop: 0.6us, network_hop: 2.7us}\n", "\n  latency: 25us\n",
        "\n    max_busbw: 141GB/s\n", "\n    full_bandwidth_size: 384KiB\n",
        "\n  memory: 81559MiB\n", "\n  hbm_bandwidth: 3.35TB/s\n", "\n  supported: true\n",
        "\n  cpu_adam_params_per_s: 1.41e9\n", "\n  kernel_launch: 10us\n"}) {
    EXPECT_NE(yaml.find(line), std::string::npos) << line << "\n" << yaml;
  }
  HardwareProfile profile = h100();
  profile.nvls_latency_us = us_of_ns(1);
  profile.host.graph_launch_us = us_of_ns(1001);
  profile.gpu.attention_bwd.causal_x_half = 1e-300;
  const std::string odd = hardware_profile_yaml(profile, {});
  EXPECT_NE(odd.find("\n  latency: 0.001us\n"), std::string::npos) << odd;
  EXPECT_NE(odd.find("\n  graph_launch: 1.001us\n"), std::string::npos) << odd;
  EXPECT_NE(odd.find("causal_x_half: 1e-300}"), std::string::npos) << odd;
}

// One change per field of the profile, each to a valid value that a file can
// hold exactly.
std::vector<std::pair<std::string, std::function<void(HardwareProfile&)>>> mutations() {
  std::vector<std::pair<std::string, std::function<void(HardwareProfile&)>>> m = {
      {"name", [](HardwareProfile& p) { p.name = "h100-fitted"; }},
      {"launch_overhead_us", [](HardwareProfile& p) { p.launch_overhead_us = us_of_ns(1234); }},
      {"max_channels", [](HardwareProfile& p) { p.max_channels = 17; }},
      {"nvlink_ring_efficiency", [](HardwareProfile& p) { p.nvlink_ring_efficiency = 0.1 + 0.2; }},
      {"network_efficiency",
       [](HardwareProfile& p) { p.network_efficiency = std::nextafter(0.94, 0.0); }},
      {"tree_efficiency", [](HardwareProfile& p) { p.tree_efficiency = 0.5; }},
      {"nvls_supported", [](HardwareProfile& p) { p.nvls_supported = !p.nvls_supported; }},
      {"nvls_latency_us", [](HardwareProfile& p) { p.nvls_latency_us = us_of_ns(1); }},
      {"nvls_busbw_efficiency", [](HardwareProfile& p) { p.nvls_busbw_efficiency = 1.0 / 3; }},
      {"nvls_full_bandwidth_bytes",
       [](HardwareProfile& p) { p.nvls_full_bandwidth_bytes = 123457; }},
  };
  for (Protocol protocol : collectives::kAllProtocols) {
    const std::string name = std::string("protocols[") + collectives::to_string(protocol) + "]";
    const auto at = [protocol](auto fn) {
      return [protocol, fn](HardwareProfile& p) { fn(p.protocol(protocol)); };
    };
    using PP = collectives::ProtocolParams;
    m.emplace_back(name + ".ring.base_us", at([](PP& pp) { pp.ring.base_us = us_of_ns(6601); }));
    m.emplace_back(name + ".ring.nvlink_hop_us",
                   at([](PP& pp) { pp.ring.nvlink_hop_us = us_of_ns(599); }));
    m.emplace_back(name + ".ring.network_hop_us",
                   at([](PP& pp) { pp.ring.network_hop_us = us_of_ns(123456789); }));
    m.emplace_back(name + ".tree.base_us", at([](PP& pp) { pp.tree.base_us = us_of_ns(0); }));
    m.emplace_back(name + ".tree.nvlink_hop_us",
                   at([](PP& pp) { pp.tree.nvlink_hop_us = us_of_ns(1251); }));
    m.emplace_back(name + ".tree.network_hop_us",
                   at([](PP& pp) { pp.tree.network_hop_us = us_of_ns(8499); }));
    m.emplace_back(name + ".efficiency", at([](PP& pp) { pp.efficiency = 0.25; }));
    m.emplace_back(name + ".max_busbw_Bps",
                   at([](PP& pp) { pp.max_busbw_Bps = std::nextafter(pp.max_busbw_Bps, 0.0); }));
    m.emplace_back(name + ".full_bandwidth_bytes",
                   at([](PP& pp) { pp.full_bandwidth_bytes = (int64_t{1} << 40) + 1; }));
  }
  const std::vector<std::pair<std::string, std::function<void(HardwareProfile&)>>> rest = {
      {"gpu.curves_fitted_to", [](HardwareProfile& p) { p.gpu.curves_fitted_to = "H100-PCIe"; }},
      {"gpu.peak_flops_per_s",
       [](HardwareProfile& p) { p.gpu.peak_flops_per_s = 987.654321 * 1e12; }},
      {"gpu.peak_fp8_flops_per_s",
       [](HardwareProfile& p) { p.gpu.peak_fp8_flops_per_s = 1975.308642 * 1e12; }},
      {"gpu.fp8_gemm_efficiency", [](HardwareProfile& p) { p.gpu.fp8_gemm_efficiency = 0.8765; }},
      {"gpu.memory_bytes",
       [](HardwareProfile& p) { p.gpu.memory_bytes = int64_t{81559} * 1024 * 1024 + 7; }},
      {"gpu.hbm_Bps", [](HardwareProfile& p) { p.gpu.hbm_Bps = std::nextafter(3.35e12, 0.0); }},
      {"gpu.mem_efficiency", [](HardwareProfile& p) { p.gpu.mem_efficiency = 0.875; }},
      {"gpu.gemm.e_max", [](HardwareProfile& p) { p.gpu.gemm.e_max = 0.7; }},
      {"gpu.gemm.x_half", [](HardwareProfile& p) { p.gpu.gemm.x_half = 1.2345678901234e10; }},
      {"gpu.gemm.dim_half", [](HardwareProfile& p) { p.gpu.gemm.dim_half = 512; }},
      // gpu.gemm.causal_x_half: no term of a GEMM curve, and no key in the file.
      {"gpu.attention_fwd.e_max", [](HardwareProfile& p) { p.gpu.attention_fwd.e_max = 0.5; }},
      {"gpu.attention_fwd.x_half", [](HardwareProfile& p) { p.gpu.attention_fwd.x_half = 201.5; }},
      {"gpu.attention_fwd.dim_half",
       [](HardwareProfile& p) { p.gpu.attention_fwd.dim_half = 64.5; }},
      {"gpu.attention_fwd.causal_x_half",
       [](HardwareProfile& p) { p.gpu.attention_fwd.causal_x_half = 100.25; }},
      {"gpu.attention_bwd.e_max", [](HardwareProfile& p) { p.gpu.attention_bwd.e_max = 0.25; }},
      {"gpu.attention_bwd.x_half", [](HardwareProfile& p) { p.gpu.attention_bwd.x_half = 1e-3; }},
      {"gpu.attention_bwd.dim_half",
       [](HardwareProfile& p) { p.gpu.attention_bwd.dim_half = 1.0 / 7; }},
      {"gpu.attention_bwd.causal_x_half",
       [](HardwareProfile& p) { p.gpu.attention_bwd.causal_x_half = 3e5; }},
      {"gpu.comm_overlap_slowdown",
       [](HardwareProfile& p) { p.gpu.comm_overlap_slowdown = std::nextafter(1.0, 2.0); }},
      {"gpu.sustained_clock", [](HardwareProfile& p) { p.gpu.sustained_clock = 0.6; }},
      {"gpu.speed_variation", [](HardwareProfile& p) { p.gpu.speed_variation = 0.0123; }},
      {"gpu.segment_jitter", [](HardwareProfile& p) { p.gpu.segment_jitter = 0.0234; }},
      {"host.kernel_launch_us",
       [](HardwareProfile& p) { p.host.kernel_launch_us = us_of_ns(12345); }},
      {"host.graph_launch_us",
       [](HardwareProfile& p) { p.host.graph_launch_us = us_of_ns(999999); }},
      {"host.pcie_efficiency", [](HardwareProfile& p) { p.host.pcie_efficiency = 0.5; }},
      {"host.cpu_adam_params_per_s",
       [](HardwareProfile& p) { p.host.cpu_adam_params_per_s = 2.5e9 + 0.5; }},
  };
  m.insert(m.end(), rest.begin(), rest.end());
  return m;
}

TEST(ProfileWriter, EveryFieldChangesTheTextAndRoundTrips) {
  const HardwareProfile original = h100();
  const std::string original_yaml = hardware_profile_yaml(original, {});
  const auto changes = mutations();
  // Every field but source_file and gpu.gemm.causal_x_half: top level, protocols, gpu scalars
  // (both peaks, FP8 GEMM efficiency, memory, HBM and its efficiency),
  // curves, gpu factors (overlap slowdown, sustained clock, speed spread, segment jitter), host.
  EXPECT_EQ(changes.size(), 10u + 3 * 9 + 7 + (3 * 4 - 1) + 4 + 4);
  for (const auto& [field, mutate] : changes) {
    SCOPED_TRACE(field);
    HardwareProfile changed = original;
    mutate(changed);
    std::string difference;
    // The comparison sees the change, and names the field...
    EXPECT_FALSE(profiles_equal(original, changed, &difference));
    EXPECT_EQ(difference.substr(0, field.size() + 1), field + ":") << difference;
    // ...the text shows it...
    const std::string yaml = hardware_profile_yaml(changed, {});
    EXPECT_NE(yaml, original_yaml);
    // ...and a file keeps it exactly.
    EXPECT_TRUE(profiles_equal(changed, round_trip(changed), &difference)) << difference << "\n"
                                                                           << yaml;
  }
}

TEST(ProfileWriter, CurveShapeTermsRoundTrip) {
  HardwareProfile profile = h100();
  profile.gpu.gemm.dim_half = 384.75;
  profile.gpu.attention_fwd.dim_half = 32;
  profile.gpu.attention_fwd.causal_x_half = 150.125;
  profile.gpu.attention_bwd.dim_half = 0.1 + 0.2;
  profile.gpu.attention_bwd.causal_x_half = 1e-300;
  const std::string yaml = hardware_profile_yaml(profile, {});
  EXPECT_NE(yaml.find("  gemm: {e_max: 0.832494164, x_half: 7842772220, min_dim_half: 384.75}\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("head_dim_half: 32, causal_x_half: 150.125}\n"), std::string::npos) << yaml;
  std::string difference;
  EXPECT_TRUE(profiles_equal(profile, round_trip(profile), &difference)) << difference;
}

TEST(ProfileWriter, DefaultShapeTermsAreWrittenToo) {
  const std::string yaml = hardware_profile_yaml(h100(), {});
  EXPECT_NE(yaml.find("min_dim_half: 0}"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  attention_bwd: {e_max: 0.3412206, x_half: 294.309916, head_dim_half: 0, "
                      "causal_x_half: 0}\n"),
            std::string::npos)
      << yaml;
}

TEST(ProfileWriter, LongGroupsAndCommentedGroupKeysAreBlockMappings) {
  HardwareProfile profile = h100();
  profile.gpu.attention_bwd = {0.1 + 0.2, 1.0 / 3, 2.0 / 3, 1e-300 / 3};
  ProfileProvenance provenance;
  provenance.key_comments["protocols.ll128.ring.base"] = "measured";
  const std::string yaml = hardware_profile_yaml(profile, provenance);
  EXPECT_NE(yaml.find("  attention_bwd:\n    e_max: 0.30000000000000004\n    x_half: "),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("  ll128:\n    ring:\n      # measured\n      base: 14us\n      nvlink_hop: "
                      "1.9us\n      network_hop: 4us\n    tree: {base: 14us,"),
            std::string::npos)
      << yaml;
  for (const std::string& line : lines_of(yaml)) EXPECT_LE(line.size(), 100u) << line;
  std::string difference;
  EXPECT_TRUE(profiles_equal(profile, round_trip(profile, provenance), &difference)) << difference;
}

TEST(ProfileWriter, CommentsGoWhereAskedAndNowhereElse) {
  ProfileProvenance provenance;
  provenance.header_lines = {"Written by clustersim calibrate", "inputs: a.csv, b.json"};
  provenance.key_comments = {
      {"gpu.gemm", "Fitted to gemm.csv\n\nsecond line"},
      {"nvlink.ring_efficiency", "370 / 450"},
      {"protocols.ll.max_busbw", "llMaxBw"},
      {"protocols", "NCCL protocols"},
      {"name", "the part"},
  };
  const std::string yaml = hardware_profile_yaml(h100(), provenance);
  EXPECT_EQ(yaml.rfind("# Written by clustersim calibrate\n# inputs: a.csv, b.json\n\n# the part\n"
                       "name: h100\n",
                       0),
            0u)
      << yaml;
  EXPECT_NE(yaml.find("  # Fitted to gemm.csv\n  #\n  # second line\n  gemm: {"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("nvlink:\n  # 370 / 450\n  ring_efficiency: 0.8222\n"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("    # llMaxBw\n    max_busbw: 141GB/s\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\n# NCCL protocols\nprotocols:\n"), std::string::npos) << yaml;
  // No other comment lines: 2 header + 1 + 3 + 1 + 1 + 1.
  int comments = 0;
  for (const std::string& line : lines_of(yaml)) {
    comments += line.find_first_not_of(' ') != std::string::npos &&
                line[line.find_first_not_of(' ')] == '#';
  }
  EXPECT_EQ(comments, 9) << yaml;
  // Without provenance, no comment at all.
  EXPECT_EQ(hardware_profile_yaml(h100(), {}).find('#'), std::string::npos);
}

TEST(ProfileWriter, LongCommentsWrapAtOneHundredColumns) {
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += (i == 0 ? "" : " ") + std::string("word") + std::to_string(i);
  ProfileProvenance provenance;
  provenance.key_comments["host.pcie_efficiency"] = text;
  const std::string yaml = hardware_profile_yaml(h100(), provenance);
  std::string rejoined;
  for (const std::string& line : lines_of(yaml)) {
    EXPECT_LE(line.size(), 100u) << line;
    if (line.rfind("  # ", 0) == 0) rejoined += (rejoined.empty() ? "" : " ") + line.substr(4);
  }
  EXPECT_EQ(rejoined, text);

  // Carriage returns break lines too (YAML ends a comment there).
  provenance.key_comments = {{"host.kernel_launch", "first\r\nsecond\rthird"}};
  const std::string breaks = hardware_profile_yaml(h100(), provenance);
  EXPECT_NE(breaks.find("\n  # first\n  # second\n  # third\n  kernel_launch: 10us\n"),
            std::string::npos)
      << breaks;
  std::string difference;
  EXPECT_TRUE(profiles_equal(h100(), round_trip(h100(), provenance), &difference)) << difference;
}

TEST(ProfileWriter, CommentOnAnUnknownKeyIsABug) {
  ProfileProvenance provenance;
  provenance.key_comments["gpu.gemm.x_halff"] = "typo";
  try {
    hardware_profile_yaml(h100(), provenance);
    FAIL() << "expected an InvariantError";
  } catch (const sim::InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu.gemm.x_halff"), std::string::npos) << e.what();
  }
}

TEST(ProfileWriter, StringsThatNeedQuotesRoundTrip) {
  for (const std::string& text :
       {std::string("h100: \"fitted\" # 2025"), std::string("line\nbreak\\tab\t"),
        std::string("null"), std::string("-x"), std::string(" padded "), std::string("{a, b}"),
        std::string("true"), std::string("\x01 ctrl"), std::string("H100 µ")}) {
    SCOPED_TRACE(text);
    HardwareProfile profile = h100();
    profile.name = text;
    profile.gpu.curves_fitted_to = text;
    ProfileProvenance provenance;
    provenance.description = text;
    const std::string yaml = hardware_profile_yaml(profile, provenance);
    std::string difference;
    EXPECT_TRUE(profiles_equal(profile, round_trip(profile, provenance), &difference))
        << difference << "\n"
        << yaml;
    const sim::ConfigValues values =
        sim::load_scenario_text(yaml, "written.yaml", collectives::hardware_profile_schema());
    EXPECT_EQ(values.get_string("description"), text);
  }
  ProfileProvenance no_description;
  EXPECT_NE(hardware_profile_yaml(h100(), no_description).find("\ndescription: \"\"\n"),
            std::string::npos);
}

TEST(ProfileWriter, DurationsAreWrittenToTheNanosecond) {
  HardwareProfile profile = h100();
  profile.launch_overhead_us = 1.0004;  // 1000.4 ns: the file holds whole nanoseconds
  profile.host.kernel_launch_us = 1.0006;
  const HardwareProfile back = round_trip(profile);
  EXPECT_EQ(back.launch_overhead_us, us_of_ns(1000));
  EXPECT_EQ(back.host.kernel_launch_us, us_of_ns(1001));
  EXPECT_NE(hardware_profile_yaml(profile, {}).find("\nlaunch_overhead: 1us\n"), std::string::npos);
}

TEST(ProfileWriter, PeakFlopsComesBackExactlyWhenAFileCanSayIt) {
  HardwareProfile profile = h100();
  int expressible_count = 0;
  int other_count = 0;
  // Near 989e12 every double is some double times 1e12; near 1050e12 about half are not.
  for (double start : {989e12, 1050e12}) {
    double flops = start;
    for (int i = 0; i < 100; ++i, flops = std::nextafter(flops, HUGE_VAL)) {
      profile.gpu.peak_flops_per_s = flops;
      const double back = round_trip(profile).gpu.peak_flops_per_s;
      bool expressible = false;
      double v = std::nextafter(std::nextafter(flops / 1e12, 0.0), 0.0);
      for (int j = 0; j < 5; ++j, v = std::nextafter(v, HUGE_VAL)) expressible |= v * 1e12 == flops;
      if (expressible) {
        EXPECT_EQ(back, flops) << std::setprecision(17) << flops;
        ++expressible_count;
      } else {
        EXPECT_LE(std::abs(back - flops), std::nextafter(flops, HUGE_VAL) - flops)
            << std::setprecision(17) << flops;
        ++other_count;
      }
    }
  }
  EXPECT_GT(expressible_count, 100);
  EXPECT_GT(other_count, 10);
  profile.gpu.peak_flops_per_s = 989e12;
  EXPECT_NE(hardware_profile_yaml(profile, {}).find("\n  peak_tflops: 989\n"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::calibration
