#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "proto/et_def.pb.h"
#include "tests/support/scratch_dir.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {
namespace {

using test_support::ScratchDir;

// ---- Protobuf wire format by hand, for fixtures independent of our writer.

std::string varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
  return out;
}
// Field key: number << 3 | wire type (0 varint, 2 length-delimited).
std::string key(uint32_t field, uint32_t wire_type) { return varint(field << 3 | wire_type); }
std::string varint_field(uint32_t field, uint64_t value) { return key(field, 0) + varint(value); }
std::string bytes_field(uint32_t field, const std::string& bytes) {
  return key(field, 2) + varint(bytes.size()) + bytes;
}
// One message of the file: its length, then its bytes.
std::string delimited(const std::string& message) { return varint(message.size()) + message; }

// AttributeProto: name = 1, int64_val = 9, uint64_val = 13, sint64_val = 17
// (zigzag), bool_val = 27, string_val = 29.
std::string attr_int64(const std::string& name, uint64_t twos_complement) {
  return bytes_field(1, name) + varint_field(9, twos_complement);
}
std::string attr_uint64(const std::string& name, uint64_t value) {
  return bytes_field(1, name) + varint_field(13, value);
}
std::string attr_sint64(const std::string& name, int64_t value) {
  const uint64_t zigzag = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  return bytes_field(1, name) + varint_field(17, zigzag);
}
std::string attr_bool(const std::string& name, bool value) {
  return bytes_field(1, name) + varint_field(27, value ? 1 : 0);
}
std::string attr_string(const std::string& name, const std::string& value) {
  return bytes_field(1, name) + bytes_field(29, value);
}

// GlobalMetadata{version: "0.0.4"}, 8 bytes with its length.
const std::string kMetadata = delimited(bytes_field(1, "0.0.4"));

