#include "chakra/chakra_replay.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "collectives/collective_cost.h"
#include "collectives/group_collectives.h"
#include "sim/check.h"
#include "config/config_error.h"
#include "sim/simulator.h"
#include "chakra/chakra_scale.h"
#include "exec/flow_transfers.h"
#include "exec/step_accounts.h"
#include "model/transformer_kernels.h"

namespace clustersim::workloads::chakra {

namespace {

using collectives::CollectiveOp;
using sim::SimTime;

using namespace step_accounts;  // NOLINT: the step simulator's accounts

// What a node's completion means to the kernels waiting for it. A gap in
// compute is charged to `account` until `end_ns` (the part before
// `group_start_ns` to sync wait), the rest of it to launch_bound (the host).
struct Cause {
  Account account = kIdle;
  bool host = false;  // host-thread work: a later non-host cause takes precedence
  int64_t group_start_ns = 0;
  int64_t end_ns = 0;
};

// ---- Compiled graphs ----

// Dependency counters of a rank are 15 bits (the 16th marks a cause kept for
// the node); nodes with more dependencies count in a hash table instead.
constexpr int32_t kMaxDense = 0x7fff;
constexpr uint16_t kCauseKept = 0x8000;

enum class Kind : uint8_t { kMeta, kCompute, kHost, kCopy, kColl, kSend, kRecv };

struct TNode {
  uint64_t id = 0;
  Kind kind = Kind::kMeta;
  CollectiveOp op = CollectiveOp::kAllReduce;
  bool host_thread = false;  // kHost without a stream
  int32_t resource = 0;      // kCompute, kHost, kCopy: the template's resource; kColl: slot
  int32_t indegree = 0;
  // Nodes with 2 .. kMaxDense dependencies: index of their counter among the
  // rank's counters (-1 otherwise).
  int32_t counter = -1;
  int32_t succ_begin = 0;
  int32_t succ_end = 0;
  int32_t seq = 0;          // kColl: position in its slot; kSend/kRecv: among the same (peer, tag)
  int64_t duration_ns = 0;  // kCompute, kHost, kCopy
  int64_t bytes = 0;        // kColl, kSend, kRecv, kCopy
  int64_t peer = 0;         // kSend, kRecv: the graph's peer rank
  int64_t tag = 0;
  std::string_view track;  // kColl: where traces show it
};

struct TResource {
  Kind kind = Kind::kCompute;
  int64_t stream = 0;
  std::string_view track;
};

struct Template {
  const Trace* trace = nullptr;
  std::vector<TNode> nodes;
  std::vector<int32_t> succs;
  std::vector<int32_t> roots;
  std::vector<TResource> resources;
  std::vector<int32_t> compute_resources;
  int32_t counters = 0;  // nodes with a dense dependency counter
  std::vector<std::string> slot_names;
  std::vector<std::vector<int32_t>> slot_nodes;  // by slot, in ascending id
  double flops = 0;                              // num_ops of GPU kernels
};

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

std::string location(const Trace& trace, int64_t rank) {
  return trace.file.empty() ? "rank " + std::to_string(rank) : trace.file;
}

std::string node_key(uint64_t id) { return "node " + std::to_string(id); }

class TemplateBuilder {
 public:
  TemplateBuilder(const Trace& trace, int64_t index, int64_t template_count,
                  const GpuComputeSpec& spec, bool recompute, double pcie_Bps,
                  sim::DiagnosticSink& sink)
      : trace_(trace),
        index_(index),
        template_count_(template_count),
        spec_(spec),
        recompute_(recompute),
        pcie_Bps_(pcie_Bps),
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
      if (tn.indegree >= 2 && tn.indegree <= kMaxDense) tn.counter = t_.counters++;
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
    sink_.add(sim::SourceLocation{location(trace_, index_), 0, 0}, node_key(id), message);
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
    if (node.stream && *node.stream >= 0 && *node.stream < kStreamCount) {
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
  }

  static constexpr int64_t kNoStream = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kLoads = -1;
  static constexpr int64_t kStores = -2;

  const Trace& trace_;
  int64_t index_;
  int64_t template_count_;
  const GpuComputeSpec& spec_;
  bool recompute_;
  double pcie_Bps_;
  sim::DiagnosticSink& sink_;
  Template t_;
};

// ---- Flat hash of the dependencies still missing for partly ready nodes ----

struct Pending {
  uint64_t key = kEmpty;
  int32_t remaining = 0;
  Account account = kIdle;  // the latest non-host cause so far (has_cause)
  bool has_cause = false;
  int64_t group_start_ns = 0;
  int64_t end_ns = 0;
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
};

// Open addressing with linear probing and backward-shift deletion: only the
// frontier of each rank's graph is stored, so N ranks of a large graph cost
// what their partly ready nodes cost, not N copies of the graph.
class PendingTable {
 public:
  PendingTable() { slots_.resize(1024); }

  // The entry of `key`, inserted with `indegree` missing if absent.
  Pending& find_or_insert(uint64_t key, int32_t indegree) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = home(key);
    while (slots_[i].key != Pending::kEmpty) {
      if (slots_[i].key == key) return slots_[i];
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = Pending{};
    slots_[i].key = key;
    slots_[i].remaining = indegree;
    ++size_;
    return slots_[i];
  }

  Pending* find(uint64_t key) {
    size_t i = home(key);
    while (slots_[i].key != Pending::kEmpty) {
      if (slots_[i].key == key) return &slots_[i];
      i = (i + 1) & (slots_.size() - 1);
    }
    return nullptr;
  }

