// The replay's compiled form of one Chakra graph (internal to chakra/; see
// chakra_replay.h for the semantics): nodes with their kind, resource,
// duration and successors (CSR, in ascending node id), the graph's roots,
// resources (compute streams, host, copy engines) and collective slots (one
// per process group, nodes in ascending id). Identical ranks share one
// Template (flyweight): it holds no per-rank state.
//
// Units: nanoseconds and bytes. Ownership: a Template points into its Trace
// (names, attributes), which must outlive it. Thread safety: build_template
// is a pure function (problems go to the caller's sink); a Template is
// immutable once built.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective_cost.h"
#include "config/config_error.h"
#include "workloads/chakra/chakra_trace.h"
#include "workloads/model/compute_model.h"

namespace clustersim::workloads::chakra::replay {

enum class Kind : uint8_t { kMeta, kCompute, kHost, kCopy, kColl, kSend, kRecv };

struct TNode {
  uint64_t id = 0;
  Kind kind = Kind::kMeta;
  collectives::CollectiveOp op = collectives::CollectiveOp::kAllReduce;
  bool host_thread = false;  // kHost without a stream
  int32_t resource = 0;      // kCompute, kHost, kCopy: the template's resource; kColl: slot
  int32_t indegree = 0;
  int32_t succ_begin = 0;
  int32_t succ_end = 0;
  int32_t seq = 0;          // kColl: position in its slot; kSend/kRecv: among the same (peer, tag)
  int64_t duration_ns = 0;  // kCompute, kHost, kCopy
  int64_t bytes = 0;        // kColl, kSend, kRecv, kCopy
  int64_t peer = 0;         // kSend, kRecv: the graph's peer rank
  int64_t tag = 0;
  bool copy_engine = false;  // kSend, kRecv: moved by a copy engine (no SMs taken)
  int64_t stream = -1;       // kSend, kRecv: the trace's clustersim_stream (-1: none)
  std::string_view track;    // kColl: where traces show it
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
  std::vector<std::string> slot_names;
  std::vector<std::vector<int32_t>> slot_nodes;  // by slot, in ascending id
  double flops = 0;                              // num_ops of GPU kernels
};

// The file (or "rank N") and node key that errors about a graph name.
std::string location(const Trace& trace, int64_t rank);
std::string node_key(uint64_t id);

// Compiles a graph of a job of `template_count` traced ranks (send/recv
// peers must be below it); problems name `where` (its file, or "rank N"). GPU kernels keep their
// traced time unless `recompute` (the compute model from num_ops and tensor_size); copies take
// their bytes at pcie_Bps. gather_members, by collective slot: the traced group sizes of a
// standard-form trace, whose all-gather comm_size is each rank's input (empty: the named form,
// comm_size is the total). Every problem found is added to `sink`.
Template build_template(const Trace& trace, std::string where, int64_t template_count,
                        const GpuComputeSpec& spec, bool recompute, double pcie_Bps,
                        std::span<const int64_t> gather_members, sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads::chakra::replay