std::string error_of_parse(const std::string& bytes) {
  try {
    parse_trace(bytes, "t.0.et");
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// ---- Names and paths.

TEST(ChakraTraceIo, NamesAndPaths) {
  EXPECT_STREQ(node_type_name(0), "INVALID_NODE");
  EXPECT_STREQ(node_type_name(4), "COMP_NODE");
  EXPECT_STREQ(node_type_name(7), "COMM_COLL_NODE");
  EXPECT_STREQ(node_type_name(10), "CHECKPOINT_NODE");
  EXPECT_STREQ(node_type_name(11), "?");
  EXPECT_STREQ(node_type_name(-1), "?");
  EXPECT_STREQ(comm_type_name(0), "ALL_REDUCE");
  EXPECT_STREQ(comm_type_name(7), "REDUCE_SCATTER");
  EXPECT_STREQ(comm_type_name(9), "BARRIER");
  EXPECT_STREQ(comm_type_name(10), "?");
  EXPECT_EQ(rank_trace_path("out/llama", 3), "out/llama.3.et");
}

// ---- A file written byte by byte, read back field by field.

TEST(ChakraTraceIo, HandWrittenBytesReadAsChakraWritesThem) {
  // Node 17, an all-gather, with the field kinds Chakra's writers use and
  // some they may: packed ctrl_deps, unpacked data_deps, comm_size as
  // uint64, comm_tag as sint64, an attribute clustersim does not know.
  const std::string node17 =
      varint_field(1, 17) + bytes_field(2, "ag") + varint_field(3, 7) +
      bytes_field(4, varint(3) + varint(300)) +     // ctrl_deps [3, 300], packed
      varint_field(5, 5) + varint_field(5, 6) +     // data_deps [5, 6], unpacked
      varint_field(6, 1000) + varint_field(7, 250)  // start 1000 us, 250 us
      + bytes_field(10, attr_bool("is_cpu_op", false)) +
      bytes_field(10, attr_int64("comm_type", 2)) +
      bytes_field(10, attr_uint64("comm_size", 1 << 20)) +
      bytes_field(10, attr_string("pg_name", "dp")) + bytes_field(10, attr_sint64("comm_tag", -3)) +
      bytes_field(10, attr_int64("rf_id", 5)) +
      bytes_field(10, attr_int64("clustersim_duration_ns", 250123));
  // A compute node with the defaults left out (proto3 writes no zeros),
  // num_ops negative as int64 (ten 0xff-ish bytes) to exercise the varint.
  const std::string node18 = varint_field(1, 18) + varint_field(3, 4) +
                             bytes_field(10, attr_int64("num_ops", static_cast<uint64_t>(-7))) +
                             bytes_field(10, attr_uint64("tensor_size", 4096)) +
                             bytes_field(10, attr_bool("is_cpu_op", true));
  // The key of a field number beyond the schema (Chakra's storage = 11,
  // here an unknown varint field 40) is skipped.
  const std::string bytes =
      kMetadata + delimited(node17) + delimited(node18 + varint_field(40, 1)) + delimited("");

  const Trace t = parse_trace(bytes, "t.0.et");
  EXPECT_EQ(t.file, "t.0.et");
  EXPECT_EQ(t.version, "0.0.4");
  EXPECT_TRUE(t.metadata.empty());
  ASSERT_EQ(t.nodes.size(), 3u);

  const Node& ag = t.nodes[0];
  EXPECT_EQ(ag.id, 17u);
  EXPECT_EQ(ag.name, "ag");
  EXPECT_EQ(ag.type, static_cast<int32_t>(NodeType::kCommColl));
  EXPECT_EQ(ag.ctrl_deps, (std::vector<uint64_t>{3, 300}));
  EXPECT_EQ(ag.data_deps, (std::vector<uint64_t>{5, 6}));
  EXPECT_EQ(ag.start_time_micros, 1000u);
  EXPECT_EQ(ag.duration_micros, 250u);
  EXPECT_FALSE(ag.is_cpu_op);
  EXPECT_EQ(ag.comm_type, static_cast<int64_t>(CommType::kAllGather));
  EXPECT_EQ(ag.comm_size, 1 << 20);
  EXPECT_EQ(ag.pg_name, "dp");
  EXPECT_EQ(ag.comm_tag, -3);
  EXPECT_FALSE(ag.comm_src.has_value());
  EXPECT_FALSE(ag.num_ops.has_value());
  EXPECT_EQ(ag.duration_ns, 250123);
  EXPECT_EQ(ag.duration_in_ns(), 250123);
  ASSERT_EQ(ag.other_attributes.size(), 1u);
  EXPECT_EQ(ag.other_attributes[0].name, "rf_id");
  EXPECT_EQ(ag.other_attributes[0].encoded, attr_int64("rf_id", 5));

  const Node& comp = t.nodes[1];
  EXPECT_EQ(comp.id, 18u);
  EXPECT_EQ(comp.name, "");
  EXPECT_EQ(comp.type, static_cast<int32_t>(NodeType::kComp));
  EXPECT_EQ(comp.num_ops, -7);
  EXPECT_EQ(comp.tensor_size, 4096);
  EXPECT_TRUE(comp.is_cpu_op);
  EXPECT_EQ(comp.duration_in_ns(), 0);

  // An empty message is a Node with every field at its default.
  EXPECT_EQ(t.nodes[2].id, 0u);
  EXPECT_EQ(t.nodes[2].type, 0);
}

TEST(ChakraTraceIo, NodeTypeOutOfRangeIsKeptForTheCheck) {
  const Trace t = parse_trace(kMetadata + delimited(varint_field(1, 1) + varint_field(3, 42)), "x");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].type, 42);
}

// ---- Writing.

