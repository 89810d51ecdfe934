#include "calibration/collective_measurements.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "config/file_text.h"
#include "config/text_fields.h"

namespace clustersim::calibration {

namespace {

using sim::parse_number;

// Lower case without '_' and '-', so that "AllReduce", "all-reduce" and
// "all_reduce" compare equal.
std::string squashed(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '_' && c != '-') out += sim::ascii_lower(c);
  }
  return out;
}

std::string canonical_op(std::string_view name) {
  for (const std::string& op : measured_ops()) {
    if (squashed(name) == squashed(op)) return op;
  }
  return "";
}

// The column names of nccl-tests' table header ("#  size  count  type  redop
// root  time  algbw  busbw  #wrong ..."), or none when the line is not it.
std::vector<std::string> nccl_tests_header(const std::vector<sim::TextField>& tokens) {
  std::vector<std::string> names;
  for (const sim::TextField& t : tokens) {
    if (t.text != "#")
      names.emplace_back(t.text.front() == '#' && t.text.size() > 1 && t.text != "#wrong"
                             ? t.text.substr(1)
                             : t.text);
  }
  if (names.empty() || names[0] != "size" ||
      std::find(names.begin(), names.end(), "time") == names.end()) {
    return {};
  }
  return names;
}

bool has_nccl_tests_header(std::string_view text) {
  for (const sim::TextLine& line : sim::split_lines(text)) {
    const std::vector<sim::TextField> tokens = sim::split_blanks(line.text);
    if (!tokens.empty() && tokens[0].text.front() == '#' && !nccl_tests_header(tokens).empty()) {
      return true;
    }
  }
  return false;
}

std::string op_from_file_name(const std::string& path) {
  const std::string base = squashed(std::filesystem::path(path).filename().string());
  for (const std::string& op : measured_ops()) {
    if (base.find(squashed(op)) != std::string::npos) return op;
  }
  return "";
}

std::string ops_list() {
  std::string text;
  for (const std::string& op : measured_ops()) text += (text.empty() ? "" : ", ") + op;
  return text;
}

}  // namespace

const std::vector<std::string>& measured_ops() {
  static const std::vector<std::string> kOps = {"all_reduce", "all_gather", "reduce_scatter",
                                                "broadcast"};
  return kOps;
}

