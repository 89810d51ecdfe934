// HardwareProfile: every constant of the collective cost model for one GPU
// generation, plus the GPU's compute figures (`gpu`: peak, HBM, the compute
// model's efficiency curves) and the host's (`host`: launch costs, PCIe, CPU
// optimizer), loaded from a YAML profile (scenarios/hardware/*.yaml) in which
// each value carries its source in a comment. Collectives only carries the
// `gpu` and `host` numbers; workloads/model/compute_model.h turns them into a
// GpuComputeSpec (compute_spec_from_profile).
//
// Units: latencies are microseconds (double, `_us`), bandwidths bytes per
// second (`_Bps`), sizes bytes, compute FLOP/s. Efficiencies are
// dimensionless multipliers of a raw rate: of a link rate that the topology
// provides (GroupGeometry in collective_cost.h) -- the profile says how much
// of the wire NCCL achieves, the topology says how fast the wire is -- or of
// the GPU's own peak FLOP/s and HBM bandwidth.
//
// A profile file may start from another with `extends: <file>` (relative to
// its own directory): the base is read first and the file's keys override it
// key by key (config/scenario_loader.h), so h200.yaml holds only what differs
// from h100.yaml. The loaded profile is the merged one; source_file is the
// file named, not its base.
//
// Errors: load_hardware_profile throws sim::ConfigError naming file:line:col
// for every bad, missing or unknown key, in whichever file of the extends
// chain holds it (the profile is validated by its own ConfigSchema through
// sim::load_scenario_file).
// Thread safety: a value type; read-only after loading.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/config_schema.h"

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

// One efficiency curve of the compute model (workloads/model/compute_model.h):
//   eff = e_max / (1 + (x_half + causal x causal_x_half) / x + dim_half / dim)
// which with the last two terms zero is e_max * x / (x + x_half); x_half is
// in the unit of its curve's size, dim_half in elements of its dimension
// (GEMM: the smallest of m, n, k; attention: the head dimension).
struct EfficiencyCurveParams {
  double e_max = 1;          // plateau, in (0, 1]
  double x_half = 0;         // size at which eff = e_max / 2 (other terms zero), >= 0
  double dim_half = 0;       // dimension at which the shape alone halves eff, >= 0
  double causal_x_half = 0;  // attention: added to x_half for causal masks, >= 0
};

// The GPU's compute figures (profile section `gpu`).
struct GpuProfile {
  // The `hardware` rows of scenarios/measurements/compute/*.csv the curves
  // were fitted to ("H100-SXM"); a part without measurements of its own names
  // the part whose curves it borrows.
  std::string curves_fitted_to;
  double peak_flops_per_s = 0;  // dense tensor-core FLOP/s for bf16
  // The SM clock (MHz) at which the part reaches peak_flops_per_s; 0 when
  // the profile does not say. Measurements that record their clock are
  // scaled to it before they are fitted or compared.
  double peak_clock_mhz = 0;
  // Dense FP8 tensor-core FLOP/s; 0 for a part without FP8 tensor cores.
  double peak_fp8_flops_per_s = 0;
  // An FP8 GEMM's plateau efficiency relative to the bf16 curve's e_max, in (0, 1].
  double fp8_gemm_efficiency = 1;
  // Tensor cores that apply per-block scale factors inside the MMA (MXFP8,
  // NVFP4: Blackwell's block-scaled MMA); Hopper has none.
  bool block_scaled_mma = false;
  // An MXFP8 GEMM's plateau efficiency (of the FP8 peak) relative to the
  // bf16 curve's e_max, in (0, 1].
  double mxfp8_gemm_efficiency = 1;
  // Dense FP4 (NVFP4) tensor-core FLOP/s; 0 for a part without FP4.
  double peak_fp4_flops_per_s = 0;
  // An NVFP4 GEMM's plateau efficiency relative to the bf16 curve's e_max, in (0, 1].
  double nvfp4_gemm_efficiency = 1;
  // The GPU's power limit (module or board), watts; 0 when the profile does not say.
  double power_w = 0;
  int64_t memory_bytes = 0;   // HBM capacity per GPU
  double hbm_Bps = 0;         // HBM bandwidth (datasheet), bytes/s
  double mem_efficiency = 1;  // achieved / datasheet HBM bandwidth, in (0, 1]
  // The same for the kernels of one class (gpu.mem_efficiency_by_class.*,
  // kMemEfficiencyClasses below): 0 where the profile gives none, and then
  // mem_efficiency applies.
  struct MemEfficiencyByClass {
    double norm = 0;
    double elementwise = 0;
    double embedding = 0;
    double loss = 0;
    double optimizer = 0;
  } mem_efficiency_by_class;
  EfficiencyCurveParams gemm;  // x_half in FLOPs (2*m*n*k)
  // x_half in keys attended per query (seq, or seq / 2 when causal).
  EfficiencyCurveParams attention_fwd;
  EfficiencyCurveParams attention_bwd;
  // cuDNN's fused attention (Transformer Engine's FusedAttention, SDPA's
  // cuDNN backend) where it was measured apart (gpu.cudnn_attention_*);
  // absent: the flash curves above stand for it.
  std::optional<EfficiencyCurveParams> cudnn_attention_fwd;
  std::optional<EfficiencyCurveParams> cudnn_attention_bwd;
  // Compute time is multiplied by this (>= 1) while communication kernels
  // share the SMs.
  double comm_overlap_slowdown = 1;
  // Sustained / nominal tensor-core clock in training, in (0, 1]: measured
  // or derived from the power limit, never fitted to training runs.
  double sustained_clock = 1;
  // Standard deviation of the log of a GPU's compute speed across parts of
  // one SKU (manufacturing and power-management variability), >= 0.
  double speed_variation = 0;
  // Standard deviation of the log of one compute segment's time on one GPU
  // against its mean, drawn per GPU and per segment (kernel times that move
  // with the power manager's clock), >= 0.
  double segment_jitter = 0;
};

