#include "config/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <system_error>
#include <vector>

#include "config/text_fields.h"
#include "config/unit_messages.h"
#include "config/unit_tables.h"
#include "sim/check.h"

namespace clustersim::sim {
namespace {

using units_detail::example_of;
using units_detail::find_unit;
using units_detail::noun_of;
using units_detail::quoted;
using units_detail::UnitDef;
using units_detail::units_of;
using units_detail::unknown_unit;

// 128 bits hold a 36-digit mantissa and any int64 times any unit factor.
__extension__ using U128 = unsigned __int128;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
// Letters, '/' and any byte of a non-ASCII UTF-8 sequence (for 'µs').
bool is_unit_char(char c) {
  return is_lower(c) || is_upper(c) || c == '/' || static_cast<unsigned char>(c) >= 0x80;
}

bool starts_with_ignoring_case(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && ascii_lower(s.substr(0, prefix.size())) == prefix;
}

// ---------------------------------------------------------------------------
// Lexing: text -> sign, significant digits, power of ten, unit.

struct Lexed {
  bool negative = false;
  // Significant digits, no leading or trailing zeros; empty means zero.
  std::string digits;
  // The value is digits * 10^exp10 (exp10 saturates far beyond any range).
  int64_t exp10 = 0;
  std::string_view number;  // as written, for messages
  std::string_view unit;    // empty when there is none
};

constexpr int64_t kExponentCap = 1'000'000'000;

Parsed<Lexed> lex(std::string_view text) {
  using R = Parsed<Lexed>;
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.empty()) return R::fail("empty value");

  Lexed out;
  size_t pos = 0;
  const size_t end = text.size();
  if (text[pos] == '+' || text[pos] == '-') {
    out.negative = text[pos] == '-';
    ++pos;
  }
  // "nan", "inf", "infinity" and YAML's ".nan", ".inf", alone or before a
  // unit, but not the start of a word such as "info".
  const std::string_view after_sign = text.substr(pos);
  for (std::string_view special : {"nan", "infinity", "inf", ".nan", ".inf"}) {
    if (starts_with_ignoring_case(after_sign, special) &&
        (after_sign.size() == special.size() || !is_lower(after_sign[special.size()]))) {
      return R::fail("not a finite number: NaN and infinity are not allowed");
    }
  }

  const size_t int_begin = pos;
  while (pos < end && is_digit(text[pos])) ++pos;
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  bool has_point = false;
  std::string_view frac_digits;
  if (pos < end && text[pos] == '.') {
    has_point = true;
    const size_t frac_begin = ++pos;
    while (pos < end && is_digit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    if (has_point) return R::fail("expected digits around the decimal point");
    if (pos > 0) {
      return R::fail("expected a digit after the sign " + quoted(text.substr(0, 1)));
    }
    size_t unit_end = 0;
    while (unit_end < end && is_unit_char(text[unit_end])) ++unit_end;
    if (unit_end > 0) {
      return R::fail("missing number before the unit " + quoted(text.substr(0, unit_end)));
    }
    return R::fail("expected a number, found " + quoted(text.substr(0, 1)));
  }
  if (pos < end && text[pos] == '.') return R::fail("more than one decimal point");
  if (pos + 1 < end && (text[pos] == ',' || text[pos] == '_' || text[pos] == '\'') &&
      is_digit(text[pos + 1])) {
    return R::fail("digit separator " + quoted(text.substr(pos, 1)) +
                   " is not allowed; write the digits together, as in '1000'");
  }

  int64_t exponent = 0;
  if (pos < end && (text[pos] == 'e' || text[pos] == 'E')) {
    size_t q = pos + 1;
    bool exponent_negative = false;
    if (q < end && (text[q] == '+' || text[q] == '-')) {
      exponent_negative = text[q] == '-';
      ++q;
    }
    if (q < end && is_digit(text[q])) {
      for (; q < end && is_digit(text[q]); ++q) {
        exponent = std::min(kExponentCap, exponent * 10 + (text[q] - '0'));
      }
      if (exponent_negative) exponent = -exponent;
      pos = q;
      if (pos < end && text[pos] == '.') return R::fail("the exponent must be a whole number");
    } else if (q > pos + 1 || q == end) {
      // "1e", "1e+", "1e-GB". A letter after 'e' is left to be read as a unit.
      return R::fail("incomplete exponent: expected digits after " + quoted(text.substr(pos, 1)));
    }
  }
  out.number = text.substr(0, pos);

  // Significant digits of int_digits.frac_digits, times 10^exponent.
  std::string digits;
  digits.reserve(int_digits.size() + frac_digits.size());
  digits.append(int_digits);
  digits.append(frac_digits);
  int64_t exp10 = exponent - static_cast<int64_t>(frac_digits.size());
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    digits.clear();
    exp10 = 0;
  } else {
    digits.erase(0, first);
    const size_t last = digits.find_last_not_of('0');
    exp10 += static_cast<int64_t>(digits.size() - 1 - last);
    digits.erase(last + 1);
  }
  out.digits = std::move(digits);
  out.exp10 = exp10;