std::vector<CollectiveMeasurement> parse_collective_csv(std::string_view text,
                                                        const std::string& file_name) {
  sim::DiagnosticSink sink;
  std::vector<CollectiveMeasurement> rows;
  std::map<std::string, size_t> column;  // name -> index
  size_t width = 0;                      // the header's fields
  bool have_header = false;
  for (const sim::TextLine& line : sim::split_lines(text)) {
    const std::string_view content = sim::trim_blanks(line.text);
    if (content.empty() || content.front() == '#') continue;
    const std::vector<sim::TextField> fields = sim::split_commas(line.text);
    const auto at = [&](const sim::TextField& f) {
      return sim::SourceLocation{file_name, line.number, f.column};
    };
    if (!have_header) {
      have_header = true;
      width = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!column.emplace(std::string(fields[i].text), i).second) {
          sink.add(at(fields[i]), "",
                   "expected each column once in the header, found '" +
                       std::string(fields[i].text) + "' again");
        }
      }
      for (const char* required : {"op", "gpus", "gpus_per_node", "bytes"}) {
        if (!column.contains(required)) {
          sink.add({file_name, line.number, 1}, "",
                   std::string("expected a header with the column '") + required +
                       "' (op,gpus,gpus_per_node,bytes,time_us...), found '" +
                       std::string(content) + "'");
        }
      }
      if (!column.contains("time_us") && !column.contains("busbw_GBps")) {
        sink.add({file_name, line.number, 1}, "",
                 "expected a column time_us or busbw_GBps in the header, found neither");
      }
      if (!sink.empty()) break;
      continue;
    }
    if (fields.size() < width) {
      sink.add({file_name, line.number, 1}, "",
               "expected " + std::to_string(width) + " comma-separated fields, found " +
                   std::to_string(fields.size()));
      continue;
    }
    CollectiveMeasurement row;
    row.where = {file_name, line.number, 1};
    bool ok = true;
    const auto field = [&](const char* name) -> const sim::TextField* {
      const auto it = column.find(name);
      return it == column.end() ? nullptr : &fields[it->second];
    };
    // The header check above guarantees these columns.
    const auto required = [&](const char* name) -> const sim::TextField& {
      return fields[column.at(name)];
    };
    const sim::TextField& op = required("op");
    row.op = canonical_op(op.text);
    if (row.op.empty()) {
      sink.add(at(op), "op",
               "expected one of " + ops_list() + ", found '" + std::string(op.text) + "'");
      ok = false;
    }
    const auto positive_int = [&](const char* name, auto& out) {
      const sim::TextField& f = required(name);
      using T = std::remove_reference_t<decltype(out)>;
      const std::optional<T> value = parse_number<T>(f.text);
      if (!value || *value <= 0) {
        sink.add(at(f), name, "expected a positive integer, found '" + std::string(f.text) + "'");
        ok = false;
      } else {
        out = *value;
      }
    };
    positive_int("gpus", row.gpus);
    positive_int("gpus_per_node", row.gpus_per_node);
    positive_int("bytes", row.bytes);
    // Times must be positive; bandwidths are printed rounded, so 0.00 is a
    // real (tiny) measurement.
    const auto optional_number = [&](const char* name, std::optional<double>& out, bool positive) {
      const sim::TextField* f = field(name);
      if (f == nullptr || f->text.empty()) return;
      const std::optional<double> value = parse_number<double>(f->text);
      if (!value || *value < 0 || (positive && *value == 0)) {
        sink.add(at(*f), name,
                 std::string("expected a ") + (positive ? "positive" : "non-negative") +
                     " number, found '" + std::string(f->text) + "'");
        ok = false;
      } else {
        out = *value;
      }
    };
    optional_number("time_us", row.time_us, true);
    optional_number("busbw_GBps", row.busbw_GBps, false);
    if (const sim::TextField* algo = field("algo")) row.algo = std::string(algo->text);
    if (ok && !row.time_us && !row.busbw_GBps) {
      sink.add(row.where, "", "expected time_us or busbw_GBps on the row, found neither");
      ok = false;
    }
    if (ok && row.gpus_per_node > row.gpus) {
      sink.add(at(required("gpus_per_node")), "gpus_per_node",
               "expected at most gpus (" + std::to_string(row.gpus) + "), found " +
                   std::to_string(row.gpus_per_node));
      ok = false;
    }
    if (ok) rows.push_back(std::move(row));
  }
  if (!have_header && sink.empty()) {
    sink.add({file_name, 1, 1}, "", "expected a CSV header and rows, found no data");
  }
  sink.throw_if_any();
  return rows;
}

