// FILE.partial, the journal of a `clustersim sweep -o FILE` (see
// sweep/sweep_runner.h): a first line naming the sweep, then one "INDEX,ROW"
// line per finished point in the order points finish. --resume reads it back
// so that an interrupted sweep simulates only what is left and still writes
// the same CSV bytes.
//
// Thread safety: the functions are pure or touch only their path;
// SweepJournal is not thread-safe (the sweep appends under its lock).
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/sweep_grid.h"

namespace clustersim::cli {

// The journal's first line for a sweep of `points` points and this CSV
// header: a journal of another grid or another column set is refused.
std::string journal_first_line(size_t points, const std::string& header_line);

// "INDEX,ROW\n": how a finished row travels, in the journal and between MPI
// ranks.
std::string journal_line(size_t index, const std::string& row);
// The index and row of "INDEX,ROW" (without its line break); nothing when
// the line has no comma or its index is not a number.
std::optional<std::pair<size_t, std::string>> parse_journal_line(std::string_view line);

// The rows of the journal at `path` that belong to this sweep, by point
// index; none when there is no file. A last line without its line break
// (cut by the interruption) is dropped: that point runs again.
// Errors: sim::ConfigError at path:LINE:1 for a first line of another sweep
// and for rows that do not name a point of this grid with `columns` fields;
// at the path alone when the file cannot be read (sim::read_file_text).
std::map<size_t, std::string> read_journal(const std::string& path, const std::string& first_line,
                                           const std::vector<SweepPoint>& points, size_t columns);

// The journal being written: owns the open file, closed on destruction.
class SweepJournal {
 public:
  // No journal: append does nothing (no -o, or an MPI rank other than 0).
  SweepJournal() = default;
  // Starts `path` afresh (atomically) with `first_line` and the rows of the
  // points already `done`, then keeps it open to append.
  // Errors: sim::OutputError naming the path.
  SweepJournal(const std::string& path, const std::string& first_line,
               const std::vector<std::string>& rows, const std::vector<bool>& done);
  ~SweepJournal();
  SweepJournal(const SweepJournal&) = delete;
  SweepJournal& operator=(const SweepJournal&) = delete;

  // Appends the row and flushes, so that an interruption loses at most the
  // line being written.
  void append(size_t index, const std::string& row);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace clustersim::cli
