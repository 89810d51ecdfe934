#include "topology/cluster_config.h"

#include <array>
#include <string>
#include <vector>

#include "config/config_error.h"

namespace clustersim::topology {

namespace {

constexpr double kGBps = 1e9;      // GB/s = 1e9 B/s (data/README.md convention)
constexpr double kGbps = 1e9 / 8;  // a line rate of 1 Gb/s in bytes per second

struct Preset {
  std::string_view name;
  NodeSpec node;
};

// Figures from the NVIDIA datasheet of each part (leads, not measurements).
// NVLink per GPU there is the bidirectional total; we store half of it (per
// direction).
const std::array<Preset, 7>& presets() {
  static const std::array<Preset, 7> kPresets = {{
      // H100 SXM5: NVLink4 900 GB/s bidirectional (18 links) -> 450 GB/s each
      // way; one ConnectX-7 400 Gb/s NIC per GPU (DGX H100); PCIe Gen5 x16,
      // 64 GB/s nominal per direction (nvbandwidth measures ~51-52 GB/s H2D).
      {"hgx_h100", {"hgx_h100", 8, 450 * kGBps, 8, 400 * kGbps, 64 * kGBps}},
      // H200 SXM: same NVLink4 and NICs as H100 (datasheet "as H100").
      {"hgx_h200", {"hgx_h200", 8, 450 * kGBps, 8, 400 * kGbps, 64 * kGBps}},
      // H800 SXM (the export H100): NVLink4 cut to 8 links, 400 GB/s
      // bidirectional -> 200 GB/s each way; DeepSeek-V3's cluster (arXiv
      // 2412.19437, sec. 3.2.2: "NVLink offers a bandwidth of 160 GB/s,
      // roughly 3.2 times that of IB (50 GB/s)", achieved figures) has one
      // 400 Gb/s InfiniBand NIC per GPU; PCIe Gen5 as H100.
      {"hgx_h800", {"hgx_h800", 8, 200 * kGBps, 8, 400 * kGbps, 64 * kGBps}},
      // A100 SXM4: NVLink3 600 GB/s bidirectional (12 links) -> 300 GB/s;
      // ConnectX-6 200 Gb/s per GPU (DGX A100); PCIe Gen4 x16, 32 GB/s nominal.
      {"hgx_a100", {"hgx_a100", 8, 300 * kGBps, 8, 200 * kGbps, 32 * kGBps}},
      // B200 (DGX/HGX B200): NVLink 5, 1.8 TB/s bidirectional per GPU (18
      // links) -> 900 GB/s each way; eight ConnectX-7 400 Gb/s NICs (DGX B200
      // datasheet); PCIe Gen5 x16, 64 GB/s nominal per direction.
      {"hgx_b200", {"hgx_b200", 8, 900 * kGBps, 8, 400 * kGbps, 64 * kGBps}},
      // GB200 NVL72: 72 B200-class GPUs in one NVLink5 domain, 1800 GB/s
      // bidirectional -> 900 GB/s each way; one 400 Gb/s NIC per GPU (the low
      // end of the datasheet's 400-800 Gb/s). The host link is NVLink-C2C to
      // the Grace CPU, 900 GB/s bidirectional per superchip of two GPUs ->
      // 225 GB/s per GPU each way (the NIC, not this link, bounds a GPU's
      // scale-out traffic).
      {"gb200_nvl72", {"gb200_nvl72", 72, 900 * kGBps, 72, 400 * kGbps, 225 * kGBps}},
      // GB300 NVL72: 72 Blackwell Ultra GPUs in one NVLink5 domain (900 GB/s
      // each way); one ConnectX-8 SuperNIC per GPU at 800 Gb/s (GB300 NVL72
      // datasheet); NVLink-C2C to Grace as in GB200.
      {"gb300_nvl72", {"gb300_nvl72", 72, 900 * kGBps, 72, 800 * kGbps, 225 * kGBps}},
  }};
  return kPresets;
}

std::vector<std::string> node_choices() {
  std::vector<std::string> names;
  for (const Preset& p : presets()) names.emplace_back(p.name);
  names.emplace_back("custom");
  return names;
}

std::string at_least_one(const sim::ConfigValue& v) {
  const double x = std::get<double>(v);
  return x >= 1.0 ? "" : "a number >= 1";
}

std::string even_radix(const sim::ConfigValue& v) {
  const int64_t x = std::get<int64_t>(v);
  return (x >= 2 && x % 2 == 0 && x <= 4096) ? "" : "an even integer in [2, 4096]";
}

constexpr std::array<std::string_view, 5> kCustomKeys = {
    "gpus_per_node", "nvlink_bandwidth", "nics_per_node", "nic_bandwidth", "pcie_bandwidth"};

std::string custom_path(std::string_view key) { return "cluster.custom_node." + std::string(key); }

}  // namespace

std::string_view fabric_type_name(FabricType type) {
  switch (type) {
    case FabricType::kRailOptimized:
      return "rail_optimized";
    case FabricType::kFatTree:
      return "fat_tree";
    case FabricType::kSingleSwitch:
      return "single_switch";
  }
  return "?";
}

bool node_preset(std::string_view name, NodeSpec& out) {
  for (const Preset& p : presets()) {
    if (p.name == name) {
      out = p.node;
      return true;
    }
  }
  return false;
}

int64_t endpoints_per_tree(const ClusterSpec& spec) {
  return spec.fabric.type == FabricType::kRailOptimized ? spec.nodes
                                                        : spec.nodes * spec.node.nics_per_node;
}

int fabric_tiers(FabricType type, int64_t endpoints, int64_t radix) {
  const int64_t half = radix / 2;
  if (endpoints <= radix) return 1;
  if (type == FabricType::kSingleSwitch) return 0;
  if (endpoints <= radix * half) return 2;
  if (endpoints <= radix * half * half) return 3;
  return 0;
}

void add_cluster_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section("cluster", "The GPU cluster: nodes and the network between them.");
  schema
      .add_key("cluster.nodes", ValueType::kInt,
               "Number of nodes (NVLink domains); or give cluster.gpus instead.")
      .positive()
      .required_by(
          "run, sweep, campaign, topo, collective, validate, calibrate, replay, export-chakra, "
          "kernels");
  schema
      .add_key("cluster.node", ValueType::kEnum,
               "Node preset (figures from vendor datasheets), or custom (see cluster.custom_node).")
      .one_of(node_choices())
      .default_to(std::string("hgx_h100"));