  void erase(Pending& entry) {
    size_t hole = static_cast<size_t>(&entry - slots_.data());
    const size_t mask = slots_.size() - 1;
    size_t i = hole;
    while (true) {
      i = (i + 1) & mask;
      if (slots_[i].key == Pending::kEmpty) break;
      const size_t h = home(slots_[i].key);
      // Move entry i into the hole unless its home lies cyclically in (hole, i].
      const bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
      if (!stays) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Pending{};
    --size_;
  }

  // Every entry, sorted by key (for reports).
  std::vector<Pending> entries() const {
    std::vector<Pending> out;
    for (const Pending& p : slots_) {
      if (p.key != Pending::kEmpty) out.push_back(p);
    }
    std::sort(out.begin(), out.end(),
              [](const Pending& a, const Pending& b) { return a.key < b.key; });
    return out;
  }

 private:
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  void grow() {
    std::vector<Pending> old = std::move(slots_);
    slots_.assign(old.size() * 2, Pending{});
    --shift_;
    size_ = 0;
    for (const Pending& p : old) {
      if (p.key == Pending::kEmpty) continue;
      Pending& e = find_or_insert(p.key, p.remaining);
      e = p;
    }
  }

  std::vector<Pending> slots_;
  size_t size_ = 0;
  int shift_ = 64 - 10;
};

// ---- Runtime state ----

// Zeroed uint16_t counters, on transparent huge pages where Linux offers
// them (THP "madvise" mode): with 16,384 ranks of an 8k-node graph the
// counters span ~130 MiB, visited rank after rank, and the counter load was
// the hottest instruction of the replay (perf); 2 MiB pages cut its TLB
// misses (--scale-to 16384 of the 8B FSDP export: ~25.6 s -> ~22 s). The
// contents, and so the results, do not depend on the page size.
class CounterArray {
 public:
  explicit CounterArray(size_t n) : size_(n) {
    if (n == 0) return;
    constexpr size_t kHuge = size_t{2} << 20;
    bytes_ = (n * sizeof(uint16_t) + kHuge - 1) / kHuge * kHuge;
#if defined(__linux__)
    if (bytes_ >= kHuge) {
      void* p =
          mmap(nullptr, bytes_ + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        map_bytes_ = bytes_ + kHuge;
        const auto base = reinterpret_cast<uintptr_t>(p);
        const uintptr_t aligned = (base + kHuge - 1) / kHuge * kHuge;
        data_ = reinterpret_cast<uint16_t*>(aligned);
        madvise(data_, bytes_, MADV_HUGEPAGE);  // a hint: failure only costs speed
        return;                                 // anonymous mappings read as zero
      }
    }
#endif
    fallback_.assign(n, 0);
    data_ = fallback_.data();
  }
  ~CounterArray() {
#if defined(__linux__)
    if (map_ != nullptr) munmap(map_, map_bytes_);
#endif
  }
  CounterArray(const CounterArray&) = delete;
  CounterArray& operator=(const CounterArray&) = delete;

  uint16_t& operator[](size_t i) { return data_[i]; }
  uint16_t operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
  size_t bytes_ = 0;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint16_t* data_ = nullptr;
  std::vector<uint16_t> fallback_;
};

struct ReadyEntry {
  int64_t ready_ns = 0;  // collectives: 0
  uint64_t order = 0;    // node id; collectives: position in the slot
  int32_t node = 0;
  Cause cause;
};

struct LaterFirst {
  bool operator()(const ReadyEntry& a, const ReadyEntry& b) const {
    return a.ready_ns != b.ready_ns ? a.ready_ns > b.ready_ns : a.order > b.order;
  }
};

struct alignas(64) ResourceState {
  std::vector<ReadyEntry> ready;  // min-heap by (ready_ns, node id)
  int32_t running = -1;
  bool slowed_check = false;  // compute: the next look assumed a transfer in flight
  int64_t start_ns = 0;
  // Compute: work at full speed, and overlap_until() at its start.
  double work_ns = 0;
  int64_t overlap_start_ns = 0;
  sim::EventId event;
};

struct ChannelState {
  std::vector<ReadyEntry> ready;  // min-heap by position
  int32_t next = 0;               // position of the collective to run next
  bool arrived = false;           // the one at `next` reached its group
  int64_t arrival_ns = 0;
};

struct alignas(64) RankState {
  int32_t done = 0;
  int32_t compute_running = 0;
  int32_t comm_active = 0;
  Account finish_account = kIdle;
  int64_t compute_busy_since = 0;
  int64_t compute_free_ns = 0;
  int64_t comm_overlap_ns = 0;  // time with a transfer in flight, until comm_change_ns
  int64_t comm_change_ns = 0;
  int64_t finish_ns = 0;
  int64_t finish_group_start_ns = 0;
  // Second cache line: the time accounts (ns) and where the counters start.
  Accounts accounts{};
  int64_t counter_begin = 0;
};

struct Tuned {
  int64_t latency_ns = 0;
  int64_t transfer_ns = 0;
  double alone_Bps = 0;
  const char* algorithm = "";
  const char* protocol = "";
};

struct GroupState {
  int32_t arrived = 0;
  int32_t seq = -1;
  int64_t first_rank = 0;
  int32_t first_node = 0;
  int64_t start_ns = 0;
  int32_t tuned = -1;
  std::optional<collectives::GroupGeometry> geometry;
  std::optional<collectives::Footprint> footprint;
};

struct P2p {
  int64_t src = 0;
  int64_t dst = 0;
  int32_t send_node = 0;
  int32_t recv_node = 0;
  int64_t send_ready_ns = 0;
  int64_t recv_ready_ns = 0;
  int64_t start_ns = 0;
  int32_t tuned = -1;
  const collectives::Footprint* footprint = nullptr;
};

struct P2pKey {
  int64_t src;
  int64_t dst;
  int64_t tag;
  int32_t seq;
  bool operator==(const P2pKey&) const = default;
};

struct P2pKeyHash {
  size_t operator()(const P2pKey& k) const {
    uint64_t h = static_cast<uint64_t>(k.src) * 0x9E3779B97F4A7C15ULL;
    h ^= static_cast<uint64_t>(k.dst) + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.tag) + 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.seq) + 0x27D4EB2F165667C5ULL + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

struct PendingP2p {
  int64_t rank = 0;
  int32_t node = 0;
  int64_t ready_ns = 0;
};

enum EventKinds : sim::EventKind {
  kNodeEnd,        // data: rank << 16 | resource (host work and copies)
  kComputeCheck,   // data: rank << 16 | resource
  kTransferBegin,  // data: comm (kP2pBit | p2p id, or group id)
  kCommEnd,        // data: comm, no transfer phase
  kTransferEnd,    // data: flow id
  kSolveFlows,
};

constexpr uint64_t kP2pBit = uint64_t{1} << 63;

uint64_t pack(int64_t rank, int32_t resource) {
  return (static_cast<uint64_t>(rank) << 16) | static_cast<uint64_t>(resource);
}

struct WorkItem {
  int64_t rank;
  int32_t node;
  Cause cause;
};

class ReplayEngine : public sim::EventHandler {
 public:
  ReplayEngine(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
               const ReplayJob& job, const ReplayOptions& options,
               const std::vector<Template>& templates, const GpuComputeSpec& spec)
      : cluster_(cluster),
        profile_(profile),
        job_(job),
        options_(options),
        t_(templates),
        flows_(cluster, profile, options.routing),
        transfers_(sim_, flows_),
        ranks_(static_cast<size_t>(job.ranks())),
        channels_(job.slot_groups.size()),
        groups_(job.groups.size()),
        traced_(static_cast<size_t>(job.ranks()), 0) {
    comm_slowdown_rate_ = 1.0 / spec.comm_overlap_slowdown;
    resource_begin_.reserve(ranks_.size() + 1);
    int64_t total = 0;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      resource_begin_.push_back(total);
      total += static_cast<int64_t>(tpl(static_cast<int64_t>(r)).resources.size());
    }
    resource_begin_.push_back(total);
    resources_.resize(static_cast<size_t>(total));
    total = 0;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      ranks_[r].counter_begin = total;
      total += tpl(static_cast<int64_t>(r)).counters;
    }
    counters_ = std::make_unique<CounterArray>(static_cast<size_t>(total));
    for (const int64_t r : options.trace_ranks) {
      CLUSTERSIM_CHECK(r >= 0 && r < job.ranks(), "trace rank " + std::to_string(r));
      traced_[static_cast<size_t>(r)] = 1;
    }
  }

