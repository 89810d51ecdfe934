// Reading a job's per-rank trace files with identical graphs parsed once
// (workloads/chakra/chakra_trace.h read_rank_traces). The files of a data-parallel
// job differ only in their GlobalMetadata (the rank), and parsing a
// thousand copies of the same graph, then compiling each, is what made a
// 1,024-rank replay take gigabytes.
//
// A file is split where its first message (the GlobalMetadata) ends; the
// rest, the Node messages, is compared byte for byte with the node bytes of
// the distinct graphs read so far (a hash picks the candidates). Files whose
// framing cannot even be split are parsed in full, which reports their
// error as read_trace_file does. Equal node bytes parse to equal nodes
// without problems when they did once (the parse of a message depends only
// on its bytes), so only the GlobalMetadata of a matching file is parsed,
// and when it has a problem the whole file is parsed again to report it
// exactly as read_trace_file would.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config_error.h"
#include "config/file_text.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

namespace {

constexpr const char* kFormAttribute = "clustersim_trace_form";

// Where the first length-delimited message ends, or nullopt when its length
// is not a well-formed varint or runs past the end (the full parse says why).
std::optional<size_t> first_message_end(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < 10 && i < bytes.size(); ++i) {
    const auto byte = static_cast<uint8_t>(bytes[i]);
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (i == 9 && byte > 1) return std::nullopt;
      const size_t body = i + 1;
      if (value > bytes.size() - body) return std::nullopt;
      return body + static_cast<size_t>(value);
    }
  }
  return std::nullopt;
}

// The part of the GlobalMetadata a replay reads: what detect_trace_form
// sees of clustersim_trace_form (its string value, or the kind it holds).
struct FormMark {
  std::optional<std::string> value;
  std::string kind;
  bool operator==(const FormMark&) const = default;
};

FormMark form_mark(const Trace& trace) {
  FormMark mark;
  mark.value = metadata_string(trace, kFormAttribute, &mark.kind);
  return mark;
}

}  // namespace

RankTraces read_rank_traces(const std::string& prefix, int64_t ranks) {
  RankTraces out;
  out.graph_of.reserve(static_cast<size_t>(ranks));
  out.files.reserve(static_cast<size_t>(ranks));
  // By distinct graph: its node bytes and mark, kept while reading only.
  std::vector<std::string> node_bytes;
  std::vector<FormMark> marks;
  std::unordered_multimap<size_t, int32_t> by_hash;
  std::string bytes;
  for (int64_t r = 0; r < ranks; ++r) {
    const std::string path = rank_trace_path(prefix, r);
    bytes = sim::read_file_text(path);
    out.files.push_back(path);
    const std::optional<size_t> split = first_message_end(bytes);
    std::vector<int32_t> equal;  // distinct graphs with these node bytes
    size_t hash = 0;
    if (split) {
      const std::string_view nodes = std::string_view(bytes).substr(*split);
      hash = std::hash<std::string_view>{}(nodes);
      const auto [begin, end] = by_hash.equal_range(hash);
      for (auto it = begin; it != end; ++it) {
        if (node_bytes[static_cast<size_t>(it->second)] == nodes) equal.push_back(it->second);
      }
    }
    if (!equal.empty()) {
      std::optional<FormMark> mark;
      try {
        mark = form_mark(parse_trace(bytes.substr(0, *split), path));
      } catch (const sim::ConfigError&) {
        (void)parse_trace(bytes, path);  // throws the error of the whole file
        throw;
      }
      int32_t shared = -1;
      for (const int32_t g : equal) {
        if (shared < 0 && marks[static_cast<size_t>(g)] == *mark) shared = g;
      }
      if (shared >= 0) {
        out.graph_of.push_back(shared);
        continue;
      }
    }
    const auto index = static_cast<int32_t>(out.graphs.size());
    out.graphs.push_back(parse_trace(bytes, path));
    out.graph_of.push_back(index);
    marks.push_back(form_mark(out.graphs.back()));
    node_bytes.emplace_back(split ? bytes.substr(*split) : std::string());
    if (split) by_hash.emplace(hash, index);
  }
  return out;
}

}  // namespace clustersim::workloads::chakra
