// Execution traces in the Chakra ET format (MLCommons Chakra, the input of
// ASTRA-sim): one graph per rank, stored as a file of length-delimited
// Protobuf messages -- a varint byte count, then that many bytes of message
// -- the first a GlobalMetadata, every following one a Node
// (proto/et_def.proto, wire-compatible with Chakra's schema/protobuf/
// et_def.proto for the parts used here). The rank's file is PREFIX.<rank>.et.
//
// This header is the plain C++ form of a trace that the rest of clustersim
// uses (no Protobuf types leak out of chakra_trace_io.cc), and the API of
// the Chakra features: reading and writing files (chakra_trace_io.cc),
// checking graphs (chakra_trace_check.cc), communicator groups
// (chakra_comm_groups.cc), telling the standard form from clustersim's
// older named one (chakra_forms.cc, docs/chakra-traces.md), exporting a
// simulated step (chakra_export.cc) and replaying traces on a cluster
// (chakra_replay.cc).
//
// Attributes (Node.attr, Chakra's names and value kinds as PyTorch's
// converter writes them; the readers accept any integer kind for integers):
//   comm_type    int64   CommType of a COMM_COLL_NODE
//   comm_size    int64   bytes of a collective or of a send/recv; for a
//                        collective, what each rank passes in (the standard
//                        form: all_gather its shard, reduce_scatter and
//                        all_reduce the whole buffer), or, in the named form
//                        of older clustersim traces, the nccl-tests size
//                        (all_gather the total output); see TraceForm below
//   pg_name      string  the process group of a collective (comm groups):
//                        "0", "1", ... in the standard form
//   comm_src, comm_dst, comm_tag  int64  peers and tag of send/recv
//   num_ops      int64   FLOPs of a COMP_NODE
//   tensor_size  uint64  bytes a COMP_NODE moves through HBM, or a MEM_*
//                        node copies over PCIe
//   is_cpu_op    bool    a host (CPU) operation, not GPU work
// and clustersim's own, which other tools ignore:
//   clustersim_duration_ns  int64  exact duration (duration_micros is whole us)
//   clustersim_stream       int64  the GPU stream the node ran on
//   clustersim_class        string kernel class (gemm, attention, ...) or
//                                  collective role
//   clustersim_pg_desc      string what a numeric pg_name is ("shard_0",
//                                  "world", "tp_5", "shard_0.reduce")
//   clustersim_comm_total   int64  an all_gather's total output in bytes when
//                                  the group size does not divide it (then
//                                  comm_size is the padded shard, rounded up)
// and in the GlobalMetadata:
//   clustersim_trace_form   string "standard" or "named" (TraceForm)
//
// Units: bytes, FLOPs, microseconds in the file; nanoseconds where the
// fields say so.
// Thread safety: value types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::workloads::chakra {

// Chakra's NodeType and CollectiveCommType values (the wire numbers).
enum class NodeType : int32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
  kStorage = 8,
  kBatch = 9,
  kCheckpoint = 10,
};

enum class CommType : int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

// "COMP_NODE", "ALL_GATHER", ... (Chakra's spelling); "?" when out of range.
const char* node_type_name(int32_t type);
const char* comm_type_name(int32_t type);

// One attribute as stored, for attributes clustersim does not interpret
// (kept so that a read-then-write round trip loses nothing it understands;
// unknown ones are carried as their encoded bytes).
struct RawAttribute {
  std::string name;
  std::string encoded;  // the serialized AttributeProto
};

struct Node {
  uint64_t id = 0;
  std::string name;
  int32_t type = 0;  // NodeType value as read (may be out of range: check_traces says so)
  std::vector<uint64_t> ctrl_deps;
  std::vector<uint64_t> data_deps;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;

