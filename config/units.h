// Quantities with units in text: sizes ("80GiB"), bandwidths ("400Gbps") and
// durations ("10min"), parsed from scenario files and formatted for docs and
// reports.
//
// Contract:
//  * Text is a number, optional spaces, then a unit: "80GiB", "46.5 GB/s".
//    Number: optional sign, digits, optional fraction, optional exponent
//    ("1", "-2", "1.5", ".5", "5.", "1e9", "2.5E-3"). No digit separators,
//    NaN or infinity. Surrounding whitespace is ignored.
//  * Units are case-sensitive: b is a bit, B a byte, "Gb" is not "GB". A unit
//    that differs from an accepted one only in case, or is a common slip
//    ("Gb" for a size, "GBps", "sec", "G"), gets an error with a
//    did-you-mean, never a silent guess. accepted_units() lists them.
//  * Parsing checks syntax, unit, whole-ness and range only; the caller's
//    validator decides about sign and bounds ("-5GB" parses to -5e9 bytes).
//  * Sizes and durations are exact: the decimal text times the unit is
//    computed in integers, so "0.1GB" is exactly 100000000 bytes. A value that
//    is not a whole number of bytes (nanoseconds), or does not fit in int64,
//    is an error, never rounded or clamped.
//  * Bandwidths are doubles in bytes per second, correctly rounded from the
//    decimal text (one more rounding only for absurdly long mantissas in a
//    bit or binary unit), and always finite.
//  * Errors: Parsed::error says precisely what is wrong, starts in lower
//    case, and names no file, line or key: the scenario parser wraps it as
//    `file:line:col: error: key: expected a size such as '80GiB', found
//    '80Gb': <error>`.
//  * format_*(v) returns v exactly in a readable unit, and parsing that text
//    gives back exactly v.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "sim/sim_time.h"

namespace clustersim::sim {

// The result of a parse: a value, or the reason there is none.
template <class T>
struct Parsed {
  std::optional<T> value;  // engaged on success
  std::string error;       // empty on success; otherwise why (see the contract above)

  static Parsed ok(T v) { return Parsed{std::move(v), {}}; }
  static Parsed fail(std::string why) { return Parsed{std::nullopt, std::move(why)}; }

  explicit operator bool() const { return value.has_value(); }
  // Precondition for both: *this holds a value.
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

enum class UnitKind { kSize, kBandwidth, kDuration };

// The accepted unit names of a kind, in the order docs and messages show
// them. Not listed but accepted: Greek mu ("μs", U+03BC) beside micro sign
// ("µs", U+00B5).
std::span<const std::string> unit_names(UnitKind kind);
// The same, joined for messages and docs: "B, KB, MB, ...".
std::string accepted_units(UnitKind kind);

// Sizes in bytes. Units: B; KB MB GB TB PB (powers of 1000); KiB MiB GiB TiB
// PiB (powers of 1024). A number without a unit is in `bare_unit` (one of
// those); with bare_unit "" a unit is required.
// "80GiB" -> 85899345920, "1.5GiB" -> 1610612736, "1e3 KB" -> 1000000.
// Range: int64, about +-8 EiB.
Parsed<int64_t> parse_bytes(std::string_view text, std::string_view bare_unit = "B");

// Bandwidths in bytes per second. Units, bits per second (divided by 8): bps
// Kbps Mbps Gbps Tbps, b/s Kb/s Mb/s Gb/s Tb/s; bytes per second: B/s KB/s
// MB/s GB/s TB/s (powers of 1000), KiB/s MiB/s GiB/s TiB/s (powers of 1024).
// A number without a unit is in `bare_unit` ("" requires a unit).
// "400Gbps" -> 5e10, "50GB/s" -> 5e10, "46.5 GB/s" -> 4.65e10.
Parsed<double> parse_bandwidth(std::string_view text, std::string_view bare_unit = "B/s");

// Durations, exact to the nanosecond. Units: ns, us (also µs), ms, s, min, h,
// d. A number without a unit is an error unless `bare_unit` names one of
// those ("600" with bare_unit "s" is 600 s).
// "2us" -> 2000 ns, "1.5ms" -> 1500000 ns. Range: int64 ns, about +-292 years.
Parsed<SimTime> parse_duration(std::string_view text, std::string_view bare_unit = "");

// "80GiB", "512MB", "1KB", "1.5KiB", "7B". Among the units in which the value
// is at least 1 and exact with at most 3 decimals, the one giving the fewest
// digits; on a tie, fewer decimals, then binary units when the value is a
// multiple of 1024 (else decimal ones), then the larger unit.
std::string format_bytes(int64_t bytes);

// "50GB/s", "46.5GB/s", "0.5B/s": always bytes per second, in the largest of
// B/s KB/s MB/s GB/s TB/s not above the value, with the shortest decimal that
// parses back to the same double (so at most 17 significant digits, usually
// few). Precondition: finite.
std::string format_bandwidth(double bytes_per_second);

// "2us", "10min", "54d", "1.5ms", "0s": the largest of d h min s ms us ns in
// which the value is at least 1 and exact with at most 3 decimals.
std::string format_duration(SimTime duration);

}  // namespace clustersim::sim