Trace sample_trace() {
  Trace t;
  t.version = "0.0.4";
  t.metadata.push_back({"schema", attr_string("schema", "1.1.1-chakra.0.0.4")});

  Node comp;
  comp.id = 1;
  comp.name = "layers.0.attention";
  comp.type = static_cast<int32_t>(NodeType::kComp);
  comp.start_time_micros = 10;
  comp.duration_micros = 153;
  comp.num_ops = 4'000'000'000'000;
  comp.tensor_size = 1 << 30;
  comp.duration_ns = 152'700;
  comp.stream = 7;
  comp.kernel_class = "attention";
  comp.other_attributes.push_back({"rf_id", attr_int64("rf_id", 5)});
  comp.other_attributes.push_back({"op_schema", attr_string("op_schema", "aten::mm(Tensor)")});

  Node coll;
  coll.id = 2;
  coll.name = "all_gather";
  coll.type = static_cast<int32_t>(NodeType::kCommColl);
  coll.data_deps = {1};
  coll.ctrl_deps = {1};
  coll.comm_type = static_cast<int64_t>(CommType::kAllGather);
  coll.comm_size = 123456789;
  coll.pg_name = "dp_shard.0";

  Node send;
  send.id = 3;
  send.type = static_cast<int32_t>(NodeType::kCommSend);
  send.data_deps = {2};
  send.comm_src = 0;
  send.comm_dst = 1;
  send.comm_tag = 9;
  send.comm_size = 64;

  Node host;
  host.id = 4;
  host.type = static_cast<int32_t>(NodeType::kComp);
  host.is_cpu_op = true;
  host.tensor_size = -1;  // nonsense, but it must survive a round trip
  t.nodes = {comp, coll, send, host};
  return t;
}

void expect_same(const Node& a, const Node& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.ctrl_deps, b.ctrl_deps);
  EXPECT_EQ(a.data_deps, b.data_deps);
  EXPECT_EQ(a.start_time_micros, b.start_time_micros);
  EXPECT_EQ(a.duration_micros, b.duration_micros);
  EXPECT_EQ(a.comm_type, b.comm_type);
  EXPECT_EQ(a.comm_size, b.comm_size);
  EXPECT_EQ(a.pg_name, b.pg_name);
  EXPECT_EQ(a.comm_src, b.comm_src);
  EXPECT_EQ(a.comm_dst, b.comm_dst);
  EXPECT_EQ(a.comm_tag, b.comm_tag);
  EXPECT_EQ(a.num_ops, b.num_ops);
  EXPECT_EQ(a.tensor_size, b.tensor_size);
  EXPECT_EQ(a.is_cpu_op, b.is_cpu_op);
  EXPECT_EQ(a.duration_ns, b.duration_ns);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.kernel_class, b.kernel_class);
  ASSERT_EQ(a.other_attributes.size(), b.other_attributes.size());
  for (size_t i = 0; i < a.other_attributes.size(); ++i) {
    EXPECT_EQ(a.other_attributes[i].name, b.other_attributes[i].name);
    EXPECT_EQ(a.other_attributes[i].encoded, b.other_attributes[i].encoded);
  }
}

TEST(ChakraTraceIo, RoundTripKeepsEverythingIncludingUnknownAttributes) {
  const Trace original = sample_trace();
  const std::string bytes = serialize_trace(original);
  const Trace back = parse_trace(bytes, "t.0.et");
  EXPECT_EQ(back.version, original.version);
  ASSERT_EQ(back.metadata.size(), 1u);
  EXPECT_EQ(back.metadata[0].name, "schema");
  EXPECT_EQ(back.metadata[0].encoded, original.metadata[0].encoded);
  ASSERT_EQ(back.nodes.size(), original.nodes.size());
  for (size_t i = 0; i < back.nodes.size(); ++i) {
    SCOPED_TRACE("node " + std::to_string(original.nodes[i].id));
    expect_same(back.nodes[i], original.nodes[i]);
  }
  // Deterministic: writing what was read gives the same bytes.
  EXPECT_EQ(serialize_trace(back), bytes);
}

