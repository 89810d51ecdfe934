#include "config/unit_messages.h"

#include <optional>
#include <utility>
#include <vector>

#include "config/suggest.h"
#include "config/text_fields.h"
#include "config/unit_tables.h"

namespace clustersim::sim::units_detail {

namespace {

std::string did_you_mean(std::string_view a) { return "did you mean " + quoted(a) + "?"; }

std::string did_you_mean(std::string_view a, std::string_view b) {
  return "did you mean " + quoted(a) + " or " + quoted(b) + "?";
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string unknown_head(UnitKind kind, std::string_view unit) {
  return "unknown " + std::string(noun_of(kind)) + " unit " + quoted(unit);
}

// Which other kind, if any, `unit` belongs to.
std::optional<UnitKind> other_kind_of(UnitKind kind, std::string_view unit) {
  for (UnitKind k : {UnitKind::kSize, UnitKind::kBandwidth, UnitKind::kDuration}) {
    if (k != kind && find_unit(k, unit) != nullptr) return k;
  }
  return std::nullopt;
}

std::string wrong_kind(UnitKind kind, std::string_view unit, UnitKind actual) {
  std::string message = quoted(unit) + " is a unit of " + std::string(noun_of(actual)) +
                        ", but a " + std::string(noun_of(kind)) + " is expected";
  if (kind == UnitKind::kSize && ends_with(unit, "/s") &&
      find_unit(kind, unit.substr(0, unit.size() - 2)) != nullptr) {
    return message + ": " + did_you_mean(unit.substr(0, unit.size() - 2));
  }
  if (kind == UnitKind::kBandwidth && find_unit(kind, std::string(unit) + "/s") != nullptr) {
    return message + ": " + did_you_mean(std::string(unit) + "/s");
  }
  return message + "; accepted units: " + accepted_units(kind);
}

// Common slips with a specific explanation; nullopt when `unit` is none.
std::optional<std::string> known_slip(UnitKind kind, std::string_view unit) {
  const std::string low = ascii_lower(unit);
  const std::string_view prefixes = "KMGTP";
  const bool bare_prefix = unit.size() == 1 && prefixes.find(static_cast<char>(unit[0] & ~0x20)) !=
                                                   std::string_view::npos;
  switch (kind) {
    case UnitKind::kSize: {
      if (unit.size() >= 1 && unit.back() == 'b') {
        const std::string as_bytes = std::string(unit.substr(0, unit.size() - 1)) + "B";
        if (find_unit(kind, as_bytes) != nullptr) {
          return quoted(unit) +
                 " counts bits (b), but sizes are in bytes (B): " + did_you_mean(as_bytes);
        }
      }
      if (low == "bit" || low == "bits") {
        return "sizes are in bytes, not bits: " + did_you_mean("B");
      }
      if (low == "byte" || low == "bytes") {
        return unknown_head(kind, unit) + ": " + did_you_mean("B");
      }
      if (bare_prefix) {
        const char p = static_cast<char>(unit[0] & ~0x20);
        const std::string decimal = std::string(1, p) + "B";
        const std::string binary = std::string(1, p) + "iB";
        return quoted(unit) + " lacks the byte unit: " + did_you_mean(decimal, binary);
      }
      if (unit.size() == 2 && unit[1] == 'i' &&
          find_unit(kind, std::string(unit) + "B") != nullptr) {
        return unknown_head(kind, unit) + ": " + did_you_mean(std::string(unit) + "B");
      }
      if (low == "eb" || low == "eib" || low == "zb" || low == "zib" || low == "yb" ||
          low == "yib") {
        return "units above PiB are not supported, since sizes are limited to about 8 EiB; use "
               "PB or PiB";
      }
      break;
    }
    case UnitKind::kBandwidth: {
      // "GBps", "GiBps": bytes spelt like bits; answer with the unambiguous form.
      if (ends_with(unit, "Bps")) {
        const std::string slash = std::string(unit.substr(0, unit.size() - 2)) + "/s";
        if (find_unit(kind, slash) != nullptr) {
          return quoted(unit) +
                 " is not accepted, to keep bytes (B) and bits (b) apart: " + did_you_mean(slash);
        }
      }
      for (std::string_view tail : {"bits/s", "bit/s", "bits", "bit", "bitps"}) {
        if (ends_with(unit, tail)) {
          const std::string bits = std::string(unit.substr(0, unit.size() - tail.size())) + "b/s";
          if (find_unit(kind, bits) != nullptr) {
            return unknown_head(kind, unit) + ": " + did_you_mean(bits);
          }
        }
      }
      for (std::string_view tail : {"/sec", "/second", "ps"}) {
        if (ends_with(unit, tail)) {
          const std::string slash = std::string(unit.substr(0, unit.size() - tail.size())) + "/s";
          if (find_unit(kind, slash) != nullptr) {
            return unknown_head(kind, unit) + ": " + did_you_mean(slash);
          }
        }
      }
      if (find_unit(UnitKind::kSize, std::string(unit.substr(0, unit.size() - 1)) + "B") !=
              nullptr &&
          unit.back() == 'b' && find_unit(kind, std::string(unit) + "/s") != nullptr) {
        return quoted(unit) + " is a number of bits, but a bandwidth (per second) is expected: " +
               did_you_mean(std::string(unit) + "/s");
      }
      if (bare_prefix) {
        const char p = static_cast<char>(unit[0] & ~0x20);
        return quoted(unit) + " lacks the rest of the unit: " +
               did_you_mean(std::string(1, p) + "bps", std::string(1, p) + "B/s");
      }
      break;
    }
    case UnitKind::kDuration: {
      struct Alias {
        std::string_view alias;
        std::string_view unit;
      };
      static constexpr Alias kAliases[] = {
          {"sec", "s"},    {"secs", "s"},     {"second", "s"},       {"seconds", "s"},
          {"msec", "ms"},  {"msecs", "ms"},   {"millisecond", "ms"}, {"milliseconds", "ms"},
          {"usec", "us"},  {"usecs", "us"},   {"microsecond", "us"}, {"microseconds", "us"},
          {"nsec", "ns"},  {"nsecs", "ns"},   {"nanosecond", "ns"},  {"nanoseconds", "ns"},
          {"mins", "min"}, {"minute", "min"}, {"minutes", "min"},    {"hr", "h"},
          {"hrs", "h"},    {"hour", "h"},     {"hours", "h"},        {"day", "d"},
          {"days", "d"},
      };
      for (const Alias& a : kAliases) {
        if (low == a.alias) return unknown_head(kind, unit) + ": " + did_you_mean(a.unit);
      }
      if (low == "m") {
        return quoted(unit) + " is ambiguous: use 'min' for minutes or 'ms' for milliseconds";
      }
      if (low == "y" || low == "yr" || low == "yrs" || low == "year" || low == "years") {
        return "years are not a unit here; use days, as in '365d'";
      }
      if (low == "w" || low == "wk" || low == "week" || low == "weeks") {
        return "weeks are not a unit here; use days, as in '7d'";
      }
      break;
    }
  }
  if (const std::optional<UnitKind> other = other_kind_of(kind, unit)) {
    return wrong_kind(kind, unit, *other);
  }
  return std::nullopt;
}

}  // namespace

std::string unknown_unit(UnitKind kind, std::string_view unit) {
  if (std::optional<std::string> slip = known_slip(kind, unit)) return *std::move(slip);
  std::vector<std::string_view> same_letters;
  for (const std::string& name : unit_names(kind)) {
    if (ascii_lower(name) == ascii_lower(unit)) same_letters.push_back(name);
  }
  const std::string head = unknown_head(kind, unit);
  if (same_letters.size() == 1) {
    return head + " (units are case-sensitive): " + did_you_mean(same_letters[0]);
  }
  if (same_letters.size() >= 2) {
    return head + " (units are case-sensitive): " + did_you_mean(same_letters[0], same_letters[1]);
  }
  const std::string tail = "accepted units: " + accepted_units(kind);
  if (std::optional<std::string> close = suggest(unit, unit_names(kind))) {
    return head + ": " + did_you_mean(*close) + " " + tail;
  }
  return head + "; " + tail;
}

}  // namespace clustersim::sim::units_detail
