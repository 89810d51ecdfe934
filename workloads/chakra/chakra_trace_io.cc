// Reading and writing Chakra ET files (workloads/chakra/chakra_trace.h).
//
// The framing -- a varint byte count before each message -- is read here,
// not by Protobuf's stream classes, so that every way a file can be cut or
// corrupted gets its own message naming the byte offset and the message
// index. Messages are counted from 0 in file order: message 0 is the
// GlobalMetadata, message k (k >= 1) the k-th Node. Each message's bytes are
// then parsed by the classes generated from proto/et_def.proto.
//
// Writing is deterministic: the same Trace gives the same bytes. A node's
// interpreted attributes are written first, in a fixed order (is_cpu_op,
// comm_type, comm_size, pg_name, comm_src, comm_dst, comm_tag, num_ops,
// tensor_size, then clustersim's own: duration_ns, stream, class, pg_desc,
// comm_total, copy_engine), with the value kinds Chakra's
// converters and ASTRA-sim's trace feeder use (integers int64_val,
// tensor_size uint64_val, strings string_val, is_cpu_op bool_val, which is
// always written because the feeder takes a node without it for a CPU op);
// the attributes clustersim does not interpret follow, byte for byte as read.
#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "proto/et_def.pb.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

namespace {

namespace pb = ::ChakraProtoMsg;

// A varint encodes 64 bits in at most 10 bytes of 7 bits each.
constexpr size_t kMaxVarintBytes = 10;
// Past this many problems in one file the rest is likely more of the same
// (a file that is not a Chakra trace at all); reading stops.
constexpr int kMaxDiagnostics = 20;

// Field tags (field number << 3 | wire type 2, length-delimited) of the
// repeated attribute fields, for appending attributes as encoded bytes.
constexpr uint8_t kNodeAttrTag = (10 << 3) | 2;
constexpr uint8_t kMetadataAttrTag = (2 << 3) | 2;

constexpr std::array<const char*, 11> kNodeTypeNames = {
    "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
    "STORAGE_NODE", "BATCH_NODE",     "CHECKPOINT_NODE"};
constexpr std::array<const char*, 10> kCommTypeNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

enum class VarintStatus { kOk, kTruncated, kOverlong, kTooLarge };

struct Varint {
  VarintStatus status = VarintStatus::kOk;
  uint64_t value = 0;
  size_t length = 0;  // bytes read (kTruncated: the bytes that were there)
};

Varint read_varint(std::string_view bytes, size_t pos) {
  Varint v;
  for (size_t i = 0; i < kMaxVarintBytes; ++i) {
    if (pos + i >= bytes.size()) {
      v.status = VarintStatus::kTruncated;
      v.length = i;
      return v;
    }
    const auto byte = static_cast<uint8_t>(bytes[pos + i]);
    if (i == kMaxVarintBytes - 1) {
      v.length = kMaxVarintBytes;
      // The 10th byte holds bit 63 only.
      if ((byte & 0x80) != 0) {
        v.status = VarintStatus::kOverlong;
        return v;
      }
      if (byte > 1) {
        v.status = VarintStatus::kTooLarge;
        return v;
      }
    }
    v.value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      v.length = i + 1;
      return v;
    }
  }
  return v;  // not reached: the 10th byte returns above
}

void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void append_delimited(std::string& out, std::string_view message) {
  append_varint(out, message.size());
  out += message;
}

// "a string", "a double", ... for "expected X, found Y".
std::string value_kind(const pb::AttributeProto& a) {
  using A = pb::AttributeProto;
  switch (a.value_case()) {
    case A::kDoubleVal:
    case A::kFloatVal:
      return "a floating-point number";
    case A::kBoolVal:
      return "a bool";
    case A::kStringVal:
      return "a string";
    case A::kBytesVal:
      return "bytes";
    case A::VALUE_NOT_SET:
      return "no value";
    case A::kInt32Val:
    case A::kInt64Val:
    case A::kUint32Val:
    case A::kUint64Val:
    case A::kSint32Val:
    case A::kSint64Val:
    case A::kFixed32Val:
    case A::kFixed64Val:
    case A::kSfixed32Val:
    case A::kSfixed64Val:
      return "an integer";
    default:
      return "a list";
  }
}

