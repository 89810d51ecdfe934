#include "workloads/chakra/replay_template.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "sim/check.h"
#include "sim/sim_time.h"
#include "workloads/chakra/chakra_replay.h"
#include "workloads/model/transformer_kernels.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::workloads::chakra::replay {

namespace {

using collectives::CollectiveOp;
using sim::SimTime;

const std::string& stream_track(int64_t stream) {
  static const std::array<std::string, 128> kNames = [] {
    std::array<std::string, 128> names;
    for (size_t i = 0; i < names.size(); ++i) names[i] = "stream " + std::to_string(i);
    return names;
  }();
  return kNames[static_cast<size_t>(std::clamp<int64_t>(stream, 0, 127))];
}

const std::string& comm_track(size_t slot) {
  static const std::array<std::string, 64> kNames = [] {
    std::array<std::string, 64> names;
    for (size_t i = 0; i < names.size(); ++i) names[i] = "comm " + std::to_string(i);
    return names;
  }();
  return kNames[std::min<size_t>(slot, 63)];
}

bool memory_bound_class(const std::optional<std::string>& cls) {
  if (!cls) return false;
  return *cls == "elementwise" || *cls == "norm" || *cls == "embedding" || *cls == "loss" ||
         *cls == "optimizer";
}

}  // namespace

std::string location(const Trace& trace, int64_t rank) {
  return trace.file.empty() ? "rank " + std::to_string(rank) : trace.file;
}

std::string node_key(uint64_t id) { return "node " + std::to_string(id); }

namespace {

class TemplateBuilder {
 public:
  TemplateBuilder(const Trace& trace, std::string where, int64_t template_count,
                  const GpuComputeSpec& spec, bool recompute, double pcie_Bps,
                  std::span<const int64_t> gather_members, sim::DiagnosticSink& sink)
      : trace_(trace),
        where_(std::move(where)),
        template_count_(template_count),
        spec_(spec),
        recompute_(recompute),
        pcie_Bps_(pcie_Bps),
        gather_members_(gather_members),
        sink_(sink) {}

  Template build() {
    t_.trace = &trace_;
    const size_t n = trace_.nodes.size();
    CLUSTERSIM_CHECK(n < static_cast<size_t>(std::numeric_limits<int32_t>::max()),
                     "a graph of fewer than 2^31 nodes");
    std::vector<std::pair<uint64_t, int32_t>> by_id(n);
    for (size_t i = 0; i < n; ++i) by_id[i] = {trace_.nodes[i].id, static_cast<int32_t>(i)};
    std::sort(by_id.begin(), by_id.end());
    for (size_t i = 1; i < n; ++i) {
      if (by_id[i].first == by_id[i - 1].first) error(by_id[i].first, "duplicate node id");
    }
    t_.slot_names = collective_pg_names(trace_);
    t_.slot_nodes.resize(t_.slot_names.size());
    t_.nodes.resize(n);
    for (size_t i = 0; i < n; ++i) compile_node(i);

    // Successors (CSR), dependencies counted once each.
    std::vector<std::pair<int32_t, int32_t>> edges;  // (pred, succ)
    std::vector<int32_t> preds;
    for (size_t i = 0; i < n; ++i) {
      const Node& node = trace_.nodes[i];
      preds.clear();
      for (const std::vector<uint64_t>* deps : {&node.ctrl_deps, &node.data_deps}) {
        for (const uint64_t d : *deps) {
          const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::make_pair(d, 0));
          if (it == by_id.end() || it->first != d) {
            error(node.id, "depends on node " + std::to_string(d) + ", which the graph lacks");
            continue;
          }
          preds.push_back(it->second);
        }
      }
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      TNode& tn = t_.nodes[i];
      tn.indegree = static_cast<int32_t>(preds.size());
      for (const int32_t p : preds) edges.emplace_back(p, static_cast<int32_t>(i));
      if (preds.empty()) t_.roots.push_back(static_cast<int32_t>(i));
    }
    // Successors in ascending node id: nodes made ready together queue by id.
    std::sort(edges.begin(), edges.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return trace_.nodes[static_cast<size_t>(a.second)].id <
             trace_.nodes[static_cast<size_t>(b.second)].id;
    });
    t_.succs.reserve(edges.size());
    size_t e = 0;
    for (size_t i = 0; i < n; ++i) {
      t_.nodes[i].succ_begin = static_cast<int32_t>(t_.succs.size());
      for (; e < edges.size() && edges[e].first == static_cast<int32_t>(i); ++e) {
        t_.succs.push_back(edges[e].second);
      }
      t_.nodes[i].succ_end = static_cast<int32_t>(t_.succs.size());
    }

