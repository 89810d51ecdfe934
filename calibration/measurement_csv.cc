#include "calibration/measurement_csv.h"

#include <optional>

namespace clustersim::calibration {

using Field = sim::TextField;
using sim::parse_number;

std::string CsvRow::text(std::string_view name) {
  const Field& f = field(name);
  if (f.text.empty()) fail(f, name, "expected a value, found an empty field");
  return std::string(f.text);
}

std::string CsvRow::optional_text(std::string_view name) const {
  return has(name) ? std::string(field(name).text) : std::string();
}

int64_t CsvRow::positive_int(std::string_view name) {
  const Field& f = field(name);
  const std::optional<int64_t> value = parse_number<int64_t>(f.text);
  if (!value || *value <= 0) {
    fail(f, name, "expected a positive integer, found '" + std::string(f.text) + "'");
    return 0;
  }
  return *value;
}

double CsvRow::positive_number(std::string_view name) {
  const Field& f = field(name);
  const std::optional<double> value = parse_number<double>(f.text);
  if (!value || !(*value > 0)) {
    fail(f, name, "expected a positive number, found '" + std::string(f.text) + "'");
    return 0;
  }
  return *value;
}

double CsvRow::optional_positive_number(std::string_view name) {
  if (!has(name) || field(name).text.empty()) return 0;
  return positive_number(name);
}

bool CsvRow::boolean(std::string_view name) {
  const Field& f = field(name);
  if (f.text == "true") return true;
  if (f.text != "false")
    fail(f, name, "expected true or false, found '" + std::string(f.text) + "'");
  return false;
}

std::string CsvRow::one_of(std::string_view name, std::initializer_list<std::string_view> allowed) {
  const Field& f = field(name);
  for (std::string_view a : allowed) {
    if (f.text == a) return std::string(a);
  }
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  fail(f, name, "expected one of " + list + ", found '" + std::string(f.text) + "'");
  return "";
}

void CsvRow::fail(const Field& f, std::string_view name, std::string message) {
  sink_.add({file_, line_, f.column}, std::string(name), std::move(message));
  ok_ = false;
}

namespace {

// Calls `on_line(number, content)` for each line that is neither blank nor a
// comment, until it returns false.
void for_each_content_line(std::string_view text,
                           const std::function<bool(int, std::string_view)>& on_line) {
  int number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    const std::string_view content = sim::trim_blanks(line);
    if (content.empty() || content.front() == '#') continue;
    if (!on_line(number, line)) return;
  }
}

}  // namespace

void for_each_csv_row(std::string_view text, const std::string& file_name,
                      std::initializer_list<std::string_view> required,
                      const std::function<void(CsvRow&)>& on_row) {
  sim::DiagnosticSink sink;
  std::map<std::string, size_t, std::less<>> column;
  size_t width = 0;  // the header's fields
  bool have_header = false;
  for_each_content_line(text, [&](int number, std::string_view line) {
    const std::vector<Field> fields = sim::split_commas(line);
    if (!have_header) {
      have_header = true;
      width = fields.size();
      for (size_t i = 0; i < fields.size(); ++i) {
        // A name twice would leave the row shorter than the indices it holds.
        if (!column.emplace(std::string(fields[i].text), i).second) {
          sink.add({file_name, number, fields[i].column}, "",
                   "expected each column once in the header, found '" +
                       std::string(fields[i].text) + "' again");
        }
      }
      for (std::string_view name : required) {
        if (!column.contains(name)) {
          sink.add({file_name, number, 1}, "",
                   "expected a header with the column '" + std::string(name) + "', found '" +
                       std::string(sim::trim_blanks(line)) + "'");
        }
      }
      return sink.empty();
    }
    if (fields.size() != width) {
      sink.add({file_name, number, 1}, "",
               "expected " + std::to_string(width) + " comma-separated fields, found " +
                   std::to_string(fields.size()));
      return true;
    }
    CsvRow row(fields, column, file_name, number, sink);
    on_row(row);
    return true;
  });
  if (!have_header) sink.add({file_name, 0, 0}, "", "expected a header line, found none");
  sink.throw_if_any();
}

std::vector<std::string> csv_header(std::string_view text) {
  std::vector<std::string> names;
  for_each_content_line(text, [&](int, std::string_view line) {
    for (const Field& f : sim::split_commas(line)) names.emplace_back(f.text);
    return false;
  });
  return names;
}

}  // namespace clustersim::calibration