// The attribute's value as an int64 (any integer kind), or nullopt with
// `problem` set.
std::optional<int64_t> integer_value(const pb::AttributeProto& a, std::string& problem) {
  using A = pb::AttributeProto;
  auto unsigned_value = [&](uint64_t value) -> std::optional<int64_t> {
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      problem = "expected an integer within int64, found " + std::to_string(value);
      return std::nullopt;
    }
    return static_cast<int64_t>(value);
  };
  switch (a.value_case()) {
    case A::kInt32Val:
      return a.int32_val();
    case A::kInt64Val:
      return a.int64_val();
    case A::kUint32Val:
      return a.uint32_val();
    case A::kUint64Val:
      return unsigned_value(a.uint64_val());
    case A::kSint32Val:
      return a.sint32_val();
    case A::kSint64Val:
      return a.sint64_val();
    case A::kFixed32Val:
      return a.fixed32_val();
    case A::kFixed64Val:
      return unsigned_value(a.fixed64_val());
    case A::kSfixed32Val:
      return a.sfixed32_val();
    case A::kSfixed64Val:
      return a.sfixed64_val();
    default:
      problem = "expected an integer, found " + value_kind(a);
      return std::nullopt;
  }
}

// Collects the diagnostics of one file and says when to stop.
class FileProblems {
 public:
  explicit FileProblems(const std::string& file) : file_(file) {}

  void add(std::string message) {
    ++count_;
    if (count_ <= kMaxDiagnostics) {
      sink_.add({file_, 0, 0}, "", std::move(message));
    }
  }
  bool too_many() const { return count_ >= kMaxDiagnostics; }
  void throw_if_any(size_t stopped_at_message, bool stopped) {
    if (stopped && too_many()) {
      sink_.add({file_, 0, 0}, "",
                "stopped reading at message " + std::to_string(stopped_at_message) + " after " +
                    std::to_string(kMaxDiagnostics) + " errors");
    }
    sink_.throw_if_any();
  }

 private:
  const std::string& file_;
  sim::DiagnosticSink sink_;
  int count_ = 0;
};

// Fills the interpreted fields of `node` from `attr`, or keeps `attr` as a
// RawAttribute. `where` prefixes messages ("message 3 at byte 118: node 17").
void read_attribute(const pb::AttributeProto& attr, const std::string& where, Node& node,
                    FileProblems& problems) {
  const std::string& name = attr.name();
  auto fail = [&](const std::string& message) {
    problems.add(where + ": attribute " + name + ": " + message);
  };
  auto set_integer = [&](std::optional<int64_t>& field) {
    if (field) return fail("given more than once");
    std::string problem;
    std::optional<int64_t> value = integer_value(attr, problem);
    if (!value) return fail(problem);
    field = value;
  };
  auto set_string = [&](std::optional<std::string>& field) {
    if (field) return fail("given more than once");
    if (attr.value_case() != pb::AttributeProto::kStringVal) {
      return fail("expected a string, found " + value_kind(attr));
    }
    field = attr.string_val();
  };

  if (name == "comm_type") {
    set_integer(node.comm_type);
  } else if (name == "comm_size") {
    set_integer(node.comm_size);
  } else if (name == "pg_name") {
    set_string(node.pg_name);
  } else if (name == "comm_src") {
    set_integer(node.comm_src);
  } else if (name == "comm_dst") {
    set_integer(node.comm_dst);
  } else if (name == "comm_tag") {
    set_integer(node.comm_tag);
  } else if (name == "num_ops") {
    set_integer(node.num_ops);
  } else if (name == "tensor_size") {
    set_integer(node.tensor_size);
  } else if (name == "clustersim_duration_ns") {
    set_integer(node.duration_ns);
  } else if (name == "clustersim_stream") {
    set_integer(node.stream);
  } else if (name == "clustersim_class") {
    set_string(node.kernel_class);
  } else if (name == "clustersim_pg_desc") {
    set_string(node.pg_desc);
  } else if (name == "clustersim_comm_total") {
    set_integer(node.comm_total);
  } else if (name == "clustersim_copy_engine") {
    set_integer(node.copy_engine);
  } else if (name == "is_cpu_op") {
    // bool_val as Chakra writes it; some generators write an int32 0/1.
    if (attr.value_case() == pb::AttributeProto::kBoolVal) {
      node.is_cpu_op = attr.bool_val();
    } else {
      std::string problem;
      std::optional<int64_t> value = integer_value(attr, problem);
      if (!value) return fail("expected a bool, found " + value_kind(attr));
      node.is_cpu_op = *value != 0;
    }
  } else {
    node.other_attributes.push_back(RawAttribute{name, attr.SerializeAsString()});
  }
}