  void run() {
    handler_ = sim_.add_handler(*this);
    transfers_.bind(handler_, kTransferEnd, kSolveFlows);
    for (int64_t r = 0; r < job_.ranks(); ++r) {
      for (const int32_t n : tpl(r).roots) make_ready(r, n, Cause{});
      drain();
    }
    sim_.run();
  }

  void on_event(sim::Simulator& sim, const sim::Event& event) override {
    (void)sim;
    const auto rank = static_cast<int64_t>(event.data >> 16);
    const auto res = static_cast<int32_t>(event.data & 0xffff);
    switch (event.kind) {
      case kNodeEnd:
        node_end(rank, res);
        break;
      case kComputeCheck:
        compute_check(rank, res);
        break;
      case kTransferBegin:
        begin_transfer(event.data);
        break;
      case kCommEnd:
        end_comm(event.data, /*transferred=*/false);
        break;
      case kTransferEnd:
        end_transfer(static_cast<uint32_t>(event.data));
        break;
      case kSolveFlows:
        transfers_.on_solve_event();
        break;
      default:
        CLUSTERSIM_CHECK(false, "unknown replay event kind " + std::to_string(event.kind));
    }
    drain();
  }

  // Throws ConfigError naming stuck nodes when some never ran.
  void check_finished() const;
  StepResult result(const GpuComputeSpec& spec);

