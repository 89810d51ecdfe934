#include "hardware/hardware_profile.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "config/config_error.h"
#include "tests/support/scratch_dir.h"

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
    EXPECT_NE(what.find("bad.yaml:14:"), std::string::npos) << what;  // launch_overhead
    EXPECT_NE(what.find("network.efficiency"), std::string::npos) << what;
    EXPECT_NE(what.find("launch_overhead"), std::string::npos) << what;
    EXPECT_EQ(e.diagnostics().size(), 2u) << what;
  }
}

// h100.yaml with some lines replaced: each key of `edits` is a line prefix
// (indentation included), its value the new line ("" drops the line). Records
// the 1-based number of each replaced line in `lines`.
std::string h100_variant(const test_support::ScratchDir& dir,
                         const std::map<std::string, std::string>& edits,
                         std::map<std::string, int>* lines = nullptr) {
  std::ifstream in(kHardwareDir + "h100.yaml");
  std::ostringstream out;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    bool drop = false;
    for (const auto& [prefix, replacement] : edits) {
      if (line.rfind(prefix, 0) != 0) continue;
      if (replacement.empty()) {
        drop = true;
      } else {
        line = replacement;
      }
      if (lines != nullptr) (*lines)[prefix] = number + 1;
      break;
    }
    if (drop) continue;
    ++number;
    out << line << "\n";
  }
  return dir.write("bad.yaml", out.str());
}