// Each key of gpu.mem_efficiency_by_class and the field it fills, in the
// schema's order: what the profile's reader and writer go through.
struct MemEfficiencyClassKey {
  // The kernel class's name ("norm", ...; workloads/model/transformer_kernels.h).
  std::string_view name;
  double GpuProfile::MemEfficiencyByClass::*field;
  std::string_view kernels;  // what the class's kernels are, for describe-config
};
inline constexpr std::array<MemEfficiencyClassKey, 5> kMemEfficiencyClasses = {{
    {"norm", &GpuProfile::MemEfficiencyByClass::norm,
     "normalisation (RMSNorm, LayerNorm: eager op by op or fused)"},
    {"elementwise", &GpuProfile::MemEfficiencyByClass::elementwise,
     "elementwise (residual adds, activations, rotary, casts, copies)"},
    {"embedding", &GpuProfile::MemEfficiencyByClass::embedding, "embedding lookup and gradient"},
    {"loss", &GpuProfile::MemEfficiencyByClass::loss, "loss (cross-entropy over the logits)"},
    {"optimizer", &GpuProfile::MemEfficiencyByClass::optimizer, "optimizer step (AdamW)"},
}};

// The host side of one GPU (profile section `host`).
struct HostProfile {
  double kernel_launch_us = 0;  // CPU time per eager kernel launch
  double graph_launch_us = 0;   // CPU time per CUDA graph launch (whole graph)
  // Achieved host<->device copy bandwidth / the topology's raw PCIe rate, in (0, 1].
  double pcie_efficiency = 1;
  // CPU AdamW parameters updated per second by one node's host CPU (all its
  // cores; the ranks of a node share it), for optimizer CPU offload.
  double cpu_adam_params_per_s = 0;
  // The system's maximum power (GPUs, CPUs, memory, NICs, switches, fans of a
  // node or rack) over its GPUs, watts; 0 when the profile does not say.
  double system_power_per_gpu_w = 0;
};

struct HardwareProfile {
  std::string name;
  std::string source_file;  // where it was loaded from; empty if built in code
  // The node preset the part comes in (topology/cluster_config.h: the HGX
  // board or NVL72 rack), which a scenario gets when it names none; "" when
  // the profile does not say. node_where: its line in the profile.
  std::string node;
  sim::SourceLocation node_where;

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

  GpuProfile gpu;
  HostProfile host;

  const ProtocolParams& protocol(Protocol p) const { return protocols[static_cast<size_t>(p)]; }
  ProtocolParams& protocol(Protocol p) { return protocols[static_cast<size_t>(p)]; }
};

// The schema of a profile file (for describe-config style docs and tests).
sim::ConfigSchema hardware_profile_schema();

// Loads and validates a profile. Throws sim::ConfigError (file:line:col).
HardwareProfile load_hardware_profile(const std::string& path);
// The same against `schema`: hardware_profile_schema() with keys of other
// files marked foreign (sim::ConfigSchema::add_foreign), so that their
// errors say where they belong.
HardwareProfile load_hardware_profile(const std::string& path, const sim::ConfigSchema& schema);
// The same for text in memory; `path` is what messages name and what an
// `extends` is resolved against.
HardwareProfile parse_hardware_profile(std::string_view text, const std::string& path);

// Declares the scenario's top-level `hardware` key: a shipped profile's bare
// name, or the path of a profile file, relative to the scenario file's
// directory unless absolute.
void add_hardware_keys(sim::ConfigSchema& schema);

// The profile path a scenario means: the shipped profile of a bare name
// (hardware/shipped_profiles.h), else `hardware_value` as written, resolved
// against the directory holding `scenario_path` unless it is absolute.
std::string resolve_hardware_path(const std::string& scenario_path,
                                  const std::string& hardware_value);

}  // namespace clustersim::collectives