// clustersim_pg_desc (a string) and clustersim_comm_total (an int64) are
// read back into their fields, written after clustersim_class; the
// GlobalMetadata's strings are found by name.
TEST(ChakraTraceIo, PgDescCommTotalAndMetadataStrings) {
  Trace t;
  t.version = "0.0.4";
  t.metadata.push_back({"clustersim_trace_form", attr_string("clustersim_trace_form", "standard")});
  t.metadata.push_back({"clustersim_rank", attr_int64("clustersim_rank", 3)});
  Node n;
  n.id = 5;
  n.type = static_cast<int32_t>(NodeType::kCommColl);
  n.comm_type = static_cast<int64_t>(CommType::kAllGather);
  n.comm_size = 11;
  n.pg_name = "2";
  n.kernel_class = "shard";
  n.pg_desc = "shard_1";
  n.comm_total = 31;
  t.nodes = {n};
  const Trace back = parse_trace(serialize_trace(t), "t.0.et");
  ASSERT_EQ(back.nodes.size(), 1u);
  EXPECT_EQ(back.nodes[0].pg_desc, "shard_1");
  EXPECT_EQ(back.nodes[0].comm_total, 31);
  EXPECT_TRUE(back.nodes[0].other_attributes.empty());
  const std::string bytes = serialize_trace(t);
  EXPECT_LT(bytes.find("clustersim_class"), bytes.find("clustersim_pg_desc"));
  EXPECT_LT(bytes.find("clustersim_pg_desc"), bytes.find("clustersim_comm_total"));
  EXPECT_EQ(metadata_string(back, "clustersim_trace_form"), "standard");
  std::string kind = "?";
  EXPECT_EQ(metadata_string(back, "clustersim_rank", &kind), std::nullopt);
  EXPECT_EQ(kind, "an integer");
  EXPECT_EQ(metadata_string(back, "absent", &kind), std::nullopt);
  EXPECT_EQ(kind, "");
}

TEST(ChakraTraceIo, WritesTheBytesChakraWrites) {
  Trace t;
  t.version = "0.0.4";
  Node n;
  n.id = 1;
  n.name = "n";
  n.type = static_cast<int32_t>(NodeType::kComp);
  n.duration_micros = 5;
  n.num_ops = 100;
  t.nodes = {n};
  // GlobalMetadata: 0a 05 "0.0.4". Node: id 08 01, name 12 01 "n", type
  // 18 04, duration 38 05, then attr (field 10, key 0x52): is_cpu_op as
  // bool_val false (key 0xd8 0x01, a oneof member is written even when 0)
  // and num_ops as int64_val (key 0x48).
  const std::string expected = std::string(
                                   "\x07\x0a\x05"
                                   "0.0.4",
                                   8) +
                               std::string(
                                   "\x26"
                                   "\x08\x01"
                                   "\x12\x01n"
                                   "\x18\x04"
                                   "\x38\x05"
                                   "\x52\x0e"
                                   "\x0a\x09"
                                   "is_cpu_op"
                                   "\xd8\x01\x00"
                                   "\x52\x0b"
                                   "\x0a\x07"
                                   "num_ops"
                                   "\x48\x64",
                                   39);
  EXPECT_EQ(serialize_trace(t), expected);
}