 private:
  int64_t now() const { return sim_.now().count_ns(); }
  const Template& tpl(int64_t r) const {
    return t_[static_cast<size_t>(job_.template_of[static_cast<size_t>(r)])];
  }
  RankState& rank(int64_t r) { return ranks_[static_cast<size_t>(r)]; }
  ResourceState& resource(int64_t r, int32_t res) {
    return resources_[static_cast<size_t>(resource_begin_[static_cast<size_t>(r)] + res)];
  }
  ChannelState& channel(int64_t r, int32_t slot) {
    return channels_[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)] + slot)];
  }
  int32_t group_of(int64_t r, int32_t slot) const {
    return job_.slot_groups[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)] + slot)];
  }
  // The slot of rank r that runs on group g.
  int32_t slot_of(int64_t r, int32_t g) const {
    const auto begin = static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)]);
    const auto end = static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r) + 1]);
    for (size_t i = begin; i < end; ++i) {
      if (job_.slot_groups[i] == g) return static_cast<int32_t>(i - begin);
    }
    CLUSTERSIM_CHECK(false, "rank " + std::to_string(r) + " is in group " + std::to_string(g));
    return -1;
  }
  bool traced(int64_t r) const { return traced_[static_cast<size_t>(r)] != 0; }
  const Trace& trace_of(int64_t r) const { return *tpl(r).trace; }

  // ---- Dependencies ----

  void complete(int64_t r, int32_t node, const Cause& cause) {
    work_.push_back(WorkItem{r, node, cause});
  }

  static uint64_t rank_node_key(int64_t r, int32_t node) {
    return (static_cast<uint64_t>(r) << 32) | static_cast<uint64_t>(node);
  }

  // Completes queued nodes and what completes with them at this instant.
  void drain() {
    if (draining_) return;  // the outer drain completes what is queued
    draining_ = true;
    for (size_t next = 0; next < work_.size(); ++next) {
      const WorkItem item = work_[next];
      RankState& st = rank(item.rank);
      ++st.done;
      if (now() >= st.finish_ns) {
        st.finish_ns = now();
        st.finish_account = item.cause.account;
        st.finish_group_start_ns = item.cause.group_start_ns;
      }
      const Template& t = tpl(item.rank);
      const TNode& tn = t.nodes[static_cast<size_t>(item.node)];
      for (int32_t s = tn.succ_begin; s < tn.succ_end; ++s) {
        dependency_done(item.rank, t.succs[static_cast<size_t>(s)], item.cause);
      }
    }
    work_.clear();
    draining_ = false;
  }

  // One dependency of `node` completed with `cause`. The node's cause is
  // the last one, unless that is host work and a non-host dependency
  // completed before: then the latest of those (kept in causes_).
  void dependency_done(int64_t r, int32_t node, const Cause& cause) {
    const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
    if (tn.indegree == 1) {
      make_ready(r, node, cause);
      return;
    }
    if (tn.counter < 0) {
      wide_dependency_done(r, node, tn, cause);
      return;
    }
    uint16_t& c = (*counters_)[static_cast<size_t>(ranks_[static_cast<size_t>(r)].counter_begin +
                                                   tn.counter)];
    const int32_t done = (c & kMaxDense) + 1;
    if (done < tn.indegree) {
      if (!cause.host) {
        Pending& p = causes_.find_or_insert(rank_node_key(r, node), 0);
        if (!(c & kCauseKept) || cause.end_ns >= p.end_ns) {
          p.account = cause.account;
          p.group_start_ns = cause.group_start_ns;
          p.end_ns = cause.end_ns;
        }
        c = static_cast<uint16_t>(kCauseKept | done);
      } else {
        c = static_cast<uint16_t>((c & kCauseKept) | done);
      }
      return;
    }
    Cause effective = cause;
    if (c & kCauseKept) {
      Pending* p = causes_.find(rank_node_key(r, node));
      CLUSTERSIM_CHECK(p != nullptr, "a kept cause is in the table");
      if (cause.host) effective = Cause{p->account, false, p->group_start_ns, p->end_ns};
      causes_.erase(*p);
    }
    c = static_cast<uint16_t>(done);
    make_ready(r, node, effective);
  }

  // Nodes with more dependencies than a dense counter holds.
  void wide_dependency_done(int64_t r, int32_t node, const TNode& tn, const Cause& cause) {
    Pending& p = wide_.find_or_insert(rank_node_key(r, node), tn.indegree);
    if (!cause.host && (!p.has_cause || cause.end_ns >= p.end_ns)) {
      p.has_cause = true;
      p.account = cause.account;
      p.group_start_ns = cause.group_start_ns;
      p.end_ns = cause.end_ns;
    }
    if (--p.remaining > 0) return;
    Cause effective = cause;
    if (cause.host && p.has_cause) {
      effective = Cause{p.account, false, p.group_start_ns, p.end_ns};
    }
    wide_.erase(p);
    make_ready(r, node, effective);
  }

  void make_ready(int64_t r, int32_t node, const Cause& cause) {
    const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
    switch (tn.kind) {
      case Kind::kMeta:
        complete(r, node, cause);
        break;
      case Kind::kCompute:
      case Kind::kHost:
      case Kind::kCopy: {
        ResourceState& rs = resource(r, tn.resource);
        if (rs.running < 0 && rs.ready.empty()) {
          // Idle and nothing waits: start at once.
          start(r, tn.resource, node, cause);
          break;
        }
        rs.ready.push_back(ReadyEntry{now(), tn.id, node, cause});
        std::push_heap(rs.ready.begin(), rs.ready.end(), LaterFirst{});
        break;
      }
      case Kind::kColl: {
        ChannelState& ch = channel(r, tn.resource);
        ch.ready.push_back(ReadyEntry{0, static_cast<uint64_t>(tn.seq), node, cause});
        std::push_heap(ch.ready.begin(), ch.ready.end(), LaterFirst{});
        try_channel(r, tn.resource);
        break;
      }
      case Kind::kSend:
      case Kind::kRecv:
        p2p_ready(r, node);
        break;
    }
  }

  // ---- Compute, host and copy resources ----

  void dispatch(int64_t r, int32_t res) {
    ResourceState& rs = resource(r, res);
    if (rs.running >= 0 || rs.ready.empty()) return;
    std::pop_heap(rs.ready.begin(), rs.ready.end(), LaterFirst{});
    const ReadyEntry e = rs.ready.back();
    rs.ready.pop_back();
    start(r, res, e.node, e.cause);
  }

  void start(int64_t r, int32_t res, int32_t node, const Cause& cause) {
    ResourceState& rs = resource(r, res);
    const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
    rs.running = node;
    rs.start_ns = now();
    if (tn.kind == Kind::kCompute) {
      RankState& st = rank(r);
      if (st.compute_running++ == 0) {
        charge_gap(r, cause);
        st.compute_busy_since = now();
      }
      rs.work_ns = static_cast<double>(tn.duration_ns);
      rs.overlap_start_ns = overlap_until(st, now());
      schedule_check(r, res, now(), rs.work_ns);
    } else {
      sim_.schedule_at(SimTime::ns(now() + tn.duration_ns), handler_, kNodeEnd, pack(r, res));
    }
  }

  // After a node ends: the first of the nodes ready by then.
  void next_on(int64_t r, int32_t res) {
    if (!resource(r, res).ready.empty()) dispatch(r, res);
  }

  void node_end(int64_t r, int32_t res) {
    ResourceState& rs = resource(r, res);
    const int32_t node = rs.running;
    const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
    rs.running = -1;
    if (traced(r)) {
      const Node& n = trace_of(r).nodes[static_cast<size_t>(node)];
      TraceRecord rec;
      rec.rank = r;
      rec.track = tpl(r).resources[static_cast<size_t>(res)].track;
      rec.name = n.name;
      rec.category = tn.kind == Kind::kHost ? "host" : "pcie";
      rec.start = SimTime::ns(rs.start_ns);
      rec.duration = SimTime::ns(now() - rs.start_ns);
      rec.bytes = tn.kind == Kind::kCopy ? tn.bytes : 0;
      trace_.push_back(rec);
    }
    Cause cause;
    cause.end_ns = now();
    if (tn.kind == Kind::kHost && tn.host_thread) {
      cause.account = kLaunchBound;
      cause.host = true;
    } else {
      cause.account = kExposedPcie;  // copies, and host work off the host thread (CPU optimizer)
    }
    complete(r, node, cause);
    drain();
    next_on(r, res);
  }

  // A compute gap [compute_free_ns, now] ends: charged to what the kernel
  // waited for last (see Cause).
  void charge_gap(int64_t r, const Cause& cause) {
    RankState& st = rank(r);
    Accounts& a = st.accounts;
    const int64_t free = st.compute_free_ns;
    const int64_t start = now();
    if (start <= free) return;
    const int64_t waited_until = std::min(std::max(free, cause.end_ns), start);
    const int64_t waited = waited_until - free;
    if (waited > 0) {
      if (cause.account == kIdle || cause.account == kCompute) {
        a[kIdle] += waited;
      } else {
        const int64_t sync = std::clamp(cause.group_start_ns - free, int64_t{0}, waited);
        a[kSyncWait] += sync;
        a[cause.account] += waited - sync;
      }
    }
    a[kLaunchBound] += start - waited_until;
  }

  static int64_t overlap_until(const RankState& st, int64_t t) {
    return st.comm_overlap_ns + (st.comm_active > 0 ? t - st.comm_change_ns : 0);
  }

  // The next look at a running kernel, `left` ns of full-speed work after
  // `from` (step_simulator.cc's rule: exact while the transfer state holds).
  void schedule_check(int64_t r, int32_t res, int64_t from, double left) {
    ResourceState& rs = resource(r, res);
    rs.slowed_check = rank(r).comm_active > 0;
    const double span = rs.slowed_check ? left / comm_slowdown_rate_ : left;
    const int64_t at = from + static_cast<int64_t>(std::ceil(span));
    rs.event = sim_.schedule_cancellable_at(SimTime::ns(std::max(at, now())), handler_,
                                            kComputeCheck, pack(r, res));
  }

  double kernel_done_ns(const RankState& st, const ResourceState& rs) const {
    const int64_t t = now();
    const auto overlap = static_cast<double>(overlap_until(st, t) - rs.overlap_start_ns);
    return static_cast<double>(t - rs.start_ns) - (1 - comm_slowdown_rate_) * overlap;
  }

  void compute_check(int64_t r, int32_t res) {
    ResourceState& rs = resource(r, res);
    RankState& st = rank(r);
    const double left = rs.work_ns - kernel_done_ns(st, rs);
    if (left >= 1.0) {
      schedule_check(r, res, now(), left);
      return;
    }
    const int32_t node = rs.running;
    rs.running = -1;
    if (--st.compute_running == 0) {
      st.accounts[kCompute] += now() - st.compute_busy_since;
      st.compute_free_ns = now();
    }
    if (traced(r)) {
      const Node& n = trace_of(r).nodes[static_cast<size_t>(node)];
      TraceRecord rec;
      rec.rank = r;
      rec.track = tpl(r).resources[static_cast<size_t>(res)].track;
      rec.name = n.name;
      rec.category = n.kernel_class ? std::string_view(*n.kernel_class) : "compute";
      rec.start = SimTime::ns(rs.start_ns);
      rec.duration = SimTime::ns(now() - rs.start_ns);
      trace_.push_back(rec);
    }
    complete(r, node, Cause{kCompute, false, 0, now()});
    drain();
    next_on(r, res);
  }

  void comm_changes(int64_t r, int delta) {
    RankState& st = rank(r);
    st.comm_overlap_ns = overlap_until(st, now());
    st.comm_change_ns = now();
    st.comm_active += delta;
    if (st.comm_active > 0) return;
    // The last transfer ended: running kernels speed up again.
    for (const int32_t res : tpl(r).compute_resources) {
      ResourceState& rs = resource(r, res);
      if (rs.running < 0 || !rs.slowed_check) continue;
      sim_.cancel(rs.event);
      schedule_check(r, res, now(), rs.work_ns - kernel_done_ns(st, rs));
    }
  }

  // ---- Collectives ----

  void try_channel(int64_t r, int32_t slot) {
    ChannelState& ch = channel(r, slot);
    if (ch.arrived || ch.ready.empty() || ch.ready.front().order != static_cast<uint64_t>(ch.next))
      return;
    std::pop_heap(ch.ready.begin(), ch.ready.end(), LaterFirst{});
    const int32_t node = ch.ready.back().node;
    ch.ready.pop_back();
    ch.arrived = true;
    ch.arrival_ns = now();
    const int32_t g = group_of(r, slot);
    GroupState& gs = groups_[static_cast<size_t>(g)];
    if (gs.arrived == 0) {
      gs.seq = ch.next;
      gs.first_rank = r;
      gs.first_node = node;
    }
    CLUSTERSIM_CHECK(gs.seq == ch.next, "members of a group reach the same collective");
    const auto size = static_cast<int32_t>(job_.groups[static_cast<size_t>(g)].ranks.size());
    if (++gs.arrived < size) return;
    gs.arrived = 0;
    begin_collective(g);
  }

  const TNode& group_node(const GroupState& gs) const {
    return tpl(gs.first_rank).nodes[static_cast<size_t>(gs.first_node)];
  }

  int32_t tune(const collectives::GroupGeometry& geometry, CollectiveOp op, int64_t bytes,
               bool forced, int64_t rank, int32_t node, const std::string& group) {
    const auto key = std::make_tuple(geometry.ranks, geometry.nodes, geometry.ranks_per_node,
                                     static_cast<int>(op), bytes, forced);
    const auto it = tuned_index_.find(key);
    if (it != tuned_index_.end()) return it->second;
    collectives::TunedCollective tc;
    try {
      tc = collectives::tune_collective(profile_, geometry, op, bytes,
                                        forced ? options_.forced : collectives::ForcedChoice{});
    } catch (const std::invalid_argument& e) {
      sim::DiagnosticSink sink;
      sink.add(sim::SourceLocation{location(trace_of(rank), rank), 0, 0},
               node_key(trace_of(rank).nodes[static_cast<size_t>(node)].id),
               std::string(collectives::to_string(op)) + " on " + group + ": " + e.what());
      sink.throw_if_any();
    }
    Tuned t;
    t.latency_ns = SimTime::from_seconds_rounded(tc.cost.latency_s).count_ns();
    t.transfer_ns = SimTime::from_seconds_rounded(tc.cost.transfer_s).count_ns();
    t.alone_Bps = tc.cost.transfer_s > 0 ? static_cast<double>(bytes) / tc.cost.transfer_s : 0;
    t.algorithm = collectives::to_string(tc.choice.algorithm);
    t.protocol = collectives::to_string(tc.choice.protocol);
    tuned_.push_back(t);
    const auto id = static_cast<int32_t>(tuned_.size() - 1);
    tuned_index_.emplace(key, id);
    return id;
  }

  void begin_collective(int32_t g) {
    GroupState& gs = groups_[static_cast<size_t>(g)];
    const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
    const TNode& tn = group_node(gs);
    gs.start_ns = now();
    ++collectives_;
    if (!gs.geometry) gs.geometry = collectives::geometry_of(cluster_, group.ranks);
    gs.tuned = tune(*gs.geometry, tn.op, tn.bytes, true, gs.first_rank, gs.first_node,
                    "process group '" + group.name + "'");
    const Tuned& t = tuned_[static_cast<size_t>(gs.tuned)];
    const bool moves = group.ranks.size() > 1 && t.alone_Bps > 0;
    const auto comm = static_cast<uint64_t>(g);
    if (moves) {
      sim_.schedule_at(SimTime::ns(now() + t.latency_ns), handler_, kTransferBegin, comm);
    } else {
      sim_.schedule_at(SimTime::ns(now() + t.latency_ns + t.transfer_ns), handler_, kCommEnd, comm);
    }
  }

  void begin_transfer(uint64_t comm) {
    const collectives::Footprint* fp = nullptr;
    double factor = 1;
    int64_t bytes = 0;
    int32_t tuned = -1;
    if (comm & kP2pBit) {
      const P2p& p = p2ps_[static_cast<size_t>(comm & ~kP2pBit)];
      fp = p.footprint;
      factor = collectives::busbw_factor(CollectiveOp::kBroadcast, 2);
      bytes = tpl(p.src).nodes[static_cast<size_t>(p.send_node)].bytes;
      tuned = p.tuned;
    } else {
      const auto g = static_cast<int32_t>(comm);
      GroupState& gs = groups_[static_cast<size_t>(g)];
      const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
      if (!gs.footprint) gs.footprint = flows_.footprint(group.ranks);
      fp = &*gs.footprint;
      const TNode& tn = group_node(gs);
      factor = collectives::busbw_factor(tn.op, static_cast<int>(group.ranks.size()));
      bytes = tn.bytes;
      tuned = gs.tuned;
    }
    transfers_.start(*fp, factor, tuned_[static_cast<size_t>(tuned)].alone_Bps,
                     static_cast<double>(bytes), comm);
    for_members(comm, [&](int64_t m) { comm_changes(m, +1); });
  }

  template <typename F>
  void for_members(uint64_t comm, F&& f) {
    if (comm & kP2pBit) {
      const P2p& p = p2ps_[static_cast<size_t>(comm & ~kP2pBit)];
      f(p.src);
      if (p.dst != p.src) f(p.dst);
      return;
    }
    for (const int64_t m : job_.groups[static_cast<size_t>(comm)].ranks) f(m);
  }

  void end_transfer(uint32_t flow) { end_comm(transfers_.finish(flow), /*transferred=*/true); }

  void end_comm(uint64_t comm, bool transferred) {
    if (comm & kP2pBit) {
      end_p2p(static_cast<size_t>(comm & ~kP2pBit), transferred);
      return;
    }
    const auto g = static_cast<int32_t>(comm);
    const GroupState& gs = groups_[static_cast<size_t>(g)];
    const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
    const TNode& tn = group_node(gs);
    const Cause cause{exposed_account(tn.op), false, gs.start_ns, now()};
    const int64_t start = gs.start_ns;
    const Tuned& t = tuned_[static_cast<size_t>(gs.tuned)];
    // Every member first leaves the collective, then its node completes (a
    // member's next collective in this group may then arrive at once).
    member_slots_.clear();
    for (const int64_t m : group.ranks) {
      const int32_t slot = slot_of(m, g);
      member_slots_.push_back(slot);
      ChannelState& ch = channel(m, slot);
      const int32_t node =
          tpl(m).slot_nodes[static_cast<size_t>(slot)][static_cast<size_t>(ch.next)];
      if (traced(m)) {
        const TNode& mine = tpl(m).nodes[static_cast<size_t>(node)];
        TraceRecord rec;
        rec.rank = m;
        rec.track = mine.track;
        rec.name = trace_of(m).nodes[static_cast<size_t>(node)].name;
        rec.category = collectives::to_string(mine.op);
        rec.start = SimTime::ns(start);
        rec.duration = SimTime::ns(now() - start);
        rec.bytes = mine.bytes;
        rec.group_size = static_cast<int64_t>(group.ranks.size());
        rec.wait = SimTime::ns(start - ch.arrival_ns);
        rec.algorithm = t.algorithm;
        rec.protocol = t.protocol;
        trace_.push_back(rec);
      }
      ch.arrived = false;
      ++ch.next;
      if (transferred) comm_changes(m, -1);
      complete(m, node, cause);
    }
    drain();
    for (size_t i = 0; i < group.ranks.size(); ++i) {
      try_channel(group.ranks[i], member_slots_[i]);
      drain();
    }
  }

  // ---- Send / receive ----

  void p2p_ready(int64_t r, int32_t node) {
    const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
    const int64_t other = job_.peer_base[static_cast<size_t>(r)] + tn.peer;
    const bool send = tn.kind == Kind::kSend;
    const P2pKey key{send ? r : other, send ? other : r, tn.tag, tn.seq};
    const auto it = pending_p2p_.find(key);
    if (it == pending_p2p_.end()) {
      pending_p2p_.emplace(key, PendingP2p{r, node, now()});
      return;
    }
    const PendingP2p peer = it->second;
    pending_p2p_.erase(it);
    P2p p;
    p.src = key.src;
    p.dst = key.dst;
    p.send_node = send ? node : peer.node;
    p.recv_node = send ? peer.node : node;
    p.send_ready_ns = send ? now() : peer.ready_ns;
    p.recv_ready_ns = send ? peer.ready_ns : now();
    p.start_ns = now();
    const int64_t bytes = tpl(p.src).nodes[static_cast<size_t>(p.send_node)].bytes;
    size_t id = 0;
    if (free_p2ps_.empty()) {
      id = p2ps_.size();
      p2ps_.push_back(p);
    } else {
      id = free_p2ps_.back();
      free_p2ps_.pop_back();
      p2ps_[id] = p;
    }
    if (p.src == p.dst) {
      end_p2p(id, false);
      return;
    }
    const std::array<int64_t, 2> gpus = {p.src, p.dst};
    const auto pair = std::make_pair(p.src, p.dst);
    auto fp = pair_footprints_.find(pair);
    if (fp == pair_footprints_.end()) {
      fp = pair_footprints_.emplace(pair, flows_.footprint(gpus)).first;
    }
    P2p& stored = p2ps_[id];
    stored.footprint = &fp->second;
    stored.tuned =
        tune(collectives::geometry_of(cluster_, gpus), CollectiveOp::kBroadcast, bytes, false,
             p.src, p.send_node, "ranks " + std::to_string(p.src) + " -> " + std::to_string(p.dst));
    const Tuned& t = tuned_[static_cast<size_t>(stored.tuned)];
    const uint64_t comm = kP2pBit | id;
    if (t.alone_Bps > 0) {
      sim_.schedule_at(SimTime::ns(now() + t.latency_ns), handler_, kTransferBegin, comm);
    } else {
      sim_.schedule_at(SimTime::ns(now() + t.latency_ns + t.transfer_ns), handler_, kCommEnd, comm);
    }
  }

  void end_p2p(size_t id, bool transferred) {
    const P2p p = p2ps_[id];
    free_p2ps_.push_back(id);
    const Cause cause{kExposedAllReduce, false, p.start_ns, now()};
    for (const bool send : {true, false}) {
      const int64_t r = send ? p.src : p.dst;
      const int32_t node = send ? p.send_node : p.recv_node;
      if (traced(r)) {
        const TNode& tn = tpl(r).nodes[static_cast<size_t>(node)];
        TraceRecord rec;
        rec.rank = r;
        rec.track = send ? "send" : "recv";
        rec.name = trace_of(r).nodes[static_cast<size_t>(node)].name;
        rec.category = rec.track;
        rec.start = SimTime::ns(p.start_ns);
        rec.duration = SimTime::ns(now() - p.start_ns);
        rec.bytes = tn.bytes;
        rec.group_size = 2;
        rec.wait = SimTime::ns(p.start_ns - (send ? p.send_ready_ns : p.recv_ready_ns));
        if (p.tuned >= 0) {
          rec.algorithm = tuned_[static_cast<size_t>(p.tuned)].algorithm;
          rec.protocol = tuned_[static_cast<size_t>(p.tuned)].protocol;
        }
        trace_.push_back(rec);
      }
      if (transferred && (send || p.dst != p.src)) comm_changes(r, -1);
      complete(r, node, cause);
    }
    drain();
  }

  const topology::Cluster& cluster_;
  const collectives::HardwareProfile& profile_;
  const ReplayJob& job_;
  const ReplayOptions& options_;
  const std::vector<Template>& t_;
  sim::Simulator sim_;
  sim::HandlerId handler_ = 0;
  collectives::CollectiveFlows flows_;
  FlowTransfers transfers_;
  std::vector<RankState> ranks_;
  std::vector<int64_t> resource_begin_;  // by rank, + 1
  std::vector<ResourceState> resources_;
  std::vector<ChannelState> channels_;  // by job slot
  std::vector<GroupState> groups_;
  std::vector<uint8_t> traced_;
  std::unique_ptr<CounterArray> counters_;  // dependencies done, by rank then TNode::counter
  PendingTable causes_;                     // kept causes (kCauseKept)
  PendingTable wide_;                       // nodes beyond kMaxDense dependencies
  std::vector<WorkItem> work_;              // completions to process at this instant, in order
  bool draining_ = false;
  std::vector<int32_t> member_slots_;
  std::map<std::tuple<int, int, int, int, int64_t, bool>, int32_t> tuned_index_;
  std::vector<Tuned> tuned_;
  std::vector<P2p> p2ps_;
  std::vector<size_t> free_p2ps_;
  std::unordered_map<P2pKey, PendingP2p, P2pKeyHash> pending_p2p_;
  std::map<std::pair<int64_t, int64_t>, collectives::Footprint> pair_footprints_;
  double comm_slowdown_rate_ = 1;
  int64_t collectives_ = 0;
  std::vector<TraceRecord> trace_;
};

