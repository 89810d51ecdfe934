#include "sweep/sweep_journal.h"

#include <filesystem>

#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/text_fields.h"
#include "sweep/sweep_rows.h"

namespace clustersim::cli {

namespace {

const char* const kJournalMagic = "# clustersim sweep partial v1";

// Whether the entry is a row of this sweep: point INDEX's values, `columns`
// fields; else a diagnostic says what was expected.
bool check_row(sim::DiagnosticSink& sink, const sim::SourceLocation& where, const std::string& line,
               const std::optional<std::pair<size_t, std::string>>& entry,
               const std::vector<SweepPoint>& points, size_t columns) {
  const std::vector<std::string> fields =
      entry ? csv_split(entry->second) : std::vector<std::string>{};
  if (!entry || entry->first >= points.size() || fields.size() != columns) {
    sink.add(where, "",
             "expected INDEX,ROW with an index below " + std::to_string(points.size()) + " and " +
                 std::to_string(columns) + " columns, found '" + line + "'");
    return false;
  }
  const SweepPoint& point = points[entry->first];
  for (size_t a = 0; a < point.values.size(); ++a) {
    if (fields[a] != point.values[a]) {
      sink.add(where, "",
               "expected point " + std::to_string(entry->first) + " of this sweep (" +
                   join(point.values, ",") + "), found '" + entry->second +
                   "'; the grid changed: remove the file or run without --resume");
      return false;
    }
  }
  return true;
}

}  // namespace

std::string journal_first_line(size_t points, const std::string& header_line) {
  return std::string(kJournalMagic) + "; points " + std::to_string(points) + "; " + header_line;
}

std::string journal_line(size_t index, const std::string& row) {
  return std::to_string(index) + "," + row + "\n";
}

std::optional<std::pair<size_t, std::string>> parse_journal_line(std::string_view line) {
  const size_t comma = line.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::optional<int64_t> index = sim::parse_number<int64_t>(line.substr(0, comma));
  if (!index || *index < 0) return std::nullopt;
  return std::make_pair(static_cast<size_t>(*index), std::string(line.substr(comma + 1)));
}

std::map<size_t, std::string> read_journal(const std::string& path, const std::string& first_line,
                                           const std::vector<SweepPoint>& points, size_t columns) {
  std::map<size_t, std::string> rows;
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) return rows;
  const std::string text = sim::read_file_text(path);
  sim::DiagnosticSink sink;
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // cut by an interruption: recompute it
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const sim::SourceLocation where{path, ++line_number, 1};
    if (line_number == 1) {
      if (line != first_line) {
        sink.add(where, "",
                 "expected the partial results of this sweep ('" + first_line + "'), found '" +
                     line + "'; remove it or run without --resume");
        sink.throw_if_any();
      }
      continue;
    }
    const std::optional<std::pair<size_t, std::string>> entry = parse_journal_line(line);
    if (check_row(sink, where, line, entry, points, columns)) rows[entry->first] = entry->second;
  }
  sink.throw_if_any();
  return rows;
}

SweepJournal::SweepJournal(const std::string& path, const std::string& first_line,
                           const std::vector<std::string>& rows, const std::vector<bool>& done) {
  std::string kept = first_line + "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (done[i]) kept += journal_line(i, rows[i]);
  }
  sim::write_file_atomically(path, kept);
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr) throw sim::OutputError("cannot append to '" + path + "'");
}

SweepJournal::~SweepJournal() {
  if (file_ != nullptr) std::fclose(file_);
}

void SweepJournal::append(size_t index, const std::string& row) {
  if (file_ == nullptr) return;
  std::fputs(journal_line(index, row).c_str(), file_);
  std::fflush(file_);
}

}  // namespace clustersim::cli