std::string error_of(const std::string& path) {
  try {
    load_hardware_profile(path);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(HardwareProfile, GpuAndHostSectionsOfShippedProfiles) {
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  EXPECT_EQ(h100.gpu.curves_fitted_to, "H100-SXM");
  EXPECT_DOUBLE_EQ(h100.gpu.peak_flops_per_s, 989e12);
  EXPECT_DOUBLE_EQ(h100.gpu.peak_fp8_flops_per_s, 1979e12);  // datasheet, dense
  EXPECT_EQ(h100.gpu.memory_bytes, int64_t{81559} << 20);    // nvidia-smi's total
  EXPECT_DOUBLE_EQ(h100.gpu.hbm_Bps, 3.35e12);
  EXPECT_DOUBLE_EQ(h100.gpu.mem_efficiency, 0.90);
  EXPECT_DOUBLE_EQ(h100.gpu.gemm.e_max, 0.832494164);
  EXPECT_DOUBLE_EQ(h100.gpu.gemm.x_half, 7.84277222e9);
  EXPECT_DOUBLE_EQ(h100.gpu.gemm.dim_half, 0);
  EXPECT_DOUBLE_EQ(h100.gpu.attention_fwd.x_half, 0);
  EXPECT_DOUBLE_EQ(h100.gpu.attention_fwd.causal_x_half, 208.282794);
  EXPECT_DOUBLE_EQ(h100.gpu.attention_bwd.e_max, 0.341220600);
  EXPECT_DOUBLE_EQ(h100.gpu.comm_overlap_slowdown, 1.10);
  EXPECT_DOUBLE_EQ(h100.host.kernel_launch_us, 10.0);
  EXPECT_DOUBLE_EQ(h100.host.graph_launch_us, 8.0);
  EXPECT_DOUBLE_EQ(h100.host.pcie_efficiency, 0.805);
  EXPECT_DOUBLE_EQ(h100.host.cpu_adam_params_per_s, 1.41e9);

  // H200: H100's curves, its own HBM.
  const HardwareProfile h200 = load_hardware_profile(kHardwareDir + "h200.yaml");
  EXPECT_EQ(h200.gpu.curves_fitted_to, "H100-SXM");
  EXPECT_DOUBLE_EQ(h200.gpu.peak_flops_per_s, 989e12);
  EXPECT_DOUBLE_EQ(h200.gpu.peak_fp8_flops_per_s, 1979e12);  // inherited from h100.yaml
  EXPECT_EQ(h200.gpu.memory_bytes, 141'000'000'000);
  EXPECT_DOUBLE_EQ(h200.gpu.hbm_Bps, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.gpu.gemm.x_half, h100.gpu.gemm.x_half);
  // The 500 W HBM2e part: the midpoint of SXM and NVL, as its bf16 peak; A100: none.
  EXPECT_DOUBLE_EQ(
      load_hardware_profile(kHardwareDir + "h100_96gb_500w.yaml").gpu.peak_fp8_flops_per_s,
      1825e12);
  EXPECT_DOUBLE_EQ(load_hardware_profile(kHardwareDir + "a100.yaml").gpu.peak_fp8_flops_per_s, 0);
  EXPECT_DOUBLE_EQ(h200.gpu.attention_bwd.x_half, h100.gpu.attention_bwd.x_half);
  EXPECT_DOUBLE_EQ(h200.host.pcie_efficiency, 0.859);

  const HardwareProfile a100 = load_hardware_profile(kHardwareDir + "a100.yaml");
  EXPECT_EQ(a100.gpu.curves_fitted_to, "A100-SXM");
  EXPECT_DOUBLE_EQ(a100.gpu.peak_flops_per_s, 312e12);
  EXPECT_EQ(a100.gpu.memory_bytes, int64_t{81920} << 20);
  EXPECT_DOUBLE_EQ(a100.gpu.hbm_Bps, 2.04e12);
  EXPECT_DOUBLE_EQ(a100.gpu.gemm.e_max, 0.826944453);
  EXPECT_DOUBLE_EQ(a100.gpu.gemm.dim_half, 119.817987);
  // Only fwd_bwd rows for A100: one curve for both passes.
  EXPECT_DOUBLE_EQ(a100.gpu.attention_bwd.e_max, a100.gpu.attention_fwd.e_max);
  EXPECT_DOUBLE_EQ(a100.gpu.attention_bwd.x_half, a100.gpu.attention_fwd.x_half);
}

// torchtitan's benchmark H100 (96 GB HBM2e, 500 W): its own peak, memory and
// HBM bandwidth; H100 SXM's curves and collective constants.
TEST(HardwareProfile, TorchtitanH100Variant) {
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  const HardwareProfile v = load_hardware_profile(kHardwareDir + "h100_96gb_500w.yaml");
  EXPECT_EQ(v.name, "h100_96gb_500w");
  EXPECT_DOUBLE_EQ(v.gpu.peak_flops_per_s, (989e12 + 835e12) / 2);
  EXPECT_DOUBLE_EQ(v.gpu.peak_flops_per_s, 912e12);
  EXPECT_EQ(v.gpu.memory_bytes, 96'000'000'000);
  EXPECT_DOUBLE_EQ(v.gpu.hbm_Bps, 2.4e12);
  // Derived from h100.yaml's measured 0.897 by P ~ f^3: 1,642 MHz x
  // (500 / 700)^(1/3) = 1,468 MHz = 793.6 TFLOP/s on 132 SMs, over 912.
  EXPECT_DOUBLE_EQ(v.gpu.sustained_clock, 0.870);
  EXPECT_NEAR(1642.0 * std::cbrt(500.0 / 700.0) * 132 * 4096 * 1e6 / 912e12, 0.870, 5e-4);
  EXPECT_EQ(v.gpu.curves_fitted_to, "H100-SXM");
  for (const auto& [mine, theirs] : {std::pair{v.gpu.gemm, h100.gpu.gemm},
                                     std::pair{v.gpu.attention_fwd, h100.gpu.attention_fwd},
                                     std::pair{v.gpu.attention_bwd, h100.gpu.attention_bwd}}) {
    EXPECT_DOUBLE_EQ(mine.e_max, theirs.e_max);
    EXPECT_DOUBLE_EQ(mine.x_half, theirs.x_half);
  }
  EXPECT_DOUBLE_EQ(v.gpu.mem_efficiency, h100.gpu.mem_efficiency);
  EXPECT_DOUBLE_EQ(v.gpu.comm_overlap_slowdown, h100.gpu.comm_overlap_slowdown);
  EXPECT_DOUBLE_EQ(v.host.pcie_efficiency, h100.host.pcie_efficiency);

  EXPECT_DOUBLE_EQ(v.launch_overhead_us, h100.launch_overhead_us);
  EXPECT_EQ(v.max_channels, h100.max_channels);
  EXPECT_DOUBLE_EQ(v.nvlink_ring_efficiency, h100.nvlink_ring_efficiency);
  EXPECT_DOUBLE_EQ(v.network_efficiency, h100.network_efficiency);
  EXPECT_DOUBLE_EQ(v.tree_efficiency, h100.tree_efficiency);
  EXPECT_EQ(v.nvls_supported, h100.nvls_supported);
  EXPECT_DOUBLE_EQ(v.nvls_latency_us, h100.nvls_latency_us);
  EXPECT_DOUBLE_EQ(v.nvls_busbw_efficiency, h100.nvls_busbw_efficiency);
  EXPECT_EQ(v.nvls_full_bandwidth_bytes, h100.nvls_full_bandwidth_bytes);
  for (Protocol p : kAllProtocols) {
    const ProtocolParams& a = v.protocol(p);
    const ProtocolParams& b = h100.protocol(p);
    EXPECT_DOUBLE_EQ(a.ring.base_us, b.ring.base_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.ring.nvlink_hop_us, b.ring.nvlink_hop_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.ring.network_hop_us, b.ring.network_hop_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.tree.base_us, b.tree.base_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.tree.nvlink_hop_us, b.tree.nvlink_hop_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.tree.network_hop_us, b.tree.network_hop_us) << to_string(p);
    EXPECT_DOUBLE_EQ(a.efficiency, b.efficiency) << to_string(p);
    EXPECT_DOUBLE_EQ(a.max_busbw_Bps, b.max_busbw_Bps) << to_string(p);
    EXPECT_EQ(a.full_bandwidth_bytes, b.full_bandwidth_bytes) << to_string(p);
  }
}

// h200.yaml is `extends: h100.yaml` plus what differs; every value is the
// one the whole file had before (scenarios/hardware/h200.yaml at the layout
// commit, 7f63574).
TEST(HardwareProfile, ShippedH200KeepsItsValuesThroughExtends) {
  const HardwareProfile p = load_hardware_profile(kHardwareDir + "h200.yaml");
  EXPECT_EQ(p.name, "h200");
  EXPECT_EQ(p.source_file, kHardwareDir + "h200.yaml");
  EXPECT_DOUBLE_EQ(p.launch_overhead_us, 0.0);
  EXPECT_EQ(p.max_channels, 32);
  EXPECT_DOUBLE_EQ(p.nvlink_ring_efficiency, 0.816);  // its own
  EXPECT_DOUBLE_EQ(p.network_efficiency, 0.94);
  EXPECT_DOUBLE_EQ(p.tree_efficiency, 0.92);
  EXPECT_TRUE(p.nvls_supported);
  EXPECT_DOUBLE_EQ(p.nvls_latency_us, 25.0);
  EXPECT_DOUBLE_EQ(p.nvls_busbw_efficiency, 1.0667);
  EXPECT_EQ(p.nvls_full_bandwidth_bytes, 80 << 20);
  const ProtocolParams& ll = p.protocol(Protocol::kLL);
  EXPECT_DOUBLE_EQ(ll.ring.base_us, 6.6);
  EXPECT_DOUBLE_EQ(ll.tree.network_hop_us, 5.0);
  EXPECT_DOUBLE_EQ(ll.efficiency, 0.5);
  EXPECT_DOUBLE_EQ(ll.max_busbw_Bps, 141e9);
  EXPECT_EQ(ll.full_bandwidth_bytes, 384 << 10);
  const ProtocolParams& ll128 = p.protocol(Protocol::kLL128);
  EXPECT_DOUBLE_EQ(ll128.ring.nvlink_hop_us, 1.9);
  EXPECT_DOUBLE_EQ(ll128.tree.nvlink_hop_us, 1.25);
  EXPECT_DOUBLE_EQ(ll128.efficiency, 0.9375);
  EXPECT_EQ(ll128.full_bandwidth_bytes, 768 << 10);
  const ProtocolParams& simple = p.protocol(Protocol::kSimple);
  EXPECT_DOUBLE_EQ(simple.ring.network_hop_us, 14.0);
  EXPECT_DOUBLE_EQ(simple.tree.nvlink_hop_us, 4.0);
  EXPECT_DOUBLE_EQ(simple.max_busbw_Bps, 1000e9);
  EXPECT_EQ(simple.full_bandwidth_bytes, 1536 << 10);
  EXPECT_EQ(p.gpu.curves_fitted_to, "H100-SXM");
  EXPECT_DOUBLE_EQ(p.gpu.peak_flops_per_s, 989e12);
  EXPECT_EQ(p.gpu.memory_bytes, 141'000'000'000);  // its own
  EXPECT_DOUBLE_EQ(p.gpu.hbm_Bps, 4.8e12);         // its own
  EXPECT_DOUBLE_EQ(p.gpu.mem_efficiency, 0.90);
  EXPECT_DOUBLE_EQ(p.gpu.gemm.e_max, 0.832494164);
  EXPECT_DOUBLE_EQ(p.gpu.gemm.x_half, 7.84277222e9);
  EXPECT_DOUBLE_EQ(p.gpu.attention_fwd.e_max, 0.356125565);
  EXPECT_DOUBLE_EQ(p.gpu.attention_fwd.causal_x_half, 208.282794);
  EXPECT_DOUBLE_EQ(p.gpu.attention_bwd.x_half, 294.309916);
  EXPECT_DOUBLE_EQ(p.gpu.comm_overlap_slowdown, 1.10);
  EXPECT_DOUBLE_EQ(p.gpu.sustained_clock, 0.897);  // 1,642 / 1,830 MHz, measured
  EXPECT_DOUBLE_EQ(p.host.kernel_launch_us, 10.0);
  EXPECT_DOUBLE_EQ(p.host.graph_launch_us, 8.0);
  EXPECT_DOUBLE_EQ(p.host.pcie_efficiency, 0.859);  // its own
  EXPECT_DOUBLE_EQ(p.host.cpu_adam_params_per_s, 1.41e9);
}

TEST(HardwareProfile, ExtendingAProfileMergesItsFlowMappings) {
  const test_support::ScratchDir dir;
  const std::string path = dir.write("tuned.yaml", "extends: " + kHardwareDir + "h100.yaml\n" +
                                                       "name: tuned\n"
                                                       "protocols:\n"
                                                       "  ll:\n"
                                                       "    ring: {base: 7us}\n"
                                                       "gpu:\n"
                                                       "  gemm: {e_max: 0.8}\n");
  const HardwareProfile p = load_hardware_profile(path);
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  EXPECT_EQ(p.name, "tuned");
  EXPECT_EQ(p.source_file, path);
  EXPECT_DOUBLE_EQ(p.protocol(Protocol::kLL).ring.base_us, 7.0);
  EXPECT_DOUBLE_EQ(p.protocol(Protocol::kLL).ring.nvlink_hop_us, 0.6);
  EXPECT_DOUBLE_EQ(p.protocol(Protocol::kLL).ring.network_hop_us, 2.7);
  EXPECT_DOUBLE_EQ(p.protocol(Protocol::kLL).tree.base_us, 6.8);
  EXPECT_DOUBLE_EQ(p.gpu.gemm.e_max, 0.8);
  EXPECT_DOUBLE_EQ(p.gpu.gemm.x_half, h100.gpu.gemm.x_half);
  EXPECT_DOUBLE_EQ(p.gpu.sustained_clock, h100.gpu.sustained_clock);
}

TEST(HardwareProfile, ErrorInABaseProfileNamesTheBase) {
  const test_support::ScratchDir dir;
  std::map<std::string, int> lines;
  const std::string base =
      h100_variant(dir, {{"  pcie_efficiency:", "  pcie_efficiency: 1.2"}}, &lines);
  const std::string top = dir.write("top.yaml", "extends: bad.yaml\nname: top\n");
  const std::string what = error_of(top);
  EXPECT_EQ(what, base + ":" + std::to_string(lines.at("  pcie_efficiency:")) +
                      ":20: error: host.pcie_efficiency: expected a number in (0, 1], found '1.2'")
      << what;
  // A missing base, at the `extends` that names it.
  const std::string lost = dir.write("lost.yaml", "name: lost\nextends: h999.yaml\n");
  EXPECT_EQ(error_of(lost), lost +
                                ":2:10: error: extends: expected a YAML file to extend (relative "
                                "to this file's folder), found no file at '" +
                                dir.file("h999.yaml") + "'");
}

TEST(HardwareProfile, GpuAndHostValuesTakeUnits) {
  const test_support::ScratchDir dir;
  const HardwareProfile p = load_hardware_profile(
      h100_variant(dir, {{"  memory:", "  memory: 80GiB"},
                         {"  hbm_bandwidth:", "  hbm_bandwidth: 3350GB/s"},
                         {"  peak_tflops:", "  peak_tflops: 989.4"},
                         {"  kernel_launch:", "  kernel_launch: 0.012ms"},
                         {"  graph_launch:", "  graph_launch: 3"},  // bare: microseconds
                         {"  gemm:", "  gemm: {e_max: 1, x_half: 0}"}}));
  EXPECT_EQ(p.gpu.memory_bytes, int64_t{80} << 30);
  EXPECT_DOUBLE_EQ(p.gpu.hbm_Bps, 3.35e12);
  EXPECT_DOUBLE_EQ(p.gpu.peak_flops_per_s, 989.4e12);
  EXPECT_DOUBLE_EQ(p.host.kernel_launch_us, 12.0);
  EXPECT_DOUBLE_EQ(p.host.graph_launch_us, 3.0);
  EXPECT_DOUBLE_EQ(p.gpu.gemm.e_max, 1.0);  // (0, 1] includes 1
  EXPECT_DOUBLE_EQ(p.gpu.gemm.x_half, 0.0);
}

TEST(HardwareProfile, GpuAndHostDefaults) {
  const test_support::ScratchDir dir;
  const HardwareProfile p =
      load_hardware_profile(h100_variant(dir, {{"  mem_efficiency:", ""},
                                               {"  comm_overlap_slowdown:", ""},
                                               {"  kernel_launch:", ""},
                                               {"  graph_launch:", ""},
                                               {"  cpu_adam_params_per_s:", ""}}));
  EXPECT_DOUBLE_EQ(p.gpu.mem_efficiency, 0.90);
  EXPECT_DOUBLE_EQ(p.gpu.comm_overlap_slowdown, 1.10);
  EXPECT_DOUBLE_EQ(p.host.kernel_launch_us, 10.0);
  EXPECT_DOUBLE_EQ(p.host.graph_launch_us, 8.0);
  EXPECT_DOUBLE_EQ(p.host.cpu_adam_params_per_s, 1.41e9);
}

TEST(HardwareProfile, BadGpuAndHostValuesNameFileLineAndKey) {
  const test_support::ScratchDir dir;
  const std::map<std::string, std::string> edits = {
      {"  peak_tflops:", "  peak_tflops: -1"},
      {"  memory:", "  memory: 80GB/s"},
      {"  hbm_bandwidth:", "  hbm_bandwidth: 3.35TB"},
      {"  mem_efficiency:", "  mem_efficiency: 0"},
      {"  gemm:", "  gemm: {e_max: 1.5, x_half: 7.78913116e9}"},
      {"  attention_fwd:", "  attention_fwd: {e_max: 0.35, x_half: -3}"},
      {"  comm_overlap_slowdown:", "  comm_overlap_slowdown: 0.9"},
      {"  kernel_launch:", "  kernel_launch: 10 parsecs"},
      {"  pcie_efficiency:", "  pcie_efficiency: 1.2"},
      {"  cpu_adam_params_per_s:", "  cpu_adam_params_per_s: 0"},
  };
  std::map<std::string, int> lines;
  const std::string path = h100_variant(dir, edits, &lines);
  ASSERT_EQ(lines.size(), edits.size());
  try {
    load_hardware_profile(path);
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.diagnostics().size(), edits.size()) << what;
    const std::map<std::string, std::string> key_of = {
        {"  peak_tflops:", "gpu.peak_tflops: expected a positive finite number"},
        {"  memory:", "gpu.memory: expected a positive size"},
        {"  hbm_bandwidth:", "gpu.hbm_bandwidth: expected a positive bandwidth"},
        {"  mem_efficiency:", "gpu.mem_efficiency: expected a number in (0, 1]"},
        {"  gemm:", "gpu.gemm.e_max: expected a number in (0, 1], found '1.5'"},
        {"  attention_fwd:", "gpu.attention_fwd.x_half: expected a non-negative finite number"},
        {"  comm_overlap_slowdown:", "gpu.comm_overlap_slowdown: expected a number >= 1"},
        {"  kernel_launch:", "host.kernel_launch: expected a positive duration"},
        {"  pcie_efficiency:", "host.pcie_efficiency: expected a number in (0, 1]"},
        {"  cpu_adam_params_per_s:", "host.cpu_adam_params_per_s: expected a positive"},
    };
    for (const auto& [prefix, message] : key_of) {
      const std::string where = "bad.yaml:" + std::to_string(lines.at(prefix)) + ":";
      bool found = false;
      for (const sim::Diagnostic& d : e.diagnostics()) {
        const std::string text = d.to_string();
        if (text.find(where) != std::string::npos && text.find(message) != std::string::npos) {
          found = true;
        }
      }
      EXPECT_TRUE(found) << where << " " << message << " in\n" << what;
    }
  }
}

TEST(HardwareProfile, MissingGpuFigureIsNamed) {
  const test_support::ScratchDir dir;
  const std::string what = error_of(h100_variant(dir, {{"  peak_tflops:", ""}}));
  EXPECT_NE(what.find("bad.yaml"), std::string::npos) << what;
  EXPECT_NE(what.find("gpu.peak_tflops"), std::string::npos) << what;
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

namespace clustersim::collectives {
namespace {

// gpu.mem_efficiency_by_class: each class optional (0 = gpu.mem_efficiency),
// each in (0, 1], a misspelt class named with its suggestion.
TEST(HardwareProfile, MemoryEfficiencyByClassIsOptionalAndChecked) {
  const std::string base = kHardwareDir + "h200.yaml";
  const HardwareProfile plain = load_hardware_profile(base);
  EXPECT_EQ(plain.gpu.mem_efficiency_by_class.norm, 0.0);
  EXPECT_EQ(plain.gpu.mem_efficiency_by_class.optimizer, 0.0);

  const HardwareProfile measured = load_hardware_profile(kHardwareDir + "h200_measured.yaml");
  EXPECT_EQ(measured.gpu.mem_efficiency_by_class.norm, 0.558);
  EXPECT_EQ(measured.gpu.mem_efficiency_by_class.elementwise, 0.845);
  EXPECT_EQ(measured.gpu.mem_efficiency_by_class.embedding, 0.0);
  EXPECT_EQ(measured.gpu.mem_efficiency_by_class.loss, 0.540);
  EXPECT_EQ(measured.gpu.mem_efficiency_by_class.optimizer, 0.754);

  const std::string text = "extends: " + base +
                           "\nname: bad\ngpu:\n  mem_efficiency_by_class:\n    norm: 1.5\n"
                           "    elementwize: 0.3\n";
  try {
    parse_hardware_profile(text, "bad.yaml");
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.yaml:5:11: error: gpu.mem_efficiency_by_class.norm: expected a "
                        "number in (0, 1], found '1.5'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("bad.yaml:6:5: error: gpu.mem_efficiency_by_class.elementwize: unknown "
                        "key (did you mean 'elementwise'?)"),
              std::string::npos)
        << what;
  }
}

// cuDNN's attention curves come whole or not at all: a forward without its
// backward is an error at the forward's key, naming what is missing.
TEST(HardwareProfile, CudnnAttentionCurvesComeAsAPair) {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim_hw_profile_cudnn";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "half.yaml").string();
  {
    std::ofstream out(path);
    out << "extends: " << kHardwareDir << "a100.yaml\nname: half\ngpu:\n"
        << "  cudnn_attention_fwd: {e_max: 0.5, x_half: 100}\n";
  }
  try {
    load_hardware_profile(path);
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("half.yaml:4:"), std::string::npos) << what;
    EXPECT_NE(what.find("gpu.cudnn_attention_bwd.e_max: expected a value with "
                        "gpu.cudnn_attention_fwd.e_max"),
              std::string::npos)
        << what;
    EXPECT_EQ(e.diagnostics().size(), 2u) << what;  // the backward's e_max and x_half
  }
  // The H100 profile has both (measured on an H200), A100's none.
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  ASSERT_TRUE(h100.gpu.cudnn_attention_fwd.has_value());
  EXPECT_EQ(h100.gpu.cudnn_attention_fwd->e_max, 1.0);
  EXPECT_DOUBLE_EQ(h100.gpu.cudnn_attention_bwd->x_half, 548.345193);
  EXPECT_FALSE(load_hardware_profile(kHardwareDir + "a100.yaml").gpu.cudnn_attention_fwd);
}

}  // namespace
// A part's clock is measured, never fitted to training runs: the key that
// once named the runs it was fitted to says where such a record lives now.
TEST(HardwareProfile, ClockFittedToRunsIsNoLongerAKeyOfAProfile) {
  const std::string text = "extends: " + kHardwareDir +
                           "h100.yaml\nname: fitted\ngpu:\n  sustained_clock: 0.7\n"
                           "  sustained_clock_fitted_to: run_a run_b\n";
  try {
    parse_hardware_profile(text, "fitted.yaml");
    FAIL() << "expected a ConfigError";
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fitted.yaml:5:3: error: gpu.sustained_clock_fitted_to: expected a key of "
                        "this file, found 'gpu.sustained_clock_fitted_to', which named the "
                        "training runs a clock was once fitted to"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("workload.stack_efficiency_fitted_to"), std::string::npos) << what;
  }
}

}  // namespace clustersim::collectives