void ReplayEngine::check_finished() const {
  int64_t stuck_nodes = 0;
  int64_t stuck_ranks = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    const auto left =
        static_cast<int64_t>(tpl(r).nodes.size()) - ranks_[static_cast<size_t>(r)].done;
    if (left > 0) {
      stuck_nodes += left;
      ++stuck_ranks;
    }
  }
  if (stuck_nodes == 0) return;
  constexpr size_t kShown = 8;
  std::vector<sim::Diagnostic> found;
  const auto add = [&](int64_t r, int32_t node, const std::string& message) {
    if (found.size() >= kShown) return;
    const Trace& trace = trace_of(r);
    found.push_back(sim::Diagnostic{
        sim::SourceLocation{location(trace, r), 0, 0},
        node_key(trace.nodes[static_cast<size_t>(node)].id) + " (rank " + std::to_string(r) + ")",
        message});
  };
  // Collectives waiting for members that never arrive, or for an earlier
  // collective of their group that never became ready.
  for (int64_t r = 0; r < job_.ranks() && found.size() < kShown; ++r) {
    const Template& t = tpl(r);
    for (size_t slot = 0; slot < t.slot_names.size(); ++slot) {
      const ChannelState& ch =
          channels_[static_cast<size_t>(job_.slot_begin[static_cast<size_t>(r)]) + slot];
      const std::vector<int32_t>& list = t.slot_nodes[slot];
      if (static_cast<size_t>(ch.next) >= list.size()) continue;
      const int32_t node = list[static_cast<size_t>(ch.next)];
      const int32_t g = group_of(r, static_cast<int32_t>(slot));
      const ReplayGroup& group = job_.groups[static_cast<size_t>(g)];
      const std::string what =
          std::string(comm_type_name(
              static_cast<int32_t>(*trace_of(r).nodes[static_cast<size_t>(node)].comm_type))) +
          " #" + std::to_string(ch.next) + " of process group '" + group.name + "'";
      if (ch.arrived) {
        std::vector<int64_t> missing;
        for (const int64_t m : group.ranks) {
          const ChannelState& other = channels_[static_cast<size_t>(
              job_.slot_begin[static_cast<size_t>(m)] + slot_of(m, g))];
          if (!other.arrived) missing.push_back(m);
        }
        std::string who;
        for (size_t i = 0; i < missing.size() && i < 8; ++i) {
          who += (i ? ", " : "") + std::to_string(missing[i]);
        }
        if (missing.size() > 8) who += ", ... (" + std::to_string(missing.size()) + " ranks)";
        add(r, node, what + " waits for rank(s) " + who + ", which never reach it (deadlock)");
      } else if (!ch.ready.empty()) {
        add(r, node,
            what + " never becomes ready, so the later collectives of its group cannot run");
      }
    }
  }
  std::vector<std::pair<P2pKey, PendingP2p>> p2p(pending_p2p_.begin(), pending_p2p_.end());
  std::sort(p2p.begin(), p2p.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.rank, a.second.node) < std::tie(b.second.rank, b.second.node);
  });
  for (const auto& [key, side] : p2p) {
    const bool send = key.src == side.rank;
    add(side.rank, side.node,
        std::string(send ? "send to rank " + std::to_string(key.dst)
                         : "receive from rank " + std::to_string(key.src)) +
            " (tag " + std::to_string(key.tag) + ", #" + std::to_string(key.seq) +
            ") has no matching " + (send ? "receive" : "send") + " that becomes ready");
  }
  // Nodes some of whose dependencies completed, the others never.
  for (int64_t r = 0; r < job_.ranks() && found.size() < kShown; ++r) {
    const Template& t = tpl(r);
    if (ranks_[static_cast<size_t>(r)].done == static_cast<int32_t>(t.nodes.size())) continue;
    for (size_t i = 0; i < t.nodes.size() && found.size() < kShown; ++i) {
      const TNode& tn = t.nodes[i];
      if (tn.counter < 0) continue;
      const int32_t done = (*counters_)[static_cast<size_t>(
                               ranks_[static_cast<size_t>(r)].counter_begin + tn.counter)] &
                           kMaxDense;
      if (done == 0 || done == tn.indegree) continue;
      add(r, static_cast<int32_t>(i),
          "waits for " + std::to_string(tn.indegree - done) + " of its " +
              std::to_string(tn.indegree) + " dependencies, which never complete");
    }
  }
  for (const Pending& p : wide_.entries()) {
    const auto r = static_cast<int64_t>(p.key >> 32);
    const auto node = static_cast<int32_t>(p.key & 0xffffffffULL);
    add(r, node,
        "waits for " + std::to_string(p.remaining) + " of its " +
            std::to_string(tpl(r).nodes[static_cast<size_t>(node)].indegree) +
            " dependencies, which never complete");
  }
  std::vector<sim::Diagnostic> all;
  all.push_back(sim::Diagnostic{sim::SourceLocation{"replay", 0, 0}, "",
                                "deadlock: " + std::to_string(stuck_nodes) + " node(s) on " +
                                    std::to_string(stuck_ranks) +
                                    " rank(s) can never run (a collective whose peers never "
                                    "reach it, an unmatched send/recv, or a dependency cycle); "
                                    "the first stuck nodes:"});
  all.insert(all.end(), found.begin(), found.end());
  throw sim::ConfigError(std::move(all));
}

