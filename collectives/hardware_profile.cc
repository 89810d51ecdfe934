#include "collectives/hardware_profile.h"

#include <filesystem>

#include "sim/config_values.h"
#include "sim/scenario_loader.h"

namespace clustersim::collectives {

namespace {

using sim::ValueType;

constexpr std::array<const char*, 3> kProtocolKeys = {"ll", "ll128", "simple"};

double us(const sim::ConfigValues& v, const std::string& path) {
  return static_cast<double>(v.get_duration(path).count_ns()) / 1e3;
}

void add_hops(sim::ConfigSchema& s, const std::string& section, const std::string& what) {
  s.add_section(section, "NCCL latency of " + what + " (src/graph/tuning.cc).");
  s.add_key(section + ".base", ValueType::kDuration, "Base latency per collective.")
      .required()
      .non_negative()
      .in_unit("us");
  s.add_key(section + ".nvlink_hop", ValueType::kDuration, "Latency per step over NVLink.")
      .required()
      .non_negative()
      .in_unit("us");
  s.add_key(section + ".network_hop", ValueType::kDuration, "Latency per step over the network.")
      .required()
      .non_negative()
      .in_unit("us");
}

HopLatency read_hops(const sim::ConfigValues& v, const std::string& section) {
  return HopLatency{us(v, section + ".base"), us(v, section + ".nvlink_hop"),
                    us(v, section + ".network_hop")};
}

}  // namespace

const char* to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
  }
  return "?";
}

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

sim::ConfigSchema hardware_profile_schema() {
  sim::ConfigSchema s;
  s.add_key("name", ValueType::kString, "Name of the profile.").required().not_empty();
  s.add_key("description", ValueType::kString, "What hardware, and where the numbers come from.")
      .default_to(std::string());
  s.add_key("launch_overhead", ValueType::kDuration,
            "Fixed cost per collective beyond NCCL's latency model.")
      .required()
      .non_negative()
      .in_unit("us");
  s.add_key("max_channels", ValueType::kInt, "Most NCCL channels a collective may use.")
      .required()
      .positive();
  s.add_section("nvlink", "Intra-node links.");
  s.add_key("nvlink.ring_efficiency", ValueType::kFloat,
            "Ring bus bandwidth / raw unidirectional NVLink bandwidth per GPU.")
      .required()
      .positive();
  s.add_section("network", "Inter-node links (one NIC per GPU, rail-optimised).");
  s.add_key("network.efficiency", ValueType::kFloat,
            "Bus bandwidth NCCL gets per NIC / the NIC's line rate.")
      .required()
      .fraction();
  s.add_section("tree", "Double binary tree.");
  s.add_key("tree.efficiency", ValueType::kFloat,
            "Tree bus bandwidth relative to ring over the same links.")
      .required()
      .fraction();
  s.add_section("nvls", "NVLink SHARP (in-switch reduction), one node, all_reduce, Simple.");
  s.add_key("nvls.supported", ValueType::kBool, "Whether the GPU and switch offer NVLS.")
      .required();
  s.add_key("nvls.latency", ValueType::kDuration, "NVLS latency per collective.")
      .required()
      .non_negative()
      .in_unit("us");
  s.add_key("nvls.busbw_efficiency", ValueType::kFloat,
            "NVLS all_reduce bus bandwidth / raw unidirectional NVLink bandwidth per GPU.")
      .required()
      .non_negative();
  s.add_key("nvls.full_bandwidth_size", ValueType::kBytes,
            "Message size from which NVLS runs all channels.")
      .required()
      .positive();
  s.add_section("protocols", "NCCL protocols.");
  for (const char* p : kProtocolKeys) {
    const std::string sec = std::string("protocols.") + p;
    s.add_section(sec, std::string("Protocol ") + p + ".");
    add_hops(s, sec + ".ring", "ring");
    add_hops(s, sec + ".tree", "tree");
    s.add_key(sec + ".efficiency", ValueType::kFloat,
              "Fraction of the bus bandwidth that carries data.")
        .required()
        .positive()
        .fraction();
    s.add_key(sec + ".max_busbw", ValueType::kBandwidth, "Ceiling on the bus bandwidth.")
        .required()
        .positive();
    s.add_key(sec + ".full_bandwidth_size", ValueType::kBytes,
              "Message size from which all channels run (smaller: fewer, time flat).")
        .required()
        .positive();
  }
  return s;
}

HardwareProfile load_hardware_profile(const std::string& path) {
  const sim::ConfigValues v = sim::load_scenario_file(path, hardware_profile_schema());
  HardwareProfile p;
  p.name = v.get_string("name");
  p.source_file = path;
  p.launch_overhead_us = us(v, "launch_overhead");
  const int64_t channels = v.get_int("max_channels");
  if (channels > 64) {
    throw sim::ConfigError(
        {sim::Diagnostic{v.where("max_channels"), "max_channels",
                         "expected at most 64 (NCCL's limit), found " + std::to_string(channels)}});
  }
  p.max_channels = static_cast<int>(channels);
  p.nvlink_ring_efficiency = v.get_float("nvlink.ring_efficiency");
  p.network_efficiency = v.get_float("network.efficiency");
  p.tree_efficiency = v.get_float("tree.efficiency");
  p.nvls_supported = v.get_bool("nvls.supported");
  p.nvls_latency_us = us(v, "nvls.latency");
  p.nvls_busbw_efficiency = v.get_float("nvls.busbw_efficiency");
  p.nvls_full_bandwidth_bytes = v.get_bytes("nvls.full_bandwidth_size");
  for (size_t i = 0; i < kProtocolKeys.size(); ++i) {
    const std::string sec = std::string("protocols.") + kProtocolKeys[i];
    ProtocolParams& pp = p.protocols[i];
    pp.ring = read_hops(v, sec + ".ring");
    pp.tree = read_hops(v, sec + ".tree");
    pp.efficiency = v.get_float(sec + ".efficiency");
    pp.max_busbw_Bps = v.get_bandwidth_Bps(sec + ".max_busbw");
    pp.full_bandwidth_bytes = v.get_bytes(sec + ".full_bandwidth_size");
  }
  return p;
}

void add_hardware_keys(sim::ConfigSchema& schema) {
  schema
      .add_key("hardware", ValueType::kString,
               "Hardware profile (collective cost constants): a YAML file, relative to the "
               "scenario file's directory unless absolute, e.g. ../hardware/h100.yaml.")
      .not_empty();
}

std::string resolve_hardware_path(const std::string& scenario_path,
                                  const std::string& hardware_value) {
  const std::filesystem::path hw(hardware_value);
  if (hw.is_absolute()) return hw.lexically_normal().string();
  return (std::filesystem::path(scenario_path).parent_path() / hw).lexically_normal().string();
}

}  // namespace clustersim::collectives
