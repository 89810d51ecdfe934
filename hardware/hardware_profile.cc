#include "hardware/hardware_profile.h"

#include <array>
#include <filesystem>
#include <utility>
#include <variant>

#include "config/config_values.h"
#include "config/scenario_loader.h"
#include "hardware/shipped_profiles.h"
#include "topology/cluster_config.h"

namespace clustersim::collectives {

namespace {

using sim::ValueType;

constexpr std::array<const char*, 3> kProtocolKeys = {"ll", "ll128", "simple"};

std::string mem_efficiency_key(std::string_view cls) {
  return "gpu.mem_efficiency_by_class." + std::string(cls);
}

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

// Efficiencies of the compute model: in (0, 1] (0 would make a time infinite).
std::string in_unit_interval(const sim::ConfigValue& value) {
  const double x = std::get<double>(value);
  return x > 0 && x <= 1 ? "" : "a number in (0, 1]";
}

// A spread of log speed: 0.5 already means GPUs 1.6x apart at one sigma.
std::string small_spread(const sim::ConfigValue& value) {
  const double x = std::get<double>(value);
  return x >= 0 && x <= 0.5 ? "" : "a number in [0, 0.5]";
}

std::string known_node(const sim::ConfigValue& value) {
  topology::NodeSpec spec;
  return topology::node_preset(std::get<std::string>(value), spec) ? "" : "a node preset";
}

std::string at_least_one(const sim::ConfigValue& value) {
  return std::get<double>(value) >= 1 ? "" : "a number >= 1";
}

// The shape term of a curve: GEMMs by their smallest dimension, attention by
// its head dimension (see EfficiencyCurveParams).
enum class CurveShape { kGemm, kAttention };

// An optional curve's e_max and x_half are required only together
// (check_optional_curves).
void add_curve(sim::ConfigSchema& s, const std::string& section, const std::string& what,
               const std::string& size_unit, CurveShape shape, bool optional = false) {
  const bool gemm = shape == CurveShape::kGemm;
  s.add_section(section, "Efficiency curve of " + what + ": eff = e_max / (1 + x_half / x" +
                             (gemm ? " + min_dim_half / min(m, n, k))"
                                   : " + head_dim_half / head_dim), causal masks adding "
                                     "causal_x_half to x_half") +
                             ", of the peak FLOP/s.");
  sim::KeySpec& e_max = s.add_key(section + ".e_max", ValueType::kFloat, "Plateau efficiency.")
                            .validated_by(in_unit_interval, "in (0, 1]");
  sim::KeySpec& x_half =
      s.add_key(
           section + ".x_half", ValueType::kFloat,
           "Size at which the efficiency is e_max / 2 (shape terms zero), in " + size_unit + ".")
          .non_negative()
          .in_unit(size_unit);
  if (!optional) {
    e_max.required();
    x_half.required();
  }
  if (gemm) {
    s.add_key(section + ".min_dim_half", ValueType::kFloat,
              "Smallest of m, n, k at which the shape alone halves the efficiency (skinny "
              "GEMMs are bound by streaming their large operand).")
        .default_to(0.0)
        .non_negative()
        .in_unit("elements");
  } else {
    s.add_key(section + ".head_dim_half", ValueType::kFloat,
              "Head dimension at which it alone halves the efficiency.")
        .default_to(0.0)
        .non_negative()
        .in_unit("elements");
    s.add_key(section + ".causal_x_half", ValueType::kFloat,
              "Added to x_half for causal attention (partly masked tiles on the diagonal).")
        .default_to(0.0)
        .non_negative()
        .in_unit(size_unit);
  }
}

EfficiencyCurveParams read_curve(const sim::ConfigValues& v, const std::string& section,
                                 CurveShape shape) {
  EfficiencyCurveParams curve{v.get_float(section + ".e_max"), v.get_float(section + ".x_half")};
  if (shape == CurveShape::kGemm) {
    curve.dim_half = v.get_float(section + ".min_dim_half");
  } else {
    curve.dim_half = v.get_float(section + ".head_dim_half");
    curve.causal_x_half = v.get_float(section + ".causal_x_half");
  }
  return curve;
}

void add_gpu_and_host_keys(sim::ConfigSchema& s) {
  s.add_section("gpu", "The GPU's compute figures (workloads/model/compute_model.h).");
  s.add_key("gpu.curves_fitted_to", ValueType::kString,
            "The `hardware` rows of scenarios/measurements/compute/*.csv the efficiency curves "
            "were fitted to, e.g. H100-SXM (a part without measurements names the part whose "
            "curves it borrows).")
      .required()
      .not_empty();
  // config/units.h has no FLOP/s unit: a plain number in TFLOP/s.
  s.add_key("gpu.peak_tflops", ValueType::kFloat,
            "Dense tensor-core peak for bf16, TFLOP/s (1e12 FLOP/s).")
      .required()
      .positive()
      .in_unit("TFLOP/s");
  s.add_key("gpu.peak_clock_mhz", ValueType::kFloat,
            "The SM clock at which the part reaches peak_tflops (the datasheet's: SMs x dense "
            "FLOP per clock x this clock), MHz; absent when not known. `calibrate` and `validate` "
            "scale microbenchmark rows that record their clock (sm_clock_mhz) to it, and "
            "gpu.sustained_clock is then the training clock over it (optional).")
      .positive()
      .in_unit("MHz");
  s.add_key("gpu.peak_fp8_tflops", ValueType::kFloat,
            "Dense FP8 tensor-core peak, TFLOP/s, for Float8 training (workload.float8); 0 for "
            "a part without FP8 tensor cores (A100).")
      .default_to(0.0)
      .non_negative()
      .in_unit("TFLOP/s");
  s.add_key("gpu.fp8_gemm_efficiency", ValueType::kFloat,
            "An FP8 GEMM's plateau efficiency (of gpu.peak_fp8_tflops) relative to the bf16 "
            "curve's e_max (of peak_tflops); the curve's shape is the bf16 one.")
      .default_to(1.0)
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_key("gpu.block_scaled_mma", ValueType::kBool,
            "Tensor cores that apply a scale factor per block of elements inside the MMA "
            "(Blackwell's block-scaled MMA: MXFP8, MXFP6, MXFP4, NVFP4); recipes mxfp8 and "
            "nvfp4 need it. Hopper and Ampere have none.")
      .default_to(false);
  s.add_key("gpu.mxfp8_gemm_efficiency", ValueType::kFloat,
            "An MXFP8 GEMM's plateau efficiency (of gpu.peak_fp8_tflops) relative to the bf16 "
            "curve's e_max (of peak_tflops); the curve's shape is the bf16 one.")
      .default_to(1.0)
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_key("gpu.peak_fp4_tflops", ValueType::kFloat,
            "Dense FP4 (NVFP4) tensor-core peak, TFLOP/s, for workload.float8.recipe nvfp4; 0 "
            "for a part without FP4 tensor cores.")
      .default_to(0.0)
      .non_negative()
      .in_unit("TFLOP/s");
  s.add_key("gpu.nvfp4_gemm_efficiency", ValueType::kFloat,
            "An NVFP4 GEMM's plateau efficiency (of gpu.peak_fp4_tflops) relative to the bf16 "
            "curve's e_max (of peak_tflops); the curve's shape is the bf16 one.")
      .default_to(1.0)
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_key("gpu.power", ValueType::kFloat,
            "The GPU's power limit (module or board TDP), W: the energy figures of `run` and "
            "`sweep` (tokens per joule at the GPUs' power). Absent: not reported.")
      .positive()
      .in_unit("W");
  s.add_key("gpu.memory", ValueType::kBytes, "HBM capacity per GPU.").required().positive();
  s.add_key("gpu.hbm_bandwidth", ValueType::kBandwidth, "HBM bandwidth (datasheet).")
      .required()
      .positive();
  s.add_key("gpu.mem_efficiency", ValueType::kFloat,
            "Achieved / datasheet HBM bandwidth of streaming kernels (default: a placeholder, "
            "no measurement yet).")
      .default_to(0.90)
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_section("gpu.mem_efficiency_by_class",
                "Achieved / datasheet HBM bandwidth by kernel class (each optional).");
  for (const MemEfficiencyClassKey& c : kMemEfficiencyClasses) {
    s.add_key(mem_efficiency_key(c.name), ValueType::kFloat,
              "Achieved / datasheet HBM bandwidth of the " + std::string(c.kernels) +
                  " kernels (optional; gpu.mem_efficiency when absent). Bytes are counted as "
                  "workloads/model/transformer_kernels.h does: each input read once, each output "
                  "written once; scripts/microbench/memory_kernels.py measures them.")
        .validated_by(in_unit_interval, "in (0, 1]");
  }
  add_curve(s, "gpu.gemm", "GEMMs, by work 2*m*n*k", "FLOPs", CurveShape::kGemm);
  add_curve(s, "gpu.attention_fwd", "attention forward, by keys per query (seq, seq / 2 causal)",
            "keys per query", CurveShape::kAttention);
  add_curve(s, "gpu.attention_bwd", "attention backward, by keys per query (seq, seq / 2 causal)",
            "keys per query", CurveShape::kAttention);
  add_curve(s, "gpu.cudnn_attention_fwd",
            "cuDNN's fused attention forward (workload.attention cudnn; optional: absent, "
            "gpu.attention_fwd stands for it), by keys per query",
            "keys per query", CurveShape::kAttention, /*optional=*/true);
  add_curve(s, "gpu.cudnn_attention_bwd",
            "cuDNN's fused attention backward (optional, with gpu.cudnn_attention_fwd), by keys "
            "per query",
            "keys per query", CurveShape::kAttention, /*optional=*/true);
  s.add_key("gpu.sustained_clock", ValueType::kFloat,
            "Sustained / nominal tensor-core clock in training (power or thermal caps), "
            "scaling the FLOP roofline of every kernel; MFU stays relative to peak_tflops. "
            "Measured on the part (or derived from its power limit), never fitted to training "
            "runs: what a software stack does is its own (workload.stack_efficiency).")
      .default_to(1.0)
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_foreign("gpu.sustained_clock_fitted_to",
                "named the training runs a clock was once fitted to: a part's clock is measured "
                "now (leave the key out), and what a software stack does is fitted to its runs "
                "(workload.stack_efficiency_fitted_to in its stack profile, docs/stacks.md)");
  s.add_key("gpu.speed_variation", ValueType::kFloat,
            "Standard deviation of log compute speed across GPUs of this part (manufacturing "
            "and power-management variability): each rank's kernels run exp(N(0, sd)) times "
            "as long as the median GPU's, drawn from the scenario's seed; 0 = identical GPUs.")
      .default_to(0.0)
      .validated_by(small_spread, "in [0, 0.5]");
  s.add_key("gpu.segment_jitter", ValueType::kFloat,
            "Standard deviation of log time of each compute segment (a run of back-to-back "
            "kernels) on each GPU, drawn per GPU and per segment from the scenario's seed: "
            "kernel times that move as the power manager moves the clock. Every "
            "synchronising collective waits for its slowest member, so it costs more in "
            "larger groups (run's \"sync wait\"); 0 = steady kernels.")
      .default_to(0.0)
      .validated_by(small_spread, "in [0, 0.5]");
  s.add_key("gpu.comm_overlap_slowdown", ValueType::kFloat,
            "Factor on compute time while communication kernels share the SMs (default: a "
            "placeholder in the 1.05-1.15 range reports suggest).")
      .default_to(1.10)
      .validated_by(at_least_one, ">= 1");

  s.add_section("host", "The host side of one GPU: launches, PCIe copies, CPU optimizer.");
  s.add_key("host.kernel_launch", ValueType::kDuration, "CPU time per eager kernel launch.")
      .default_to(sim::SimTime::us(10))
      .positive()
      .in_unit("us");
  s.add_key("host.graph_launch", ValueType::kDuration,
            "CPU time per CUDA graph launch (the whole graph).")
      .default_to(sim::SimTime::us(8))
      .positive()
      .in_unit("us");
  s.add_key("host.pcie_efficiency", ValueType::kFloat,
            "Achieved host<->device copy bandwidth / the topology's raw PCIe rate.")
      .required()
      .validated_by(in_unit_interval, "in (0, 1]");
  s.add_key("host.cpu_adam_params_per_s", ValueType::kFloat,
            "CPU AdamW parameters updated per second by one node's host CPU (all cores, shared "
            "by the node's ranks), for optimizer CPU offload.")
      .default_to(1.41e9)
      .positive()
      .in_unit("params/s");
  s.add_key("host.system_power", ValueType::kFloat,
            "The whole system's maximum power (GPUs, CPUs, memory, NICs, switches, fans of a node "
            "or rack, the vendor's system figure) over its GPUs, W per GPU: tokens per joule at "
            "the system's power. Absent: not reported.")
      .positive()
      .in_unit("W");
}

// The cuDNN attention curves come as a pair, each with its e_max and
// x_half, or not at all.
void check_optional_curves(const sim::ConfigValues& v) {
  const std::array<std::string, 4> keys = {
      "gpu.cudnn_attention_fwd.e_max", "gpu.cudnn_attention_fwd.x_half",
      "gpu.cudnn_attention_bwd.e_max", "gpu.cudnn_attention_bwd.x_half"};
  const std::string* given = nullptr;
  for (const std::string& key : keys) given = v.has(key) && given == nullptr ? &key : given;
  if (given == nullptr) return;
  sim::DiagnosticSink sink;
  for (const std::string& key : keys) {
    if (!v.has(key)) {
      sink.add(v.where(*given), key,
               "expected a value with " + *given +
                   " (cuDNN's attention curves come whole: e_max and x_half, forward and "
                   "backward), found nothing");
    }
  }
  sink.throw_if_any();
}

GpuProfile read_gpu(const sim::ConfigValues& v) {
  GpuProfile g;
  g.curves_fitted_to = v.get_string("gpu.curves_fitted_to");
  g.peak_flops_per_s = v.get_float("gpu.peak_tflops") * 1e12;
  if (v.has("gpu.peak_clock_mhz")) g.peak_clock_mhz = v.get_float("gpu.peak_clock_mhz");
  g.peak_fp8_flops_per_s = v.get_float("gpu.peak_fp8_tflops") * 1e12;
  g.fp8_gemm_efficiency = v.get_float("gpu.fp8_gemm_efficiency");
  g.block_scaled_mma = v.get_bool("gpu.block_scaled_mma");
  g.mxfp8_gemm_efficiency = v.get_float("gpu.mxfp8_gemm_efficiency");
  g.peak_fp4_flops_per_s = v.get_float("gpu.peak_fp4_tflops") * 1e12;
  g.nvfp4_gemm_efficiency = v.get_float("gpu.nvfp4_gemm_efficiency");
  if (v.has("gpu.power")) g.power_w = v.get_float("gpu.power");
  g.memory_bytes = v.get_bytes("gpu.memory");
  g.hbm_Bps = v.get_bandwidth_Bps("gpu.hbm_bandwidth");
  g.mem_efficiency = v.get_float("gpu.mem_efficiency");
  for (const MemEfficiencyClassKey& c : kMemEfficiencyClasses) {
    const std::string key = mem_efficiency_key(c.name);
    if (v.has(key)) g.mem_efficiency_by_class.*c.field = v.get_float(key);
  }
  g.gemm = read_curve(v, "gpu.gemm", CurveShape::kGemm);
  g.attention_fwd = read_curve(v, "gpu.attention_fwd", CurveShape::kAttention);
  g.attention_bwd = read_curve(v, "gpu.attention_bwd", CurveShape::kAttention);
  if (v.has("gpu.cudnn_attention_fwd.e_max")) {
    g.cudnn_attention_fwd = read_curve(v, "gpu.cudnn_attention_fwd", CurveShape::kAttention);
    g.cudnn_attention_bwd = read_curve(v, "gpu.cudnn_attention_bwd", CurveShape::kAttention);
  }
  g.comm_overlap_slowdown = v.get_float("gpu.comm_overlap_slowdown");
  g.sustained_clock = v.get_float("gpu.sustained_clock");
  g.speed_variation = v.get_float("gpu.speed_variation");
  g.segment_jitter = v.get_float("gpu.segment_jitter");
  return g;
}

HostProfile read_host(const sim::ConfigValues& v) {
  HostProfile h;
  h.kernel_launch_us = us(v, "host.kernel_launch");
  h.graph_launch_us = us(v, "host.graph_launch");
  h.pcie_efficiency = v.get_float("host.pcie_efficiency");
  h.cpu_adam_params_per_s = v.get_float("host.cpu_adam_params_per_s");
  if (v.has("host.system_power")) h.system_power_per_gpu_w = v.get_float("host.system_power");
  return h;
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
  // h200.yaml says only what differs from h100.yaml.
  sim::add_extends_key(s);
  s.add_key("node", ValueType::kString,
            "The node preset this part comes in (hgx_h100, hgx_b200, gb200_nvl72, ...: "
            "cluster.node's presets): a scenario that does not set cluster.node gets it, so "
            "that sweeping the hardware key moves the job to each part's own node.")
      .validated_by(known_node, "a node preset of cluster.node");
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
  add_gpu_and_host_keys(s);
  return s;
}

namespace {

HardwareProfile profile_from_values(const sim::ConfigValues& v, const std::string& path);

}  // namespace

HardwareProfile load_hardware_profile(const std::string& path) {
  return profile_from_values(sim::load_scenario_file(path, hardware_profile_schema()), path);
}

HardwareProfile load_hardware_profile(const std::string& path, const sim::ConfigSchema& schema) {
  return profile_from_values(sim::load_scenario_file(path, schema), path);
}

HardwareProfile parse_hardware_profile(std::string_view text, const std::string& path) {
  return profile_from_values(sim::load_scenario_text(text, path, hardware_profile_schema()), path);
}

namespace {

HardwareProfile profile_from_values(const sim::ConfigValues& v, const std::string& path) {
  HardwareProfile p;
  p.name = v.get_string("name");
  p.source_file = path;
  if (v.has("node")) {
    p.node = v.get_string("node");
    p.node_where = v.where("node");
  }
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
  check_optional_curves(v);
  p.gpu = read_gpu(v);
  p.host = read_host(v);
  return p;
}

}  // namespace

void add_hardware_keys(sim::ConfigSchema& schema) {
  schema
      .add_key(
          "hardware", ValueType::kString,
          "Hardware profile (collective cost constants, GPU compute figures, host costs): a "
          "shipped profile by its bare name (h100, h100_96gb_500w, h200, a100, ...: the files of "
          "scenarios/hardware/), or the path of a YAML profile, relative to the scenario file's "
          "directory unless absolute (e.g. mine.yaml, ../hardware/h100.yaml). A profile may start "
          "from another with its own top-level `extends: <file>` (relative to the profile's "
          "directory): that profile is read first, then this one's keys override it key by key "
          "(mappings merge, a scalar or a list replaces). topo alone does without it.")
      .not_empty()
      .required_by(
          "run, sweep, campaign (without campaign.step_time), collective, validate, calibrate, "
          "replay, export-chakra, kernels");
}

std::string resolve_hardware_path(const std::string& scenario_path,
                                  const std::string& hardware_value) {
  return resolve_named_file(scenario_path, hardware_value, shipped_profiles_dir());
}

}  // namespace clustersim::collectives