StepResult ReplayEngine::result(const GpuComputeSpec& spec) {
  StepResult out;
  int64_t end = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    if (ranks_[static_cast<size_t>(r)].finish_ns > end) {
      end = ranks_[static_cast<size_t>(r)].finish_ns;
      out.slowest_rank = r;
    }
  }
  std::array<double, kAccountCount> sum{};
  double flops = 0;
  for (int64_t r = 0; r < job_.ranks(); ++r) {
    const RankState& st = ranks_[static_cast<size_t>(r)];
    Accounts v = st.accounts;
    close_rank(v, st.finish_account, st.finish_ns, st.compute_free_ns, st.finish_group_start_ns,
               end);
    for (size_t a = 0; a < kAccountCount; ++a) sum[a] += static_cast<double>(v[a]);
    flops += tpl(r).flops;
  }
  const auto n = static_cast<double>(job_.ranks());
  out.step_time_s = static_cast<double>(end) * 1e-9;
  out.ranks = job_.ranks();
  out.events = sim_.events_processed();
  out.collectives = collectives_;
  for (const Template& t : t_) {
    out.tasks_per_rank = std::max(out.tasks_per_rank, static_cast<int64_t>(t.nodes.size()));
  }
  out.breakdown = mean_breakdown(sum, job_.ranks());
  if (out.step_time_s > 0) {
    out.tflops_per_gpu = flops / n / out.step_time_s * 1e-12;
    if (spec.peak_flops > 0) out.mfu = out.tflops_per_gpu * 1e12 / spec.peak_flops;
    if (options_.tokens_per_rank > 0) {
      out.tokens_per_s_per_gpu = static_cast<double>(options_.tokens_per_rank) / out.step_time_s;
    }
  }
  std::stable_sort(trace_.begin(), trace_.end(), [](const TraceRecord& a, const TraceRecord& b2) {
    if (a.rank != b2.rank) return a.rank < b2.rank;
    return a.start < b2.start;
  });
  out.trace = std::move(trace_);
  return out;
}