    // Collectives by slot and send/recv ordinals, in ascending node id.
    std::map<std::tuple<int, int64_t, int64_t>, int32_t> p2p_count;  // (kind, peer, tag)
    for (const auto& [id, i] : by_id) {
      TNode& tn = t_.nodes[static_cast<size_t>(i)];
      if (tn.kind == Kind::kColl) {
        std::vector<int32_t>& list = t_.slot_nodes[static_cast<size_t>(tn.resource)];
        tn.seq = static_cast<int32_t>(list.size());
        list.push_back(i);
      } else if (tn.kind == Kind::kSend || tn.kind == Kind::kRecv) {
        tn.seq = p2p_count[{static_cast<int>(tn.kind), tn.peer, tn.tag}]++;
      }
    }
    CLUSTERSIM_CHECK(t_.resources.size() < 65536, "fewer than 65536 resources per graph");
    std::sort(t_.roots.begin(), t_.roots.end(), [&](int32_t a, int32_t b) {
      return trace_.nodes[static_cast<size_t>(a)].id < trace_.nodes[static_cast<size_t>(b)].id;
    });
    return std::move(t_);
  }

 private:
  void error(uint64_t id, const std::string& message) {
    sink_.add(sim::SourceLocation{where_, 0, 0}, node_key(id), message);
  }

  int32_t resource(Kind kind, int64_t stream) {
    for (size_t i = 0; i < t_.resources.size(); ++i) {
      if (t_.resources[i].kind == kind && t_.resources[i].stream == stream) {
        return static_cast<int32_t>(i);
      }
    }
    TResource r;
    r.kind = kind;
    r.stream = stream;
    switch (kind) {
      case Kind::kCompute:
        r.track =
            stream <= 0 ? std::string_view("compute") : std::string_view(stream_track(stream));
        t_.compute_resources.push_back(static_cast<int32_t>(t_.resources.size()));
        break;
      case Kind::kHost:
        r.track = stream == kNoStream ? "host" : "cpu";
        break;
      default:
        r.track = stream == kLoads ? "h2d" : stream == kStores ? "d2h" : "pcie";
        break;
    }
    t_.resources.push_back(r);
    return static_cast<int32_t>(t_.resources.size() - 1);
  }

  int64_t non_negative(const Node& node, std::optional<int64_t> value, const char* what) {
    if (value && *value < 0) {
      error(node.id, std::string(what) + " must be >= 0, found " + std::to_string(*value));
      return 0;
    }
    return value.value_or(0);
  }

  int64_t kernel_ns(const Node& node) {
    if (!recompute_ || (!node.num_ops && !node.tensor_size)) return traced_ns(node);
    Kernel k;
    k.name = node.name;
    k.flops = static_cast<double>(non_negative(node, node.num_ops, "num_ops"));
    k.bytes = static_cast<double>(non_negative(node, node.tensor_size, "tensor_size"));
    k.cls = k.flops > 0 && !memory_bound_class(node.kernel_class) ? KernelClass::kGemm
                                                                  : KernelClass::kElementwise;
    return kernel_time(k, spec_).count_ns();
  }

  int64_t traced_ns(const Node& node) {
    const int64_t ns = node.duration_in_ns();
    if (ns < 0) {
      error(node.id, "duration must be >= 0, found " + std::to_string(ns) + " ns");
      return 0;
    }
    return ns;
  }

  int64_t peer(const Node& node, std::optional<int64_t> value, const char* what) {
    if (!value) {
      error(node.id, std::string(node_type_name(node.type)) + " without " + what);
      return 0;
    }
    if (*value < 0 || *value >= template_count_) {
      error(node.id, std::string(what) + " " + std::to_string(*value) +
                         " is not a rank of the traces (0.." + std::to_string(template_count_ - 1) +
                         ")");
      return 0;
    }
    return *value;
  }

  void compile_node(size_t i) {
    const Node& node = trace_.nodes[i];
    TNode& tn = t_.nodes[i];
    tn.id = node.id;
    const auto type = static_cast<NodeType>(node.type);
    switch (type) {
      case NodeType::kMetadata:
        tn.kind = Kind::kMeta;
        break;
      case NodeType::kComp:
        if (node.is_cpu_op) {
          tn.kind = Kind::kHost;
          tn.host_thread = !node.stream.has_value();
          tn.resource = resource(Kind::kHost, node.stream.value_or(kNoStream));
          tn.duration_ns = traced_ns(node);
        } else {
          tn.kind = Kind::kCompute;
          tn.resource = resource(Kind::kCompute, node.stream.value_or(0));
          tn.duration_ns = kernel_ns(node);
          if (node.num_ops) t_.flops += static_cast<double>(std::max<int64_t>(0, *node.num_ops));
        }
        break;
      case NodeType::kMemLoad:
      case NodeType::kMemStore: {
        tn.kind = Kind::kCopy;
        const int64_t fallback = type == NodeType::kMemLoad ? kLoads : kStores;
        tn.resource = resource(Kind::kCopy, node.stream.value_or(fallback));
        tn.bytes = non_negative(node, node.tensor_size, "tensor_size");
        if (tn.bytes > 0 && !(pcie_Bps_ > 0)) {
          error(node.id, "copies " + std::to_string(tn.bytes) +
                             " bytes, but the cluster's GPUs have no PCIe bandwidth");
        } else if (tn.bytes > 0) {
          tn.duration_ns =
              SimTime::from_seconds_rounded(static_cast<double>(tn.bytes) / pcie_Bps_).count_ns();
        }
        break;
      }
      case NodeType::kCommColl:
        compile_collective(node, tn);
        break;
      case NodeType::kCommSend:
      case NodeType::kCommRecv:
        tn.kind = type == NodeType::kCommSend ? Kind::kSend : Kind::kRecv;
        tn.peer = type == NodeType::kCommSend ? peer(node, node.comm_dst, "comm_dst")
                                              : peer(node, node.comm_src, "comm_src");
        tn.tag = node.comm_tag.value_or(0);
        tn.copy_engine = node.copy_engine.value_or(0) != 0;
        tn.stream = node.stream.value_or(-1);
        tn.bytes = non_negative(node, node.comm_size, "comm_size");
        break;
      default:
        error(node.id, std::string("node type ") + node_type_name(node.type) + " (" +
                           std::to_string(node.type) +
                           ") cannot be replayed; expected COMP_NODE, COMM_COLL_NODE, "
                           "COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE or "
                           "METADATA_NODE");
        break;
    }
  }

  void compile_collective(const Node& node, TNode& tn) {
    tn.kind = Kind::kColl;
    const std::string pg = node.pg_name.value_or("");
    const auto slot = std::lower_bound(t_.slot_names.begin(), t_.slot_names.end(), pg);
    tn.resource = static_cast<int32_t>(slot - t_.slot_names.begin());
    if (node.stream && *node.stream >= 0 && *node.stream < kStreamCountWithoutPipeline) {
      const std::string_view name = stream_name(static_cast<Stream>(*node.stream));
      tn.track = name == "copy" ? "pcie" : name;
    } else {
      tn.track = comm_track(static_cast<size_t>(tn.resource));
    }
    if (!node.comm_type) {
      error(node.id, "COMM_COLL_NODE without comm_type");
      return;
    }
    switch (static_cast<CommType>(*node.comm_type)) {
      case CommType::kAllReduce:
        tn.op = CollectiveOp::kAllReduce;
        break;
      case CommType::kAllGather:
        tn.op = CollectiveOp::kAllGather;
        break;
      case CommType::kReduceScatter:
      case CommType::kReduceScatterBlock:
        tn.op = CollectiveOp::kReduceScatter;
        break;
      case CommType::kBroadcast:
        tn.op = CollectiveOp::kBroadcast;
        break;
      case CommType::kBarrier:
        tn.op = CollectiveOp::kAllReduce;
        tn.bytes = 0;
        return;
      case CommType::kReduce:
      case CommType::kGather:
      case CommType::kScatter:
      case CommType::kAllToAll:
        error(node.id, std::string(comm_type_name(static_cast<int32_t>(*node.comm_type))) +
                           " is not modelled by clustersim (all_reduce, all_gather, "
                           "reduce_scatter, broadcast and barrier are)");
        return;
      default:
        error(node.id, "unknown comm_type " + std::to_string(*node.comm_type));
        return;
    }
    if (!node.comm_size) {
      error(node.id, std::string(comm_type_name(static_cast<int32_t>(*node.comm_type))) +
                         " without comm_size");
      return;
    }
    tn.bytes = non_negative(node, node.comm_size, "comm_size");
    if (tn.op == CollectiveOp::kAllGather && !gather_members_.empty()) {
      // Standard form: comm_size is each rank's input; the tuner takes the output.
      std::string problem;
      const std::optional<int64_t> total = all_gather_total(
          node, tn.bytes, gather_members_[static_cast<size_t>(tn.resource)], problem);
      if (!total) return error(node.id, problem);
      tn.bytes = *total;
    }
  }

  static constexpr int64_t kNoStream = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kLoads = -1;
  static constexpr int64_t kStores = -2;

  const Trace& trace_;
  std::string where_;
  int64_t template_count_;
  const GpuComputeSpec& spec_;
  bool recompute_;
  double pcie_Bps_;
  std::span<const int64_t> gather_members_;  // by slot; empty: named form
  sim::DiagnosticSink& sink_;
  Template t_;
};

}  // namespace

Template build_template(const Trace& trace, std::string where, int64_t template_count,
                        const GpuComputeSpec& spec, bool recompute, double pcie_Bps,
                        std::span<const int64_t> gather_members, sim::DiagnosticSink& sink) {
  return TemplateBuilder(trace, std::move(where), template_count, spec, recompute, pcie_Bps,
                         gather_members, sink)
      .build();
}

}  // namespace clustersim::workloads::chakra::replay