  schema
      .add_key("cluster.gpus", ValueType::kInt,
               "The job's GPUs, instead of cluster.nodes: the fewest nodes that hold them evenly, "
               "each running gpus / nodes of its GPUs (cluster.gpus_used_per_node), so one "
               "scenario keeps its job size across node presets (256 GPUs: 32 HGX nodes of 8, "
               "or 4 NVL72 racks of 64 of their 72).")
      .positive();
  schema
      .add_key("cluster.gpus_used_per_node", ValueType::kInt,
               "GPUs of each node (NVLink domain) the job runs on, the rest left idle: jobs on "
               "NVL72 racks often use 64 of the 72 GPUs and keep 8 as spares, and a job smaller "
               "than a domain uses part of one. Their NICs go with them (the node's NICs per GPU "
               "are kept). Default: every GPU of the node.")
      .positive();
  schema.add_section("cluster.custom_node",
                     "The node when cluster.node is custom (all keys needed).");
  schema
      .add_key("cluster.custom_node.gpus_per_node", ValueType::kInt, "GPUs in the NVSwitch domain.")
      .positive();
  schema
      .add_key("cluster.custom_node.nvlink_bandwidth", ValueType::kBandwidth,
               "NVLink bandwidth per GPU per direction (half the vendor's bidirectional figure).")
      .positive();
  schema
      .add_key("cluster.custom_node.nics_per_node", ValueType::kInt,
               "Network NICs per node; must divide gpus_per_node (NIC i serves GPUs i*g/n..).")
      .positive();
  schema
      .add_key("cluster.custom_node.nic_bandwidth", ValueType::kBandwidth,
               "Line rate of one NIC per direction (400Gbps = 50GB/s).")
      .positive();
  schema
      .add_key("cluster.custom_node.pcie_bandwidth", ValueType::kBandwidth,
               "PCIe bandwidth per GPU per direction (GPU<->NIC and GPU<->host).")
      .positive();

  schema.add_section("cluster.fabric", "The scale-out network between nodes' NICs.");
  schema
      .add_key("cluster.fabric.type", ValueType::kEnum,
               "rail_optimized: one switch tree per NIC index (rail); fat_tree: one tree for all "
               "NICs; single_switch: one switch.")
      .one_of({"rail_optimized", "fat_tree", "single_switch"})
      .default_to(std::string("rail_optimized"));
  schema.add_key("cluster.fabric.switch_radix", ValueType::kInt, "Ports per switch.")
      .default_to(int64_t{64})
      .validated_by(even_radix, "even, 2..4096");
  schema
      .add_key("cluster.fabric.leaf_oversubscription", ValueType::kFloat,
               "Leaf downlink : uplink capacity (1 = non-blocking); divides each uplink's "
               "bandwidth.")
      .default_to(1.0)
      .validated_by(at_least_one, ">= 1");
  schema
      .add_key("cluster.fabric.spine_oversubscription", ValueType::kFloat,
               "Spine downlink : uplink capacity (1 = non-blocking); used with 3 tiers.")
      .default_to(1.0)
      .validated_by(at_least_one, ">= 1");
  schema
      .add_key("cluster.fabric.planes", ValueType::kInt,
               "Copies of the fabric; each NIC splits its line rate over one port per plane.")
      .default_to(int64_t{1})
      .positive();