// Static checks of the job against the graphs and the cluster: every group
// fits the cluster's shape, and its members issue the same collectives.
void check_job(const topology::Cluster& cluster, const ReplayJob& job,
               const std::vector<Template>& templates) {
  sim::DiagnosticSink sink;
  int reported = 0;
  const auto add = [&](sim::SourceLocation where, std::string key, std::string message) {
    if (reported++ < 20) sink.add(std::move(where), std::move(key), std::move(message));
  };
  if (job.ranks() > cluster.gpu_count()) {
    add(sim::SourceLocation{"replay", 0, 0}, "",
        "the job has " + std::to_string(job.ranks()) + " ranks, the cluster only " +
            std::to_string(cluster.gpu_count()) + " GPUs");
    sink.throw_if_any();
  }
  CLUSTERSIM_CHECK(job.slot_begin.size() == static_cast<size_t>(job.ranks()) + 1 &&
                       job.peer_base.size() == static_cast<size_t>(job.ranks()),
                   "a job's per-rank tables have one entry per rank");
  const auto slot_of = [&](int64_t r, int32_t g) {
    for (int64_t i = job.slot_begin[static_cast<size_t>(r)];
         i < job.slot_begin[static_cast<size_t>(r) + 1]; ++i) {
      if (job.slot_groups[static_cast<size_t>(i)] == g) {
        return static_cast<int32_t>(i - job.slot_begin[static_cast<size_t>(r)]);
      }
    }
    return int32_t{-1};
  };
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> verified;
  for (size_t g = 0; g < job.groups.size(); ++g) {
    const ReplayGroup& group = job.groups[g];
    const std::string label = "process group '" + group.name + "'";
    if (group.ranks.empty()) continue;
    bool in_range = true;
    for (const int64_t m : group.ranks) {
      if (m < 0 || m >= job.ranks()) in_range = false;
    }
    std::vector<int64_t> sorted = group.ranks;
    std::sort(sorted.begin(), sorted.end());
    if (!in_range || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      add(sim::SourceLocation{"replay", 0, 0}, label,
          "expected distinct ranks below " + std::to_string(job.ranks()));
      continue;
    }
    if (collectives::uniform_ranks_per_node(cluster, group.ranks) == 0) {
      std::map<int64_t, int64_t> per_node;
      for (const int64_t m : group.ranks) ++per_node[cluster.node_of_gpu(m)];
      std::string counts;
      for (const auto& [node, count] : per_node) {
        if (counts.size() > 80) {
          counts += ", ...";
          break;
        }
        counts += (counts.empty() ? "" : ", ") + std::string("node ") + std::to_string(node) +
                  ": " + std::to_string(count);
      }
      add(sim::SourceLocation{"replay", 0, 0}, label,
          "expected the same number of members on every node it uses (clustersim models "
          "NCCL rings per rail), found " +
              counts);
      continue;
    }
    const int64_t ref = group.ranks.front();
    const int32_t ref_t = job.template_of[static_cast<size_t>(ref)];
    const int32_t ref_slot = slot_of(ref, static_cast<int32_t>(g));
    const Template& rt = templates[static_cast<size_t>(ref_t)];
    static const std::vector<int32_t> kNone;
    const std::vector<int32_t>& ref_list =
        ref_slot >= 0 ? rt.slot_nodes[static_cast<size_t>(ref_slot)] : kNone;
    for (const int64_t m : group.ranks) {
      const int32_t mt = job.template_of[static_cast<size_t>(m)];
      const int32_t ms = slot_of(m, static_cast<int32_t>(g));
      if (!verified.insert({ref_t, ref_slot, mt, ms}).second) continue;
      const Template& t = templates[static_cast<size_t>(mt)];
      const std::vector<int32_t>& list = ms >= 0 ? t.slot_nodes[static_cast<size_t>(ms)] : kNone;
      const sim::SourceLocation where{location(*t.trace, m), 0, 0};
      if (list.size() != ref_list.size()) {
        add(where, "rank " + std::to_string(m),
            "issues " + std::to_string(list.size()) + " collective(s) in " + label + ", rank " +
                std::to_string(ref) + " (" + location(*rt.trace, ref) + ") " +
                std::to_string(ref_list.size()) + "; every member must issue the same sequence");
        continue;
      }
      for (size_t i = 0; i < list.size(); ++i) {
        const Node& a = rt.trace->nodes[static_cast<size_t>(ref_list[i])];
        const Node& b = t.trace->nodes[static_cast<size_t>(list[i])];
        if (a.comm_type == b.comm_type && a.comm_size == b.comm_size) continue;
        const auto describe = [](const Node& n) {
          return std::string(comm_type_name(static_cast<int32_t>(n.comm_type.value_or(-1)))) +
                 " of " + (n.comm_size ? std::to_string(*n.comm_size) : std::string("?")) +
                 " bytes";
        };
        add(where, node_key(b.id),
            "collective #" + std::to_string(i) + " of " + label + " is " + describe(b) +
                ", but on rank " + std::to_string(ref) + " " + location(*rt.trace, ref) + " node " +
                std::to_string(a.id) + " it is " + describe(a) + " (mismatched collectives)");
        break;
      }
    }
  }
  sink.throw_if_any();
}

}  // namespace

