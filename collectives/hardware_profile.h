// HardwareProfile: every constant of the collective cost model for one GPU
// generation, loaded from a YAML profile (scenarios/hardware/*.yaml) in which
// each value carries its source in a comment.
//
// Units: latencies are microseconds (double, `_us`), bandwidths bytes per
// second (`_Bps`), sizes bytes. Efficiencies are dimensionless multipliers of
// a raw link rate that the topology provides (GroupGeometry in
// collective_cost.h): the profile says how much of the wire NCCL achieves,
// the topology says how fast the wire is.
//
// Errors: load_hardware_profile throws sim::ConfigError naming file:line:col
// for every bad, missing or unknown key (the profile is validated by its own
// ConfigSchema through sim::load_scenario_file).
// Thread safety: a value type; read-only after loading.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sim/config_schema.h"

namespace clustersim::collectives {

enum class Algorithm { kRing, kTree, kNvls };
enum class Protocol { kLL, kLL128, kSimple };

inline constexpr std::array<Algorithm, 3> kAllAlgorithms = {Algorithm::kRing, Algorithm::kTree,
                                                            Algorithm::kNvls};
inline constexpr std::array<Protocol, 3> kAllProtocols = {Protocol::kLL, Protocol::kLL128,
                                                          Protocol::kSimple};

// "ring", "tree", "nvls"; "LL", "LL128", "Simple".
const char* to_string(Algorithm algorithm);
const char* to_string(Protocol protocol);

// NCCL's latency model for one algorithm under one protocol (tuning.cc).
struct HopLatency {
  double base_us = 0;         // once per collective
  double nvlink_hop_us = 0;   // per step over NVLink (intra-node)
  double network_hop_us = 0;  // per step over the network (inter-node)
};

struct ProtocolParams {
  HopLatency ring;
  HopLatency tree;
  // Fraction of the algorithm's bus bandwidth that carries data (LL: 4 of
  // every 8 bytes; LL128: 120 of 128; Simple: 1).
  double efficiency = 1;
  // Ceiling on the bus bandwidth this protocol reaches, whatever the links
  // (NCCL's llMaxBw and per-channel LL128 caps), bytes/s.
  double max_busbw_Bps = 0;
  // Message size (nccl-tests convention) from which NCCL runs all channels;
  // below it fewer channels run and the time stays flat (the ramp). Per
  // channel: full_bandwidth_bytes / max_channels.
  int64_t full_bandwidth_bytes = 0;
};

struct HardwareProfile {
  std::string name;
  std::string source_file;  // where it was loaded from; empty if built in code

  // Fixed cost per collective beyond NCCL's model (launch, kernel start),
  // microseconds.
  double launch_overhead_us = 0;
  // NCCL's channel limit (MAXCHANNELS); the tuner picks 1..max_channels.
  int max_channels = 32;
  // Ring bus bandwidth achieved / raw unidirectional NVLink bandwidth per GPU.
  double nvlink_ring_efficiency = 1;
  // Bus bandwidth achieved per NIC / its raw line rate.
  double network_efficiency = 1;
  // Tree bus bandwidth relative to ring's over the same links (NCCL 0.92).
  double tree_efficiency = 1;

  bool nvls_supported = false;
  double nvls_latency_us = 0;
  // NVLS all_reduce bus bandwidth / raw unidirectional NVLink bandwidth per
  // GPU (> 1: the switch reduces in the network).
  double nvls_busbw_efficiency = 0;
  int64_t nvls_full_bandwidth_bytes = 0;

  std::array<ProtocolParams, 3> protocols{};  // indexed by Protocol

  const ProtocolParams& protocol(Protocol p) const { return protocols[static_cast<size_t>(p)]; }
  ProtocolParams& protocol(Protocol p) { return protocols[static_cast<size_t>(p)]; }
};

// The schema of a profile file (for describe-config style docs and tests).
sim::ConfigSchema hardware_profile_schema();

// Loads and validates a profile. Throws sim::ConfigError (file:line:col).
HardwareProfile load_hardware_profile(const std::string& path);

// Declares the scenario's top-level `hardware` key: the path of a profile
// file, relative to the scenario file's directory unless absolute.
void add_hardware_keys(sim::ConfigSchema& schema);

// The profile path a scenario means: `hardware_value` as written, resolved
// against the directory holding `scenario_path` unless it is absolute.
std::string resolve_hardware_path(const std::string& scenario_path,
                                  const std::string& hardware_value);

}  // namespace clustersim::collectives