  const size_t number_end = pos;
  while (pos < end && is_space(text[pos])) ++pos;
  if (pos == end) return R::ok(std::move(out));
  if (pos > number_end &&
      (is_digit(text[pos]) || text[pos] == '.' || text[pos] == '+' || text[pos] == '-')) {
    size_t second_end = pos + 1;
    while (second_end < end && (is_digit(text[second_end]) || text[second_end] == '.')) {
      ++second_end;
    }
    return R::fail("unexpected second number " + quoted(text.substr(pos, second_end - pos)) +
                   " after " + quoted(out.number) +
                   "; a value is one number (no spaces inside) and one unit");
  }
  const size_t unit_begin = pos;
  while (pos < end && is_unit_char(text[pos])) ++pos;
  out.unit = text.substr(unit_begin, pos - unit_begin);
  if (out.unit.empty()) {
    return R::fail("unexpected " + quoted(text.substr(pos, 1)) + " after the number " +
                   quoted(out.number));
  }
  while (pos < end && is_space(text[pos])) ++pos;
  if (pos < end) {
    return R::fail("unexpected " + quoted(text.substr(pos)) + " after the unit " +
                   quoted(out.unit));
  }
  return R::ok(std::move(out));
}

// Lexes `text` and resolves its unit (or `bare_unit`).
Parsed<std::pair<Lexed, const UnitDef*>> lex_with_unit(std::string_view text, UnitKind kind,
                                                       std::string_view bare_unit) {
  using R = Parsed<std::pair<Lexed, const UnitDef*>>;
  const UnitDef* bare = nullptr;
  if (!bare_unit.empty()) {
    bare = find_unit(kind, bare_unit);
    CLUSTERSIM_CHECK(bare != nullptr, "bare_unit '" + std::string(bare_unit) + "' is not a " +
                                          std::string(noun_of(kind)) + " unit");
  }
  Parsed<Lexed> lexed = lex(text);
  if (!lexed) return R::fail(std::move(lexed.error));
  Lexed& l = *lexed.value;
  if (l.unit.empty()) {
    if (bare == nullptr) {
      return R::fail("missing unit: a " + std::string(noun_of(kind)) + " needs one, as in " +
                     quoted(example_of(kind)) + "; accepted units: " + accepted_units(kind));
    }
    return R::ok({std::move(l), bare});
  }
  const UnitDef* unit = find_unit(kind, l.unit);
  if (unit == nullptr) return R::fail(unknown_unit(kind, l.unit));
  return R::ok({std::move(l), unit});
}

// ---------------------------------------------------------------------------
// Exact scaling for sizes and durations.

enum class Exact { kOk, kNotWhole, kOverflow, kTooManyDigits };

constexpr size_t kMaxExactDigits = 36;  // 10^36 < 2^120: room for one more factor of 256

Exact checked_mul(U128 a, U128 b, U128 limit, U128& out) {
  if (a == 0 || b == 0) {
    out = 0;
    return Exact::kOk;
  }
  if (a > limit / b) return Exact::kOverflow;
  out = a * b;
  return Exact::kOk;
}

int count_factor(U128 v, unsigned f) {
  int n = 0;
  while (v != 0 && v % f == 0) {
    v /= f;
    ++n;
  }
  return n;
}

U128 pow_u128(unsigned base, int64_t e) {
  U128 r = 1;
  for (int64_t i = 0; i < e; ++i) r *= base;
  return r;
}

// digits * 10^exp10 * unit, as an int64, exactly.
Exact scale_exact(const Lexed& l, uint64_t unit, int64_t& out) {
  out = 0;
  if (l.digits.empty()) return Exact::kOk;
  if (l.digits.size() > kMaxExactDigits) return Exact::kTooManyDigits;
  U128 mantissa = 0;
  for (char c : l.digits) mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
  const U128 limit = l.negative ? U128{uint64_t{1} << 63}
                                : U128{static_cast<uint64_t>(std::numeric_limits<int64_t>::max())};
  U128 magnitude = 0;
  if (l.exp10 >= 0) {
    if (checked_mul(mantissa, unit, limit, magnitude) != Exact::kOk) return Exact::kOverflow;
    for (int64_t i = 0; i < l.exp10; ++i) {
      if (checked_mul(magnitude, 10, limit, magnitude) != Exact::kOk) return Exact::kOverflow;
    }
  } else {
    // Whole iff 10^k = 2^k 5^k divides mantissa * unit; then divide the
    // factors out of each before multiplying, so nothing overflows 128 bits.
    const int64_t k = -l.exp10;
    if (k > 256) return Exact::kNotWhole;  // more 2s and 5s than 128 + 64 bits can hold
    const int m2 = count_factor(mantissa, 2), m5 = count_factor(mantissa, 5);
    const int u2 = count_factor(unit, 2), u5 = count_factor(unit, 5);
    if (m2 + u2 < k || m5 + u5 < k) return Exact::kNotWhole;
    const int64_t from_m2 = std::min<int64_t>(m2, k), from_m5 = std::min<int64_t>(m5, k);
    const U128 m = mantissa / (pow_u128(2, from_m2) * pow_u128(5, from_m5));
    const U128 u = U128{unit} / (pow_u128(2, k - from_m2) * pow_u128(5, k - from_m5));
    if (checked_mul(m, u, limit, magnitude) != Exact::kOk) return Exact::kOverflow;
  }
  if (magnitude == 0) return Exact::kOk;
  // -(magnitude - 1) - 1 reaches INT64_MIN without overflowing on the way.
  out = l.negative ? -static_cast<int64_t>(magnitude - 1) - 1 : static_cast<int64_t>(magnitude);
  return Exact::kOk;
}

std::string too_many_digits() {
  return "too many significant digits (at most " + std::to_string(kMaxExactDigits) + ")";
}

// ---------------------------------------------------------------------------
// Formatting helpers.

std::string to_string_u128(U128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

// magnitude / unit with at most 3 decimals, or nullopt when that is not exact
// or the value is below 1 in this unit.
std::optional<std::string> exact_in_unit(U128 magnitude, uint64_t unit) {
  if (magnitude < unit || (magnitude * 1000) % unit != 0) return std::nullopt;
  const U128 thousandths = magnitude * 1000 / unit;
  std::string s = to_string_u128(thousandths / 1000);
  const auto frac = static_cast<unsigned>(thousandths % 1000);
  if (frac != 0) {
    std::string f = std::to_string(1000 + frac).substr(1);
    while (f.back() == '0') f.pop_back();
    s += "." + f;
  }
  return s;
}

U128 magnitude_of(int64_t v) {
  return v < 0 ? U128{static_cast<uint64_t>(-(v + 1))} + 1 : U128{static_cast<uint64_t>(v)};
}

size_t digit_count(std::string_view number) {
  return static_cast<size_t>(std::count_if(number.begin(), number.end(), is_digit));
}

}  // namespace

std::span<const std::string> unit_names(UnitKind kind) {
  static const std::array<std::vector<std::string>, 3> kNames = [] {
    std::array<std::vector<std::string>, 3> names;
    for (UnitKind k : {UnitKind::kSize, UnitKind::kBandwidth, UnitKind::kDuration}) {
      for (const UnitDef& u : units_of(k)) {
        if (u.listed) names[static_cast<size_t>(k)].emplace_back(u.name);
      }
    }
    return names;
  }();
  return kNames[static_cast<size_t>(kind)];
}

std::string accepted_units(UnitKind kind) {
  std::string out;
  for (const std::string& name : unit_names(kind)) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

Parsed<int64_t> parse_bytes(std::string_view text, std::string_view bare_unit) {
  auto lexed = lex_with_unit(text, UnitKind::kSize, bare_unit);
  if (!lexed) return Parsed<int64_t>::fail(std::move(lexed.error));
  const auto& [l, unit] = *lexed;
  int64_t bytes = 0;
  switch (scale_exact(l, unit->factor, bytes)) {
    case Exact::kOk:
      return Parsed<int64_t>::ok(bytes);
    case Exact::kNotWhole:
      return Parsed<int64_t>::fail("not a whole number of bytes");
    case Exact::kOverflow:
      return Parsed<int64_t>::fail(
          "overflows a 64-bit integer: sizes are limited to 9223372036854775807 bytes "
          "(about 8 EiB)");
    case Exact::kTooManyDigits:
      return Parsed<int64_t>::fail(too_many_digits());
  }
  return Parsed<int64_t>::fail("internal error");
}

Parsed<SimTime> parse_duration(std::string_view text, std::string_view bare_unit) {
  auto lexed = lex_with_unit(text, UnitKind::kDuration, bare_unit);
  if (!lexed) return Parsed<SimTime>::fail(std::move(lexed.error));
  const auto& [l, unit] = *lexed;
  int64_t ns = 0;
  switch (scale_exact(l, unit->factor, ns)) {
    case Exact::kOk:
      return Parsed<SimTime>::ok(SimTime::ns(ns));
    case Exact::kNotWhole:
      return Parsed<SimTime>::fail(
          "not a whole number of nanoseconds, the resolution of simulated time");
    case Exact::kOverflow:
      return Parsed<SimTime>::fail(
          "overflows a 64-bit integer: durations are limited to 9223372036854775807ns "
          "(about 292 years, 106751d)");
    case Exact::kTooManyDigits:
      return Parsed<SimTime>::fail(too_many_digits());
  }
  return Parsed<SimTime>::fail("internal error");
}

Parsed<double> parse_bandwidth(std::string_view text, std::string_view bare_unit) {
  auto lexed = lex_with_unit(text, UnitKind::kBandwidth, bare_unit);
  if (!lexed) return Parsed<double>::fail(std::move(lexed.error));
  const auto& [l, unit] = *lexed;
  if (l.digits.empty()) return Parsed<double>::ok(0.0);

  // Correctly rounded: feed from_chars the exact decimal digits * factor and
  // the power of ten. Only when that product would not fit 128 bits (a
  // mantissa of dozens of digits) multiply by the factor in double.
  std::string digits = l.digits;
  double post_factor = 1.0;
  if (unit->factor != 1) {
    U128 mantissa = 0, product = 0;
    const U128 limit = ~U128{0};
    bool fits = l.digits.size() <= kMaxExactDigits;
    if (fits) {
      for (char c : l.digits) mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      fits = checked_mul(mantissa, unit->factor, limit, product) == Exact::kOk;
    }
    if (fits) {
      digits = to_string_u128(product);
    } else {
      post_factor = static_cast<double>(unit->factor);
    }
  }
  const int64_t exp10 = l.exp10 + unit->pow10;
  std::string decimal = (l.negative ? "-" : "") + digits + "e" + std::to_string(exp10);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(decimal.data(), decimal.data() + decimal.size(), value);
  const bool too_large = static_cast<int64_t>(l.digits.size()) + exp10 > 0;
  if (ec != std::errc() || ptr != decimal.data() + decimal.size()) {
    return Parsed<double>::fail(too_large
                                    ? "too large: bandwidths are limited to about 1.8e308 B/s"
                                    : "too small to represent: bandwidths below about 5e-324 B/s "
                                      "underflow");
  }
  value *= post_factor;
  if (!std::isfinite(value)) {
    return Parsed<double>::fail("too large: bandwidths are limited to about 1.8e308 B/s");
  }
  return Parsed<double>::ok(value);
}

std::string format_bytes(int64_t bytes) {
  const U128 magnitude = magnitude_of(bytes);
  const bool prefer_binary = magnitude != 0 && magnitude % 1024 == 0;
  std::string best = "0";
  std::string_view best_unit = "B";
  size_t best_digits = std::numeric_limits<size_t>::max();
  size_t best_decimals = 0;
  int best_rank = -1;
  uint64_t best_factor = 0;
  for (const UnitDef& u : units_of(UnitKind::kSize)) {
    std::optional<std::string> number = exact_in_unit(magnitude, u.factor);
    if (!number) continue;
    const size_t digits = digit_count(*number);
    const size_t point = number->find('.');
    const size_t decimals = point == std::string::npos ? 0 : number->size() - point - 1;
    const bool binary = u.name.size() == 3;  // KiB, MiB, ...
    const int rank = binary == prefer_binary ? 1 : 0;
    // Lexicographic: (digits, decimals) smaller, then rank, then factor larger.
    const bool better = digits != best_digits       ? digits < best_digits
                        : decimals != best_decimals ? decimals < best_decimals
                        : rank != best_rank         ? rank > best_rank
                                                    : u.factor > best_factor;
    if (better) {
      best = *std::move(number);
      best_unit = u.name;
      best_digits = digits;
      best_decimals = decimals;
      best_rank = rank;
      best_factor = u.factor;
    }
  }
  return (bytes < 0 ? "-" : "") + best + std::string(best_unit);
}

std::string format_duration(SimTime duration) {
  const int64_t ns = duration.count_ns();
  if (ns == 0) return "0s";
  const U128 magnitude = magnitude_of(ns);
  // Largest first; the micro sign is left out for plain-ASCII reports.
  for (std::string_view name : {"d", "h", "min", "s", "ms", "us", "ns"}) {
    const UnitDef* u = find_unit(UnitKind::kDuration, name);
    CLUSTERSIM_CHECK(u != nullptr, "duration unit table lacks " + std::string(name));
    if (std::optional<std::string> number = exact_in_unit(magnitude, u->factor)) {
      return (ns < 0 ? "-" : "") + *number + std::string(name);
    }
  }
  CLUSTERSIM_CHECK(false, "every duration is a whole number of ns");
  return "";
}

std::string format_bandwidth(double bytes_per_second) {
  CLUSTERSIM_CHECK(std::isfinite(bytes_per_second),
                   "format_bandwidth of a non-finite value " + std::to_string(bytes_per_second));
  if (bytes_per_second == 0) return "0B/s";
  // The shortest scientific form that reads back as the same double:
  // "d.ddde+XX". Moving its decimal point changes no digit, so the text
  // below, parsed with correct rounding, gives the same double back.
  std::array<char, 64> buffer{};
  const auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(),
                                       std::fabs(bytes_per_second), std::chars_format::scientific);
  CLUSTERSIM_CHECK(ec == std::errc(), "to_chars of a double fits 64 bytes");
  const std::string_view sci(buffer.data(), static_cast<size_t>(ptr - buffer.data()));
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (is_digit(c)) digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  int exponent = 0;  // of the first digit
  const std::string_view exp_text = sci.substr(e_pos + 1);
  const auto exp_result = std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                                          exp_text.data() + exp_text.size(), exponent);
  CLUSTERSIM_CHECK(exp_result.ec == std::errc(), "to_chars writes a decimal exponent");

  static constexpr std::string_view kUnits[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s"};
  const int k = std::clamp(exponent / 3, 0, 4);
  const int e = exponent - 3 * k;  // exponent of the first digit in the chosen unit
  const int n = static_cast<int>(digits.size());
  std::string number;
  if (e >= 21 || e <= -7) {
    number = digits.substr(0, 1);
    if (n > 1) number += "." + digits.substr(1);
    number += "e" + std::to_string(e);
  } else if (e >= n - 1) {
    number = digits + std::string(static_cast<size_t>(e - (n - 1)), '0');
  } else if (e >= 0) {
    number = digits.substr(0, static_cast<size_t>(e) + 1) + "." +
             digits.substr(static_cast<size_t>(e) + 1);
  } else {
    number = "0." + std::string(static_cast<size_t>(-e - 1), '0') + digits;
  }
  return (bytes_per_second < 0 ? "-" : "") + number + std::string(kUnits[k]);
}

}  // namespace clustersim::sim