std::vector<CollectiveMeasurement> parse_nccl_tests_output(std::string_view text,
                                                           const std::string& file_name,
                                                           std::string_view op) {
  sim::DiagnosticSink sink;
  const std::string canonical = canonical_op(op);
  if (canonical.empty()) {
    sink.add({file_name, 0, 0}, "",
             "cannot tell which collective this nccl-tests output measured (nccl-tests does not "
             "print it); expected one of " +
                 ops_list() + " in the file name or given explicitly, found '" + std::string(op) +
                 "'");
    sink.throw_if_any();
  }
  int ranks = 0;
  std::set<std::string> hosts;
  std::vector<std::string> header;
  size_t size_col = 0, time_col = 0, busbw_col = 0;
  std::vector<CollectiveMeasurement> rows;
  for (const sim::TextLine& line : sim::split_lines(text)) {
    const std::vector<sim::TextField> tokens = sim::split_blanks(line.text);
    if (tokens.empty()) continue;
    if (tokens[0].text.front() == '#') {
      // "#  Rank  0 Group  0 Pid 123 on host device  0 [0x18] NVIDIA H100"
      const auto rank = std::find_if(tokens.begin(), tokens.end(),
                                     [](const sim::TextField& t) { return t.text == "Rank"; });
      const auto on = std::find_if(tokens.begin(), tokens.end(),
                                   [](const sim::TextField& t) { return t.text == "on"; });
      if (rank != tokens.end() && on != tokens.end() && on + 1 != tokens.end() &&
          std::any_of(tokens.begin(), tokens.end(),
                      [](const sim::TextField& t) { return t.text == "device"; })) {
        ++ranks;
        hosts.emplace((on + 1)->text);
        continue;
      }
      std::vector<std::string> names = nccl_tests_header(tokens);
      if (header.empty() && !names.empty()) {
        header = names;
        const auto index = [&](const char* name) {
          return static_cast<size_t>(std::find(header.begin(), header.end(), name) -
                                     header.begin());
        };
        size_col = index("size");
        time_col = index("time");
        busbw_col = index("busbw");
        if (busbw_col == header.size()) {
          sink.add({file_name, line.number, 1}, "",
                   "expected a 'busbw' column in the nccl-tests header, found none");
          header.clear();  // no row can be read: the header's error stands for them
        }
      }
      continue;
    }
    // Rows start with the size; anything else (mpirun warnings, NCCL INFO
    // lines interleaved with the table) is not part of the measurements.
    if (header.empty() || !parse_number<int64_t>(tokens[0].text)) continue;
    // nccl-tests prints out-of-place then in-place columns; the header names
    // each once per half, so a full row has more tokens than the first half.
    const size_t last = std::max({size_col, time_col, busbw_col});
    if (tokens.size() <= last) {
      sink.add({file_name, line.number, 1}, "",
               "expected at least " + std::to_string(last + 1) +
                   " columns (size, time and busbw), found " + std::to_string(tokens.size()));
      continue;
    }
    CollectiveMeasurement row;
    row.op = canonical;
    row.where = {file_name, line.number, tokens[size_col].column};
    const std::optional<int64_t> bytes = parse_number<int64_t>(tokens[size_col].text);
    const std::optional<double> time = parse_number<double>(tokens[time_col].text);
    const std::optional<double> busbw = parse_number<double>(tokens[busbw_col].text);
    if (!bytes || *bytes <= 0) {
      sink.add(
          {file_name, line.number, tokens[size_col].column}, "size",
          "expected a positive byte count, found '" + std::string(tokens[size_col].text) + "'");
      continue;
    }
    if (!time || *time <= 0) {
      sink.add(
          {file_name, line.number, tokens[time_col].column}, "time",
          "expected a positive time in us, found '" + std::string(tokens[time_col].text) + "'");
      continue;
    }
    if (!busbw || *busbw < 0) {
      sink.add({file_name, line.number, tokens[busbw_col].column}, "busbw",
               "expected a non-negative bandwidth in GB/s, found '" +
                   std::string(tokens[busbw_col].text) + "'");
      continue;
    }
    row.bytes = *bytes;
    row.time_us = *time;
    row.busbw_GBps = *busbw;
    rows.push_back(std::move(row));
  }
  if (sink.empty() && header.empty()) {
    sink.add({file_name, 1, 1}, "",
             "expected nccl-tests output, found no '# size count ...' header");
  }
  if (sink.empty() && ranks == 0) {
    sink.add({file_name, 1, 1}, "",
             "expected the '#  Rank N Group G Pid P on HOST device D' lines nccl-tests prints, "
             "found none: cannot tell how many GPUs ran");
  }
  sink.throw_if_any();
  const int per_node = ranks / std::max<int>(1, static_cast<int>(hosts.size()));
  for (CollectiveMeasurement& row : rows) {
    row.gpus = ranks;
    row.gpus_per_node = per_node;
  }
  return rows;
}

std::vector<CollectiveMeasurement> read_collective_measurements(const std::string& path,
                                                                std::string_view op_hint) {
  return parse_collective_measurements(sim::read_file_text(path), path, op_hint);
}

std::vector<CollectiveMeasurement> parse_collective_measurements(std::string_view text,
                                                                 const std::string& file_name,
                                                                 std::string_view op_hint) {
  // Our CSV has a header line naming 'op' before any data; nccl-tests output
  // is all '#' lines and whitespace-separated numbers.
  for (const sim::TextLine& line : sim::split_lines(text)) {
    const std::string_view content_line = sim::trim_blanks(line.text);
    if (content_line.empty() || content_line.front() == '#') continue;
    if (content_line.substr(0, 3) == "op,") return parse_collective_csv(text, file_name);
    break;
  }
  if (!has_nccl_tests_header(text)) {
    // Neither of the two layouts: say what a measurement file is rather than
    // fail on what nccl-tests output would lack (its collective).
    sim::DiagnosticSink sink;
    sink.add({file_name, 0, 0}, "",
             "expected a measurement file: a GEMM, attention or collective CSV (a header line "
             "naming its columns), nccl-tests output (its table header '#  size  count  type "
             "...  time  algbw  busbw') or a Kineto trace (JSON), found none of these");
    sink.throw_if_any();
  }
  const std::string op = op_hint.empty() ? op_from_file_name(file_name) : std::string(op_hint);
  return parse_nccl_tests_output(text, file_name, op);
}

}  // namespace clustersim::calibration