// What ASTRA-sim's feeder reads: the value kinds of each attribute, checked
// with the generated classes (as a Chakra reader would parse them).
TEST(ChakraTraceIo, AttributeValueKindsAreChakras) {
  const std::string bytes = serialize_trace(sample_trace());
  // Skip the metadata message (its length fits one byte here).
  size_t pos = 1 + static_cast<uint8_t>(bytes[0]);
  std::vector<ChakraProtoMsg::Node> nodes;
  while (pos < bytes.size()) {
    uint64_t length = 0;
    int shift = 0;
    while (true) {
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      length |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    ChakraProtoMsg::Node node;
    ASSERT_TRUE(node.ParseFromArray(bytes.data() + pos, static_cast<int>(length)));
    nodes.push_back(node);
    pos += length;
  }
  ASSERT_EQ(nodes.size(), 4u);
  using A = ChakraProtoMsg::AttributeProto;
  auto kind_of = [&](size_t node, const std::string& name) {
    for (const A& a : nodes[node].attr()) {
      if (a.name() == name) return a.value_case();
    }
    return A::VALUE_NOT_SET;
  };
  EXPECT_EQ(kind_of(0, "is_cpu_op"), A::kBoolVal);
  EXPECT_EQ(kind_of(0, "num_ops"), A::kInt64Val);
  EXPECT_EQ(kind_of(0, "tensor_size"), A::kUint64Val);
  EXPECT_EQ(kind_of(0, "clustersim_duration_ns"), A::kInt64Val);
  EXPECT_EQ(kind_of(0, "clustersim_class"), A::kStringVal);
  EXPECT_EQ(kind_of(0, "rf_id"), A::kInt64Val);
  EXPECT_EQ(kind_of(1, "comm_type"), A::kInt64Val);
  EXPECT_EQ(kind_of(1, "comm_size"), A::kInt64Val);
  EXPECT_EQ(kind_of(1, "pg_name"), A::kStringVal);
  EXPECT_EQ(kind_of(2, "comm_src"), A::kInt64Val);
  EXPECT_EQ(kind_of(2, "comm_dst"), A::kInt64Val);
  EXPECT_EQ(kind_of(3, "tensor_size"), A::kInt64Val);  // negative
  EXPECT_EQ(nodes[1].type(), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(nodes[0].attr(0).name(), "is_cpu_op");  // the fixed order starts with it
}

TEST(ChakraTraceIo, FilesRoundTripAndMissingFileIsAnError) {
  ScratchDir dir;
  const std::string path = rank_trace_path(dir.file("trace"), 0);
  write_trace_file(path, sample_trace());
  EXPECT_EQ(dir.list(), std::vector<std::string>{"trace.0.et"});  // no temporary left
  const Trace back = read_trace_file(path);
  EXPECT_EQ(back.file, path);
  EXPECT_EQ(back.nodes.size(), 4u);
  EXPECT_EQ(test_support::read_all(path), serialize_trace(sample_trace()));

  try {
    read_trace_file(dir.file("missing.0.et"));
    FAIL() << "no error";
  } catch (const sim::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.file("missing.0.et") + ": error: cannot read the file: no such file");
  }
}

// ---- Malformed files: each its own message.

TEST(ChakraTraceIo, EmptyFile) {
  EXPECT_EQ(error_of_parse(""),
            "t.0.et: error: empty file: expected a GlobalMetadata message first");
}

TEST(ChakraTraceIo, TruncatedLength) {
  // 0x80: a varint byte that says more follow, then the end.
  EXPECT_EQ(error_of_parse(kMetadata + "\x80"),
            "t.0.et: error: message 1 at byte 8: expected a varint length, found 1 of its bytes "
            "before the end of the file (truncated)");
}

TEST(ChakraTraceIo, TruncatedMessage) {
  const std::string node = varint_field(1, 1) + varint_field(3, 4);  // 4 bytes
  // Message 3 announces 40 bytes and 12 follow.
  const std::string bytes =
      kMetadata + delimited(node) + delimited(node) + varint(40) + std::string(12, '\0');
  ASSERT_EQ(kMetadata.size() + 2 * (1 + node.size()), 18u);
  EXPECT_EQ(error_of_parse(bytes),
            "t.0.et: error: message 3 at byte 18: expected a message of 40 bytes, found 12 "
            "before the end of the file (truncated)");
  // A length far beyond the file, as a corrupt 64-bit length would be.
  EXPECT_EQ(error_of_parse(kMetadata + varint(uint64_t{1} << 62)),
            "t.0.et: error: message 1 at byte 8: expected a message of 4611686018427387904 "
            "bytes, found 0 before the end of the file (truncated)");
}

TEST(ChakraTraceIo, OverlongVarint) {
  // Eleven bytes with the continuation bit: no varint is that long.
  EXPECT_EQ(error_of_parse(kMetadata + std::string(11, '\xff')),
            "t.0.et: error: message 1 at byte 8: expected a varint length of at most 10 bytes, "
            "found a longer one");
  // Ten bytes whose last carries more than bit 63.
  EXPECT_EQ(error_of_parse(kMetadata + std::string(9, '\xff') + "\x02"),
            "t.0.et: error: message 1 at byte 8: expected a varint length within 64 bits, "
            "found a larger one");
  // The longest valid varint, 2^64 - 1, is a length past the end.
  EXPECT_EQ(error_of_parse(kMetadata + std::string(9, '\xff') + "\x01"),
            "t.0.et: error: message 1 at byte 8: expected a message of 18446744073709551615 "
            "bytes, found 0 before the end of the file (truncated)");
}

TEST(ChakraTraceIo, GarbageThatDoesNotParse) {
  // 0x0f: field 1 with wire type 7, which does not exist; 0xff 0xff 0xff:
  // a field key cut off inside its varint.
  const std::string bytes =
      kMetadata + delimited("\x0f") + delimited("\x08\x01") + delimited("\xff\xff\xff");
  EXPECT_EQ(error_of_parse(bytes),
            "t.0.et: error: message 1 at byte 8: expected a Node, found 1 bytes that do not "
            "parse as one (malformed Protobuf, or a string that is not UTF-8)\n"
            "t.0.et: error: message 3 at byte 13: expected a Node, found 3 bytes that do not "
            "parse as one (malformed Protobuf, or a string that is not UTF-8)");
  EXPECT_EQ(error_of_parse(delimited("\x0f")),
            "t.0.et: error: message 0 at byte 0: expected a GlobalMetadata, found 1 bytes that "
            "do not parse as one (malformed Protobuf, or a string that is not UTF-8)");
  // Proto3 strings must be UTF-8 (Protobuf also logs this one to stderr).
  EXPECT_EQ(error_of_parse(kMetadata + delimited(bytes_field(2, "\xff\xfe"))),
            "t.0.et: error: message 1 at byte 8: expected a Node, found 4 bytes that do not "
            "parse as one (malformed Protobuf, or a string that is not UTF-8)");
  // A JSON file given by mistake: '{' (0x7b) is field 15, wire type 3, a
  // length of 123 bytes is announced by the first byte.
  EXPECT_EQ(error_of_parse("{\"traceEvents\": []}"),
            "t.0.et: error: message 0 at byte 0: expected a message of 123 bytes, found 18 "
            "before the end of the file (truncated)");
}

TEST(ChakraTraceIo, AttributesOfTheWrongKind) {
  const std::string node =
      varint_field(1, 17) + varint_field(3, 7) + bytes_field(10, attr_string("comm_size", "1MB")) +
      bytes_field(10, attr_int64("comm_type", 0)) + bytes_field(10, attr_int64("comm_type", 2)) +
      bytes_field(10, attr_int64("pg_name", 0)) + bytes_field(10, attr_string("is_cpu_op", "no")) +
      bytes_field(10, attr_uint64("num_ops", ~uint64_t{0})) +
      bytes_field(10, bytes_field(1, "tensor_size"));  // no value
  EXPECT_EQ(error_of_parse(kMetadata + delimited(node)),
            "t.0.et: error: message 1 at byte 8: node 17: attribute comm_size: expected an "
            "integer, found a string\n"
            "t.0.et: error: message 1 at byte 8: node 17: attribute comm_type: given more than "
            "once\n"
            "t.0.et: error: message 1 at byte 8: node 17: attribute pg_name: expected a string, "
            "found an integer\n"
            "t.0.et: error: message 1 at byte 8: node 17: attribute is_cpu_op: expected a bool, "
            "found a string\n"
            "t.0.et: error: message 1 at byte 8: node 17: attribute num_ops: expected an integer "
            "within int64, found 18446744073709551615\n"
            "t.0.et: error: message 1 at byte 8: node 17: attribute tensor_size: expected an "
            "integer, found no value");
}

TEST(ChakraTraceIo, IntegerKindsAreAllAccepted) {
  // int32 (7), uint32 (11), sint32 (15, zigzag), fixed32 (19, 4 bytes),
  // fixed64 (21, 8 bytes), sfixed32 (23), sfixed64 (25); is_cpu_op as int32.
  auto fixed = [](uint32_t field, uint32_t wire_type, uint64_t value, int bytes) {
    std::string out = key(field, wire_type);
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
    return out;
  };
  const std::string node =
      varint_field(1, 1) + varint_field(3, 5) +
      bytes_field(10, bytes_field(1, "comm_dst") + varint_field(7, 3)) +
      bytes_field(10, bytes_field(1, "comm_size") + varint_field(11, 4000000000)) +
      bytes_field(10, bytes_field(1, "comm_tag") + varint_field(15, 3)) +  // zigzag(-2)
      bytes_field(10, bytes_field(1, "comm_src") + fixed(19, 5, 2, 4)) +
      bytes_field(10, bytes_field(1, "num_ops") + fixed(21, 1, 1ull << 40, 8)) +
      bytes_field(10, bytes_field(1, "clustersim_stream") + fixed(23, 5, 0xfffffffe, 4)) +
      bytes_field(10, bytes_field(1, "tensor_size") + fixed(25, 1, 12, 8)) +
      bytes_field(10, bytes_field(1, "is_cpu_op") + varint_field(7, 1));
  const Trace t = parse_trace(kMetadata + delimited(node), "t.0.et");
  ASSERT_EQ(t.nodes.size(), 1u);
  const Node& n = t.nodes[0];
  EXPECT_EQ(n.comm_dst, 3);
  EXPECT_EQ(n.comm_size, 4000000000);
  EXPECT_EQ(n.comm_tag, -2);
  EXPECT_EQ(n.comm_src, 2);
  EXPECT_EQ(n.num_ops, int64_t{1} << 40);
  EXPECT_EQ(n.stream, -2);
  EXPECT_EQ(n.tensor_size, 12);
  EXPECT_TRUE(n.is_cpu_op);
}

TEST(ChakraTraceIo, ManyBadMessagesStopAfterTwenty) {
  std::string bytes = kMetadata;
  for (int i = 0; i < 30; ++i) bytes += delimited("\x0f");
  try {
    parse_trace(bytes, "t.0.et");
    FAIL() << "no error";
  } catch (const sim::ConfigError& e) {
    ASSERT_EQ(e.diagnostics().size(), 21u);
    EXPECT_EQ(e.diagnostics().back().message, "stopped reading at message 21 after 20 errors");
  }
}

TEST(ChakraTraceIo, FixtureFilesGiveTheirErrors) {
  const std::string dir =
      std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/workloads/chakra/fixtures/chakra/";
  auto error_of_file = [&](const std::string& name) {
    try {
      read_trace_file(dir + name);
    } catch (const sim::ConfigError& e) {
      const std::string text = e.what();
      return text.substr(text.find(": error: ") + 2);
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of_file("empty.0.et"),
            "error: empty file: expected a GlobalMetadata message first");
  EXPECT_EQ(error_of_file("truncated_message.0.et"),
            "error: message 2 at byte 21: expected a message of 40 bytes, found 12 before the "
            "end of the file (truncated)");
  EXPECT_EQ(error_of_file("truncated_length.0.et"),
            "error: message 2 at byte 21: expected a varint length, found 2 of its bytes before "
            "the end of the file (truncated)");
  EXPECT_EQ(error_of_file("overlong_varint.0.et"),
            "error: message 1 at byte 8: expected a varint length of at most 10 bytes, found a "
            "longer one");
  EXPECT_EQ(error_of_file("garbage.0.et"),
            "error: message 1 at byte 8: expected a Node, found 3 bytes that do not parse as one "
            "(malformed Protobuf, or a string that is not UTF-8)");
  // The valid one reads.
  const Trace ok = read_trace_file(dir + "two_nodes.0.et");
  ASSERT_EQ(ok.nodes.size(), 2u);
  EXPECT_EQ(ok.nodes[1].data_deps, std::vector<uint64_t>{1});
}

}  // namespace
}  // namespace clustersim::workloads::chakra