  schema.add_section("cluster.latency", "Per-link latencies (placeholders until calibrated).");
  // 300 ns: two NVLink links per GPU-to-GPU hop match NCCL's 0.6 us LL
  // NVLink per-hop latency (data/README.md, tuning.cc).
  schema.add_key("cluster.latency.nvlink", ValueType::kDuration, "GPU<->NVSwitch link.")
      .default_to(sim::SimTime::ns(300))
      .non_negative();
  schema.add_key("cluster.latency.pcie", ValueType::kDuration, "GPU<->NIC and GPU<->host link.")
      .default_to(sim::SimTime::ns(500))
      .non_negative();
  schema
      .add_key("cluster.latency.network", ValueType::kDuration,
               "NIC<->switch and switch<->switch link, including the switch it enters.")
      .default_to(sim::SimTime::ns(500))
      .non_negative();
}

std::string_view job_size_key(const sim::ConfigValues& values) {
  return values.has("cluster.gpus") ? "cluster.gpus" : "cluster.nodes";
}

ClusterSpec read_cluster_spec(const sim::ConfigValues& values) {
  sim::DiagnosticSink sink;
  ClusterSpec spec;
  const bool by_gpus = values.has("cluster.gpus");
  if (!values.has("cluster.nodes") && !by_gpus) {
    sim::SourceLocation file_only{values.file(), 0, 0};
    sink.add(file_only, "cluster.nodes",
             "expected a positive integer, or cluster.gpus (this command needs a cluster), found "
             "nothing");
    sink.throw_if_any();
  }
  if (values.has("cluster.nodes") && by_gpus) {
    sink.add(values.where("cluster.gpus"), "cluster.gpus",
             "expected either cluster.gpus or cluster.nodes (the one follows from the other), "
             "found both");
    sink.throw_if_any();
  }
  spec.nodes = by_gpus ? 0 : values.get_int("cluster.nodes");

  const std::string& preset = values.get_string("cluster.node");
  if (preset == "custom") {
    bool complete = true;
    for (std::string_view key : kCustomKeys) {
      if (!values.has(custom_path(key))) {
        sink.add(values.where("cluster.node"), custom_path(key),
                 "expected a value because cluster.node is 'custom', found nothing");
        complete = false;
      }
    }
    if (complete) {
      spec.node.preset = "custom";
      spec.node.gpus_per_node = values.get_int("cluster.custom_node.gpus_per_node");
      spec.node.nvlink_Bps = values.get_bandwidth_Bps("cluster.custom_node.nvlink_bandwidth");
      spec.node.nics_per_node = values.get_int("cluster.custom_node.nics_per_node");
      spec.node.nic_Bps = values.get_bandwidth_Bps("cluster.custom_node.nic_bandwidth");
      spec.node.pcie_Bps = values.get_bandwidth_Bps("cluster.custom_node.pcie_bandwidth");
      if (spec.node.gpus_per_node % spec.node.nics_per_node != 0) {
        sink.add(values.where("cluster.custom_node.nics_per_node"),
                 "cluster.custom_node.nics_per_node",
                 "expected a divisor of gpus_per_node (" + std::to_string(spec.node.gpus_per_node) +
                     "), found " + std::to_string(spec.node.nics_per_node));
      }
    }
  } else {
    node_preset(preset, spec.node);
    for (std::string_view key : kCustomKeys) {
      if (values.has(custom_path(key))) {
        sink.add(values.where(custom_path(key)), custom_path(key),
                 "expected no custom_node keys unless cluster.node is 'custom', found one with "
                 "cluster.node '" +
                     preset + "'");
      }
    }
  }

  if (by_gpus && spec.node.gpus_per_node > 0) {
    if (values.has("cluster.gpus_used_per_node")) {
      sink.add(values.where("cluster.gpus_used_per_node"), "cluster.gpus_used_per_node",
               "expected no value with cluster.gpus (it follows from the GPUs and the node), "
               "found " +
                   std::to_string(values.get_int("cluster.gpus_used_per_node")));
    }
    const int64_t gpus = values.get_int("cluster.gpus");
    if (gpus > kMaxClusterGpus) {
      sink.add(values.where("cluster.gpus"), "cluster.gpus",
               "expected at most " + std::to_string(kMaxClusterGpus) + " GPUs in all, found " +
                   std::to_string(gpus));
      sink.throw_if_any();
    }
    const int64_t per_node = spec.node.gpus_per_node;
    const int64_t nics = spec.node.nics_per_node;
    // The fewest nodes whose equal shares of the job fit a node and keep its
    // NICs per GPU.
    for (int64_t n = (gpus + per_node - 1) / per_node; n <= gpus; ++n) {
      if (gpus % n != 0 || (gpus / n) * nics % per_node != 0) continue;
      spec.nodes = n;
      spec.node.gpus_per_node = gpus / n;
      spec.node.nics_per_node = gpus / n * nics / per_node;
      break;
    }
    if (spec.nodes == 0) {
      sink.add(values.where("cluster.gpus"), "cluster.gpus",
               "expected GPUs that nodes of " + std::to_string(per_node) + " GPUs and " +
                   std::to_string(nics) + " NICs hold evenly, found " + std::to_string(gpus));
    }
    sink.throw_if_any();
  } else if (values.has("cluster.gpus_used_per_node") && spec.node.gpus_per_node > 0) {
    const int64_t used = values.get_int("cluster.gpus_used_per_node");
    const int64_t gpus = spec.node.gpus_per_node;
    const int64_t nics = spec.node.nics_per_node;
    if (used > gpus || (used * nics) % gpus != 0) {
      sink.add(values.where("cluster.gpus_used_per_node"), "cluster.gpus_used_per_node",
               "expected at most the node's " + std::to_string(gpus) + " GPUs" +
                   (nics == gpus ? std::string()
                                 : " and a multiple of its GPUs per NIC (" +
                                       std::to_string(gpus / nics) + ")") +
                   ", found " + std::to_string(used));
    } else {
      spec.node.gpus_per_node = used;
      spec.node.nics_per_node = used * nics / gpus;
    }
  }

  const std::string& type = values.get_string("cluster.fabric.type");
  spec.fabric.type = type == "fat_tree"        ? FabricType::kFatTree
                     : type == "single_switch" ? FabricType::kSingleSwitch
                                               : FabricType::kRailOptimized;
  spec.fabric.switch_radix = values.get_int("cluster.fabric.switch_radix");
  spec.fabric.leaf_oversubscription = values.get_float("cluster.fabric.leaf_oversubscription");
  spec.fabric.spine_oversubscription = values.get_float("cluster.fabric.spine_oversubscription");
  spec.fabric.planes = values.get_int("cluster.fabric.planes");
  spec.latency.nvlink = values.get_duration("cluster.latency.nvlink");
  spec.latency.pcie = values.get_duration("cluster.latency.pcie");
  spec.latency.network = values.get_duration("cluster.latency.network");
  sink.throw_if_any();

  // Size checks need a complete node.
  const int64_t radix = spec.fabric.switch_radix;
  const int64_t gpus = spec.nodes * spec.node.gpus_per_node;
  if (spec.nodes > kMaxClusterGpus || gpus > kMaxClusterGpus) {
    sink.add(values.where(job_size_key(values)), std::string(job_size_key(values)),
             "expected at most " + std::to_string(kMaxClusterGpus) + " GPUs in all, found " +
                 std::to_string(spec.nodes) + " nodes of " +
                 std::to_string(spec.node.gpus_per_node) + " GPUs");
    sink.throw_if_any();
  }
  const int64_t endpoints = endpoints_per_tree(spec);
  if (fabric_tiers(spec.fabric.type, endpoints, radix) == 0) {
    const bool single = spec.fabric.type == FabricType::kSingleSwitch;
    const int64_t capacity = single ? radix : radix * (radix / 2) * (radix / 2);
    const std::string per =
        spec.fabric.type == FabricType::kRailOptimized ? "NICs per rail" : "NICs";
    const std::string fabric = single ? "one radix-" + std::to_string(radix) + " switch"
                                      : "3 tiers of radix-" + std::to_string(radix) + " switches";
    sink.add(values.where(job_size_key(values)), std::string(job_size_key(values)),
             "expected at most " + std::to_string(capacity) + " " + per + " (" + fabric +
                 "), found " + std::to_string(endpoints) +
                 " (raise cluster.fabric.switch_radix or change cluster.fabric.type)");
  }
  sink.throw_if_any();
  return spec;
}

}  // namespace clustersim::topology