  // Interpreted attributes (absent when the node has none of that name).
  std::optional<int64_t> comm_type;
  std::optional<int64_t> comm_size;
  std::optional<std::string> pg_name;
  std::optional<int64_t> comm_src;
  std::optional<int64_t> comm_dst;
  std::optional<int64_t> comm_tag;
  std::optional<int64_t> num_ops;
  std::optional<int64_t> tensor_size;
  bool is_cpu_op = false;
  std::optional<int64_t> duration_ns;       // clustersim_duration_ns
  std::optional<int64_t> stream;            // clustersim_stream
  std::optional<std::string> kernel_class;  // clustersim_class
  std::optional<std::string> pg_desc;       // clustersim_pg_desc
  std::optional<int64_t> comm_total;        // clustersim_comm_total
  // clustersim_copy_engine: 1 on a send or receive that a copy engine moves
  // (async TP's symmetric-memory copies): it takes no SMs from compute.
  std::optional<int64_t> copy_engine;

  std::vector<RawAttribute> other_attributes;

  // duration_ns when present, else duration_micros x 1000.
  int64_t duration_in_ns() const {
    return duration_ns ? *duration_ns : static_cast<int64_t>(duration_micros) * 1000;
  }
};

struct Trace {
  std::string file;     // where it was read from (for errors); empty if built in memory
  std::string version;  // GlobalMetadata.version
  std::vector<RawAttribute> metadata;  // GlobalMetadata.attr
  std::vector<Node> nodes;             // in file order
};

// The traces of a job's ranks with identical graphs stored once (non-owning
// view): rank r replays graphs[graph_of[r]], and messages about rank r name
// files[r]. Graphs come in the order of their first rank (every function
// that takes a JobTraces relies on it, so that it reports problems in rank
// order as it would for one Trace per rank). A graph shared by ranks keeps
// the GlobalMetadata of its first rank; read_rank_traces shares a graph
// only between ranks whose clustersim_trace_form is the same, the one
// metadata attribute a replay reads.
struct JobTraces {
  std::span<const Trace> graphs;
  std::span<const int32_t> graph_of;   // by rank; empty: rank r is graphs[r]
  std::span<const std::string> files;  // by rank; empty: each graph's own file

  int64_t ranks() const {
    return static_cast<int64_t>(graph_of.empty() ? graphs.size() : graph_of.size());
  }
  int32_t graph_index(int64_t rank) const {
    return graph_of.empty() ? static_cast<int32_t>(rank) : graph_of[static_cast<size_t>(rank)];
  }
  const Trace& of(int64_t rank) const { return graphs[static_cast<size_t>(graph_index(rank))]; }
  // The file that rank's graph was read from, or "rank R" when built in memory.
  std::string location(int64_t rank) const {
    const std::string& file = files.empty() ? of(rank).file : files[static_cast<size_t>(rank)];
    return file.empty() ? "rank " + std::to_string(rank) : file;
  }
};

// What read_rank_traces returns: owns what its view() points into.
struct RankTraces {
  std::vector<Trace> graphs;  // distinct graphs, each holding its first rank's file and metadata
  std::vector<int32_t> graph_of;   // by rank
  std::vector<std::string> files;  // by rank
  JobTraces view() const { return JobTraces{graphs, graph_of, files}; }
};

// Process group (pg_name: an id "0", "1", ... in the standard form, a name
// in the named form) -> its ranks (global rank ids), as in ASTRA-sim's
// communicator-group JSON: {"<pg_name>": [r0, r1, ...], ...}.
using CommGroups = std::map<std::string, std::vector<int64_t>>;

// ---- chakra_trace_io.cc ----
// Reads PREFIX.<rank>.et. Errors (sim::ConfigError) name the file, the byte
// offset and the message index: truncated length or message, a varint
// longer than 10 bytes or past the end, bytes that do not parse as the
// message, an empty file (no GlobalMetadata).
Trace read_trace_file(const std::string& path);
Trace parse_trace(const std::string& bytes, const std::string& file);
std::string serialize_trace(const Trace& trace);
void write_trace_file(const std::string& path, const Trace& trace);    // atomic
std::string rank_trace_path(const std::string& prefix, int64_t rank);  // PREFIX.<rank>.et

// Reads PREFIX.0.et .. PREFIX.<ranks-1>.et, in rank order. A file whose
// Node messages are byte for byte those of an earlier file (and whose
// clustersim_trace_form is the same) is not parsed again past its
// GlobalMetadata: its rank shares the earlier graph. Errors are those of
// read_trace_file for the first file that has one.
// Memory: the parsed distinct graphs, and while reading, their node bytes.
RankTraces read_rank_traces(const std::string& prefix, int64_t ranks);