Node read_node(const pb::Node& message, const std::string& where, FileProblems& problems) {
  Node node;
  node.id = message.id();
  node.name = message.name();
  node.type = static_cast<int32_t>(message.type());
  node.ctrl_deps.assign(message.ctrl_deps().begin(), message.ctrl_deps().end());
  node.data_deps.assign(message.data_deps().begin(), message.data_deps().end());
  node.start_time_micros = message.start_time_micros();
  node.duration_micros = message.duration_micros();
  const std::string node_where = where + ": node " + std::to_string(node.id);
  for (const pb::AttributeProto& attr : message.attr()) {
    read_attribute(attr, node_where, node, problems);
  }
  return node;
}

pb::AttributeProto int_attribute(const char* name, int64_t value) {
  pb::AttributeProto a;
  a.set_name(name);
  a.set_int64_val(value);
  return a;
}

void add_attributes(const Node& node, pb::Node& message) {
  auto add = [&](pb::AttributeProto a) { *message.add_attr() = std::move(a); };
  auto add_int = [&](const char* name, const std::optional<int64_t>& value) {
    if (value) add(int_attribute(name, *value));
  };
  auto add_string = [&](const char* name, const std::optional<std::string>& value) {
    if (!value) return;
    pb::AttributeProto a;
    a.set_name(name);
    a.set_string_val(*value);
    add(std::move(a));
  };

  pb::AttributeProto cpu;
  cpu.set_name("is_cpu_op");
  cpu.set_bool_val(node.is_cpu_op);
  add(std::move(cpu));
  add_int("comm_type", node.comm_type);
  add_int("comm_size", node.comm_size);
  add_string("pg_name", node.pg_name);
  add_int("comm_src", node.comm_src);
  add_int("comm_dst", node.comm_dst);
  add_int("comm_tag", node.comm_tag);
  add_int("num_ops", node.num_ops);
  if (node.tensor_size) {
    // uint64_val as Chakra's generators and ASTRA-sim's feeder have it; a
    // negative size (which no reader accepts) stays readable as int64_val.
    if (*node.tensor_size >= 0) {
      pb::AttributeProto a;
      a.set_name("tensor_size");
      a.set_uint64_val(static_cast<uint64_t>(*node.tensor_size));
      add(std::move(a));
    } else {
      add(int_attribute("tensor_size", *node.tensor_size));
    }
  }
  add_int("clustersim_duration_ns", node.duration_ns);
  add_int("clustersim_stream", node.stream);
  add_string("clustersim_class", node.kernel_class);
  add_string("clustersim_pg_desc", node.pg_desc);
  add_int("clustersim_comm_total", node.comm_total);
  add_int("clustersim_copy_engine", node.copy_engine);
}

// message.SerializeAsString() followed by `raw` as repeated field `tag`
// (which must be the message's last field, so that the bytes are those the
// generated code would write had the attributes been parsed into it).
std::string with_raw_attributes(const google::protobuf::MessageLite& message, uint8_t tag,
                                const std::vector<RawAttribute>& raw) {
  std::string bytes = message.SerializeAsString();
  for (const RawAttribute& attr : raw) {
    bytes += static_cast<char>(tag);
    append_delimited(bytes, attr.encoded);
  }
  return bytes;
}

}  // namespace

const char* node_type_name(int32_t type) {
  if (type < 0 || static_cast<size_t>(type) >= kNodeTypeNames.size()) return "?";
  return kNodeTypeNames[static_cast<size_t>(type)];
}

const char* comm_type_name(int32_t type) {
  if (type < 0 || static_cast<size_t>(type) >= kCommTypeNames.size()) return "?";
  return kCommTypeNames[static_cast<size_t>(type)];
}

std::optional<std::string> metadata_string(const Trace& trace, const std::string& name,
                                           std::string* found_kind) {
  for (const RawAttribute& raw : trace.metadata) {
    if (raw.name != name) continue;
    pb::AttributeProto attr;
    if (attr.ParseFromString(raw.encoded) && attr.value_case() == pb::AttributeProto::kStringVal) {
      return attr.string_val();
    }
    if (found_kind) *found_kind = value_kind(attr);
    return std::nullopt;
  }
  if (found_kind) found_kind->clear();
  return std::nullopt;
}

