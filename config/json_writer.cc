#include "config/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include "sim/check.h"

namespace clustersim::sim {

namespace {

// Integers through to_chars: independent of the stream's locale.
template <class Int>
void write_integer(std::ostream& out, Int number) {
  char buffer[24];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, number);
  CLUSTERSIM_CHECK(ec == std::errc(), "24 characters hold any 64-bit integer");
  out.write(buffer, end - buffer);
}

}  // namespace

JsonWriter::JsonWriter(std::ostream& out, int indent, int wrap_levels)
    : out_(out),
      indent_(indent < 0 ? 0 : indent),
      wrap_levels_(wrap_levels >= 0 ? static_cast<size_t>(wrap_levels)
                   : indent_ > 0    ? static_cast<size_t>(kAllLevels)
                                    : 0) {}

void JsonWriter::newline_and_indent(size_t depth) {
  out_ << '\n';
  for (size_t i = 0; i < depth * static_cast<size_t>(indent_); ++i) out_ << ' ';
}

void JsonWriter::before_value() {
  if (stack_.empty()) {
    CLUSTERSIM_CHECK(!wrote_top_, "a JSON document holds one top-level value");
    wrote_top_ = true;
    return;
  }
  Frame& frame = stack_.back();
  if (frame.is_object) {
    CLUSTERSIM_CHECK(frame.has_key, "a value inside a JSON object needs a key first");
    frame.has_key = false;
    return;
  }
  if (!frame.empty) out_ << (indent_ > 0 && !wrapped(stack_.size()) ? ", " : ",");
  if (wrapped(stack_.size())) newline_and_indent(stack_.size());
  frame.empty = false;
}

void JsonWriter::before_key() {
  CLUSTERSIM_CHECK(!stack_.empty() && stack_.back().is_object,
                   "a JSON key is written only directly inside an object");
  Frame& frame = stack_.back();
  CLUSTERSIM_CHECK(!frame.has_key, "a JSON key needs a value before the next key");
  if (!frame.empty) out_ << (indent_ > 0 && !wrapped(stack_.size()) ? ", " : ",");
  if (wrapped(stack_.size())) newline_and_indent(stack_.size());
  frame.empty = false;
  frame.has_key = true;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back(Frame{true, true, false});
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  stack_.push_back(Frame{false, true, false});
  return *this;
}

void JsonWriter::close(bool is_object) {
  CLUSTERSIM_CHECK(!stack_.empty() && stack_.back().is_object == is_object,
                   std::string("end_") + (is_object ? "object" : "array") +
                       " closes the innermost open container of that kind");
  CLUSTERSIM_CHECK(!stack_.back().has_key, "a JSON key is followed by its value");
  const bool empty = stack_.back().empty;
  if (!empty && wrapped(stack_.size())) newline_and_indent(stack_.size() - 1);
  stack_.pop_back();
  out_ << (is_object ? '}' : ']');
}

JsonWriter& JsonWriter::end_object() {
  close(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close(false);
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_key();
  write_escaped(name);
  out_ << (indent_ > 0 ? ": " : ":");
  return *this;
}

JsonWriter& JsonWriter::str(std::string_view text) {
  before_value();
  write_escaped(text);
  return *this;
}

JsonWriter& JsonWriter::int64(int64_t number) {
  before_value();
  write_integer(out_, number);
  return *this;
}

JsonWriter& JsonWriter::uint64(uint64_t number) {
  before_value();
  write_integer(out_, number);
  return *this;
}

JsonWriter& JsonWriter::number(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_ << "null";
    return *this;
  }
  if (number == 0) {
    out_ << '0';  // -0 too
    return *this;
  }
  // The shortest round-trip digits, from to_chars' scientific form
  // "-d.ddde+XX", then laid out as JavaScript's Number#toString does.
  char buffer[64];
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, number, std::chars_format::scientific);
  CLUSTERSIM_CHECK(ec == std::errc(), "64 characters hold any double");
  const std::string_view text(buffer, static_cast<size_t>(end - buffer));
  const size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c >= '0' && c <= '9') digits += c;
  }
  const int exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  if (number < 0) out_ << '-';
  if (exponent >= 21 || exponent < -6) {
    out_ << digits[0];
    if (digits.size() > 1) out_ << '.' << std::string_view(digits).substr(1);
    out_ << 'e' << (exponent < 0 ? '-' : '+') << std::abs(exponent);
  } else if (exponent < 0) {
    out_ << "0." << std::string(static_cast<size_t>(-exponent - 1), '0') << digits;
  } else if (digits.size() <= static_cast<size_t>(exponent) + 1) {
    out_ << digits << std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0');
  } else {
    const auto point = static_cast<size_t>(exponent) + 1;
    out_ << std::string_view(digits).substr(0, point) << '.'
         << std::string_view(digits).substr(point);
  }
  return *this;
}

JsonWriter& JsonWriter::decimal(int64_t units, int scale) {
  CLUSTERSIM_CHECK(scale >= 0 && scale <= 18, "decimal scale in [0, 18]");
  before_value();
  // Digits of |units| without overflow at INT64_MIN.
  const uint64_t magnitude =
      units < 0 ? uint64_t{0} - static_cast<uint64_t>(units) : static_cast<uint64_t>(units);
  uint64_t power = 1;
  for (int i = 0; i < scale; ++i) power *= 10;
  const uint64_t whole = magnitude / power;
  uint64_t fraction = magnitude % power;
  if (units < 0) out_ << '-';
  write_integer(out_, whole);
  if (fraction == 0) return *this;
  int digits = scale;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --digits;
  }
  const std::string text = std::to_string(fraction);
  out_ << '.' << std::string(static_cast<size_t>(digits) - text.size(), '0');
  out_ << text;
  return *this;
}

JsonWriter& JsonWriter::boolean(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  return *this;
}

void JsonWriter::finish() const {
  CLUSTERSIM_CHECK(complete(), "a JSON document is finished only when its value is closed");
}

void JsonWriter::write_escaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_ << '"';
  size_t run = 0;  // start of the pending stretch that needs no escape
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_.write(text.data() + run, static_cast<std::streamsize>(i - run));
    run = i + 1;
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\b':
        out_ << "\\b";
        break;
      case '\f':
        out_ << "\\f";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\r':
        out_ << "\\r";
        break;
      case '\t':
        out_ << "\\t";
        break;
      default:
        out_ << "\\u00" << kHex[c >> 4] << kHex[c & 0xf];
    }
  }
  out_.write(text.data() + run, static_cast<std::streamsize>(text.size() - run));
  out_ << '"';
}

std::string json_quote(std::string_view text) {
  std::ostringstream out;
  JsonWriter(out).str(text);
  return out.str();
}

}  // namespace clustersim::sim