// The string value of the GlobalMetadata attribute `name`: nullopt when the
// trace has none; `*found_kind` ("an integer", ...) set and nullopt when it
// holds no string.
std::optional<std::string> metadata_string(const Trace& trace, const std::string& name,
                                           std::string* found_kind = nullptr);

// ---- chakra_comm_groups.cc ----
// Reads / writes the communicator-group JSON (errors name file:line:col).
// Written keys come in numeric order when every key is a decimal number
// ("0", "1", ..., "10"), else in string order.
CommGroups read_comm_groups(const std::string& path);
// The same for text in memory; `path` is what messages name.
CommGroups parse_comm_groups(std::string_view text, const std::string& path);
std::string comm_groups_json(const CommGroups& groups);

// ---- chakra_forms.cc ----
// The two conventions a job's traces may follow (docs/chakra-traces.md):
//  * kStandard, what ASTRA-sim and PyTorch's Chakra converter use: pg_name
//    a decimal process-group id ("0" the whole world), the comm-group file
//    keyed by those ids, comm_size what each rank passes in (an all_gather's
//    input shard: the output is group size x comm_size, or
//    clustersim_comm_total when given).
//  * kNamed, clustersim's traces before the standard form: named groups
//    ("world", "shard_0"), comm_size the nccl-tests size (an all_gather's
//    total output).
// Only all_gather sizes differ: reduce_scatter's input and all_reduce's
// buffer are the nccl-tests size in both.
//
// The rule, in order:
//  1. If any trace's GlobalMetadata has clustersim_trace_form, every trace
//     must have the same value, "standard" or "named", and it decides.
//  2. Else the job is kNamed when any COMM_COLL_NODE's pg_name or any key
//     of the comm groups is not a decimal number (digits only), and
//     kStandard otherwise (numeric ids, or no pg_name at all).
// Errors (sim::ConfigError naming the file and the attribute): a value
// other than "standard" / "named", traces that disagree or lack it while
// another has it.
enum class TraceForm { kStandard, kNamed };
const char* trace_form_name(TraceForm form);  // "standard" / "named"

struct FormDecision {
  TraceForm form = TraceForm::kStandard;
  std::string why;  // e.g. "pg_name 'shard_0' (t.0.et node 12) is not a number"
};
FormDecision detect_trace_form(std::span<const Trace> traces, const CommGroups& groups);
FormDecision detect_trace_form(const JobTraces& traces, const CommGroups& groups);

// True for "0", "17": one or more ASCII digits (what std::stoi readers take
// without surprises).
bool is_numeric_pg_name(std::string_view name);

// The bytes an all_gather of a standard-form trace moves in nccl-tests
// terms (the total output the tuner takes): clustersim_comm_total when the
// node has it, else group_size x comm_size. nullopt with `problem` set when
// comm_size is negative, they disagree (comm_size not the total /
// group_size rounded up) or the product overflows int64.
std::optional<int64_t> all_gather_total(const Node& node, int64_t comm_size, int64_t group_size,
                                        std::string& problem);

// ---- chakra_trace_check.cc ----
// Checks the graphs of every rank (rank r = ranks[r]) and reports every
// problem at once as a sim::ConfigError naming the file and node id:
// duplicate ids, dangling ctrl/data dependencies, cycles (one node of each
// cycle named), node types out of range or not replayable (INVALID, STORAGE,
// BATCH, CHECKPOINT), collectives without or with an unknown comm_type or
// without comm_size, send/recv without peers or with a peer out of range,
// a collective's pg_name missing from `groups` (when groups is not empty)
// or naming a group that does not hold the rank.
// A graph shared by several ranks is checked in full once; its other ranks
// get only the checks that depend on the rank (group membership) unless
// the first found problems, so that the errors are those of one Trace per
// rank.
void check_traces(const std::vector<Trace>& ranks, const CommGroups& groups);
void check_traces(const JobTraces& ranks, const CommGroups& groups);

}  // namespace clustersim::workloads::chakra
