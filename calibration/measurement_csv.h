// Reading the measurement CSVs (GEMM and attention timings; the layout of
// the reference data): comment lines start with '#', blank lines are
// skipped, the first other line is the header naming the columns in any
// order (columns beyond the required ones are allowed), and every data line
// has as many comma-separated fields as the header.
// Errors: every problem of a file is collected and thrown at once as a
// sim::ConfigError naming file:line:col and the column.
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/text_fields.h"

namespace clustersim::calibration {

// One data row: typed access to named columns, reporting into the sink.
class CsvRow {
 public:
  CsvRow(const std::vector<sim::TextField>& fields,
         const std::map<std::string, size_t, std::less<>>& column, const std::string& file,
         int line, sim::DiagnosticSink& sink)
      : fields_(fields), column_(column), file_(file), line_(line), sink_(sink) {}

  sim::SourceLocation where() const { return {file_, line_, 1}; }
  bool ok() const { return ok_; }
  bool has(std::string_view name) const { return column_.contains(name); }

  std::string text(std::string_view name);
  // The field's text, or "" when the header has no such column.
  std::string optional_text(std::string_view name) const;
  int64_t positive_int(std::string_view name);
  double positive_number(std::string_view name);
  // A positive number, or 0 when the header has no such column or the field
  // is empty; anything else in it is an error.
  double optional_positive_number(std::string_view name);
  bool boolean(std::string_view name);
  std::string one_of(std::string_view name, std::initializer_list<std::string_view> allowed);

 private:
  // The header check guarantees required columns; the field count check the field.
  const sim::TextField& field(std::string_view name) const {
    return fields_[column_.find(name)->second];
  }
  void fail(const sim::TextField& f, std::string_view name, std::string message);

  const std::vector<sim::TextField>& fields_;
  const std::map<std::string, size_t, std::less<>>& column_;
  const std::string& file_;
  int line_;
  sim::DiagnosticSink& sink_;
  bool ok_ = true;
};

// Calls `on_row` for every data line of a CSV whose header has the
// `required` columns; collects every problem (the callback reports through
// the row), then throws.
void for_each_csv_row(std::string_view text, const std::string& file_name,
                      std::initializer_list<std::string_view> required,
                      const std::function<void(CsvRow&)>& on_row);

// The header line of CSV text (first line that is neither blank nor a
// comment), its column names; empty when there is none.
std::vector<std::string> csv_header(std::string_view text);

}  // namespace clustersim::calibration