std::string rank_trace_path(const std::string& prefix, int64_t rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

Trace parse_trace(const std::string& bytes, const std::string& file) {
  Trace trace;
  trace.file = file;
  FileProblems problems(file);
  if (bytes.empty()) {
    problems.add("empty file: expected a GlobalMetadata message first");
    problems.throw_if_any(0, false);
  }

  const std::string_view view(bytes);
  size_t pos = 0;
  size_t index = 0;
  bool stopped = false;
  pb::Node message;
  while (pos < bytes.size()) {
    if (problems.too_many()) {
      stopped = true;
      break;
    }
    const std::string what = index == 0 ? "GlobalMetadata" : "Node";
    const std::string where =
        "message " + std::to_string(index) + " at byte " + std::to_string(pos);
    const Varint length = read_varint(view, pos);
    if (length.status == VarintStatus::kTruncated) {
      problems.add(where + ": expected a varint length, found " + std::to_string(length.length) +
                   " of its bytes before the end of the file (truncated)");
      break;
    }
    if (length.status == VarintStatus::kOverlong) {
      problems.add(where + ": expected a varint length of at most 10 bytes, found a longer one");
      break;
    }
    if (length.status == VarintStatus::kTooLarge) {
      problems.add(where + ": expected a varint length within 64 bits, found a larger one");
      break;
    }
    const size_t body = pos + length.length;
    const size_t remaining = bytes.size() - body;
    if (length.value > remaining) {
      problems.add(where + ": expected a message of " + std::to_string(length.value) +
                   " bytes, found " + std::to_string(remaining) +
                   " before the end of the file (truncated)");
      break;
    }
    if (length.value > static_cast<uint64_t>(INT_MAX)) {
      problems.add(where + ": expected a message of at most " + std::to_string(INT_MAX) +
                   " bytes (Protobuf's limit), found " + std::to_string(length.value));
      break;
    }
    const char* data = bytes.data() + body;
    const int size = static_cast<int>(length.value);
    const std::string not_parsed = where + ": expected a " + what + ", found " +
                                   std::to_string(length.value) +
                                   " bytes that do not parse as one (malformed Protobuf, or a "
                                   "string that is not UTF-8)";
    if (index == 0) {
      pb::GlobalMetadata metadata;
      if (!metadata.ParseFromArray(data, size)) {
        problems.add(not_parsed);
      } else {
        trace.version = metadata.version();
        for (const pb::AttributeProto& attr : metadata.attr()) {
          trace.metadata.push_back(RawAttribute{attr.name(), attr.SerializeAsString()});
        }
      }
    } else {
      message.Clear();
      if (!message.ParseFromArray(data, size)) {
        problems.add(not_parsed);
      } else {
        trace.nodes.push_back(read_node(message, where, problems));
      }
    }
    pos = body + static_cast<size_t>(length.value);
    ++index;
  }
  problems.throw_if_any(index, stopped);
  return trace;
}

Trace read_trace_file(const std::string& path) {
  return parse_trace(sim::read_file_text(path), path);
}

std::string serialize_trace(const Trace& trace) {
  std::string out;
  pb::GlobalMetadata metadata;
  metadata.set_version(trace.version);
  append_delimited(out, with_raw_attributes(metadata, kMetadataAttrTag, trace.metadata));

  pb::Node message;
  for (const Node& node : trace.nodes) {
    message.Clear();
    message.set_id(node.id);
    message.set_name(node.name);
    // The generated enum spans all of int32 (proto3 enums are open), so any
    // value read from a file is written back as it was.
    message.set_type(static_cast<pb::NodeType>(node.type));
    for (uint64_t dep : node.ctrl_deps) message.add_ctrl_deps(dep);
    for (uint64_t dep : node.data_deps) message.add_data_deps(dep);
    message.set_start_time_micros(node.start_time_micros);
    message.set_duration_micros(node.duration_micros);
    add_attributes(node, message);
    append_delimited(out, with_raw_attributes(message, kNodeAttrTag, node.other_attributes));
  }
  return out;
}

void write_trace_file(const std::string& path, const Trace& trace) {
  sim::write_file_atomically(path, serialize_trace(trace));
}

}  // namespace clustersim::workloads::chakra
