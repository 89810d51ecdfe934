// Which conventions a job's traces follow (workloads/chakra/chakra_trace.h,
// TraceForm), and the all_gather size conversion between them. The rule is
// stated once, in the header and in docs/chakra-traces.md; this file must
// say the same.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "workloads/chakra/chakra_trace.h"

namespace clustersim::workloads::chakra {

namespace {

constexpr const char* kFormAttribute = "clustersim_trace_form";

// The first rank of each graph, in rank order: every rank of a graph has
// its graph's mark, so looking at these finds the first rank of any kind.
std::vector<int64_t> first_ranks(const JobTraces& traces) {
  std::vector<int64_t> firsts;
  for (int64_t r = 0; r < traces.ranks(); ++r) {
    if (traces.graph_index(r) == static_cast<int32_t>(firsts.size())) firsts.push_back(r);
  }
  return firsts;
}

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  sim::DiagnosticSink sink;
  sink.add(sim::SourceLocation{where, 0, 0}, std::string("GlobalMetadata ") + kFormAttribute,
           message);
  sink.throw_if_any();
  throw std::logic_error("unreachable");
}

// The first trace's mark decides; every other trace must carry the same.
FormDecision from_marks(const JobTraces& traces, const std::vector<int64_t>& firsts,
                        int64_t first_marked, const std::string& value) {
  const std::string first = traces.location(first_marked);
  if (value != "standard" && value != "named") {
    fail(first, "expected \"standard\" or \"named\", found \"" + value + "\"");
  }
  for (const int64_t r : firsts) {
    std::string kind;
    const std::optional<std::string> mark = metadata_string(traces.of(r), kFormAttribute, &kind);
    if (mark == value) continue;
    const std::string found = mark           ? "\"" + *mark + "\""
                              : kind.empty() ? std::string("no such attribute")
                                             : kind;
    fail(traces.location(r), "expected \"" + value + "\" as in " + first +
                                 " (every trace of a job in one form), found " + found);
  }
  FormDecision d;
  d.form = value == "standard" ? TraceForm::kStandard : TraceForm::kNamed;
  d.why = std::string(kFormAttribute) + " \"" + value + "\" in the GlobalMetadata";
  return d;
}

}  // namespace

const char* trace_form_name(TraceForm form) {
  return form == TraceForm::kStandard ? "standard" : "named";
}

bool is_numeric_pg_name(std::string_view name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

FormDecision detect_trace_form(std::span<const Trace> traces, const CommGroups& groups) {
  return detect_trace_form(JobTraces{traces, {}, {}}, groups);
}

FormDecision detect_trace_form(const JobTraces& traces, const CommGroups& groups) {
  const std::vector<int64_t> firsts = first_ranks(traces);
  for (const int64_t r : firsts) {
    std::string kind;
    const std::optional<std::string> mark = metadata_string(traces.of(r), kFormAttribute, &kind);
    if (mark) return from_marks(traces, firsts, r, *mark);
    if (!kind.empty()) {
      fail(traces.location(r), "expected a string, \"standard\" or \"named\", found " + kind);
    }
  }
  FormDecision d;
  for (const int64_t r : firsts) {
    for (const Node& n : traces.of(r).nodes) {
      if (n.type != static_cast<int32_t>(NodeType::kCommColl) || !n.pg_name ||
          is_numeric_pg_name(*n.pg_name)) {
        continue;
      }
      d.form = TraceForm::kNamed;
      d.why = "pg_name '" + *n.pg_name + "' (" + traces.location(r) + " node " +
              std::to_string(n.id) + ") is not a number";
      return d;
    }
  }
  for (const auto& [name, members] : groups) {
    (void)members;
    if (is_numeric_pg_name(name)) continue;
    d.form = TraceForm::kNamed;
    d.why = "comm-group key '" + name + "' is not a number";
    return d;
  }
  d.form = TraceForm::kStandard;
  d.why = "every pg_name and comm-group key is a number, or there are none";
  return d;
}

std::optional<int64_t> all_gather_total(const Node& node, int64_t comm_size, int64_t group_size,
                                        std::string& problem) {
  const int64_t n = std::max<int64_t>(group_size, 1);
  if (comm_size < 0) {
    problem = "comm_size must be >= 0, found " + std::to_string(comm_size);
    return std::nullopt;
  }
  if (comm_size > std::numeric_limits<int64_t>::max() / n) {
    problem = "comm_size " + std::to_string(comm_size) + " x " + std::to_string(n) +
              " members overflows 64 bits";
    return std::nullopt;
  }
  const int64_t product = comm_size * n;
  if (!node.comm_total) return product;
  const int64_t total = *node.comm_total;
  // The shard a rank passes in is the total rounded up to a multiple of the
  // group (FSDP pads its flat parameter so): (n - 1) x comm_size < total <=
  // n x comm_size.
  const bool fits = comm_size == 0 ? total == 0 : total > product - comm_size && total <= product;
  if (!fits) {
    problem = "clustersim_comm_total " + std::to_string(total) +
              " is not the output of an all_gather of " + std::to_string(n) +
              " inputs of comm_size " + std::to_string(comm_size) + " bytes (expected more than " +
              std::to_string(product - comm_size) + " and at most " + std::to_string(product) + ")";
    return std::nullopt;
  }
  return total;
}

}  // namespace clustersim::workloads::chakra