std::vector<std::string> collective_pg_names(const Trace& trace) {
  std::vector<std::string> names;
  for (const Node& n : trace.nodes) {
    if (n.type == static_cast<int32_t>(NodeType::kCommColl))
      names.push_back(n.pg_name.value_or(""));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

StepResult replay_traces(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const std::vector<Trace>& ranks, const CommGroups& groups,
                         const ReplayOptions& options) {
  const ReplayJob job = build_replay_job(ranks, groups, static_cast<int64_t>(ranks.size()));
  return replay_job(cluster, profile, job, options);
}

StepResult replay_job(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
                      const ReplayJob& job, const ReplayOptions& options) {
  const GpuComputeSpec spec =
      options.compute ? *options.compute : compute_spec_from_profile(profile);
  const double pcie_Bps = options.pcie_Bps > 0
                              ? options.pcie_Bps
                              : cluster.spec().node.pcie_Bps * profile.host.pcie_efficiency;
  sim::DiagnosticSink sink;
  std::vector<Template> templates;
  templates.reserve(job.templates.size());
  for (size_t t = 0; t < job.templates.size(); ++t) {
    templates.push_back(TemplateBuilder(job.templates[t], static_cast<int64_t>(t),
                                        static_cast<int64_t>(job.templates.size()), spec,
                                        options.recompute_compute, pcie_Bps, sink)
                            .build());
  }
  sink.throw_if_any();
  check_job(cluster, job, templates);
  ReplayEngine engine(cluster, profile, job, options, templates, spec);
  engine.run();
  engine.check_finished();
  return engine.result(spec);
}

}  // namespace clustersim::workloads::chakra
