// ConfigSchema: every scenario key declared once — path, type, unit, default,
// one-line doc, validation — and that one declaration drives parsing,
// validation, defaults and `clustersim describe-config`.
//
// Layers own their sections: each adds its keys with a function of its own
// (sim::add_scenario_keys, and later topology's, workloads', ...), and the
// command composes the full schema from them. Key paths are dotted
// ("workload.parallelism.tp"); a key's parent must be a declared section
// ("" is the top level).
//
// Values: integers are int64, numbers are finite doubles, sizes are int64
// bytes, bandwidths are double bytes per second, durations are SimTime.
// A size, bandwidth or duration written as a bare number is in the key's
// `unit` ("s", "B", "B/s"); with no unit a suffix is required.
// Thread safety: build once, then read from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/units.h"
#include "sim/sim_time.h"

namespace clustersim::sim {

enum class ValueType { kInt, kFloat, kBool, kString, kEnum, kBytes, kBandwidth, kDuration };

// int64: kInt, kBytes; double: kFloat, kBandwidth; std::string: kString, kEnum.
using ConfigValue = std::variant<int64_t, double, bool, std::string, SimTime>;

enum class Limit { kNone, kPositive, kNonNegative, kFraction /* in [0, 1] */ };

struct KeySpec {
  std::string path;
  ValueType type = ValueType::kString;
  std::string doc;
  std::string unit;                          // bare-number unit and docs; may be empty
  std::optional<ConfigValue> default_value;  // used when the key is absent
  bool is_required = false;                  // absent is an error
  // The commands that need the key although the file may leave it out for
  // others (`hardware` for run but not topo), as describe-config shows it:
  // "run, sweep, ...". The command that needs it reports it missing.
  std::string needed_by;
  std::vector<std::string> choices;          // kEnum
  Limit limit = Limit::kNone;
  bool non_empty = false;  // kString
  // Further validation: returns "" when the value is fine, otherwise the
  // "expected ..." phrase for the message. `check_doc` shows in the docs.
  std::function<std::string(const ConfigValue&)> check;
  std::string check_doc;

  KeySpec& default_to(ConfigValue value);
  KeySpec& required();
  KeySpec& required_by(std::string commands);
  KeySpec& positive();
  KeySpec& non_negative();
  KeySpec& fraction();
  KeySpec& not_empty();
  KeySpec& in_unit(std::string bare_unit);
  KeySpec& one_of(std::vector<std::string> values);
  KeySpec& validated_by(std::function<std::string(const ConfigValue&)> fn, std::string description);

  // The last component of the path.
  std::string_view name() const;
  // "integer >= 0", "size", "one of: a | b"...: the type column of the docs.
  std::string type_description() const;
};

struct SectionSpec {
  std::string path;  // "" for the top level
  std::string doc;
  // Said after the error of a key this section does not have (may be
  // empty): how to write what such keys are usually meant to say.
  std::string unknown_key_hint;
};

class ConfigSchema {
 public:
  ConfigSchema();

  SectionSpec& add_section(std::string path, std::string doc);
  // The parent section of `path` must already be declared.
  KeySpec& add_key(std::string path, ValueType type, std::string doc);

  const KeySpec* find_key(std::string_view path) const;
  const SectionSpec* find_section(std::string_view path) const;
  // Names (last components) of the keys and sections directly inside `section`.
  std::vector<std::string> child_names(std::string_view section) const;
  const std::map<std::string, KeySpec, std::less<>>& keys() const { return keys_; }
  const std::map<std::string, SectionSpec, std::less<>>& sections() const { return sections_; }

  // Every section and key as Markdown tables (describe-config).
  std::string describe_markdown() const;

  // A key or section that belongs to another kind of file (a hardware
  // profile's `gpu` in a software stack's profile): not a key of this
  // schema, but one whose error says where it belongs. `belongs` ends the
  // message "expected a key of this file, found 'PATH', which ...".
  void add_foreign(std::string path, std::string belongs);
  // The `belongs` of `path` or of the nearest section above it; nullptr for
  // a key no other file claims.
  const std::string* foreign(std::string_view path) const;

 private:
  std::map<std::string, SectionSpec, std::less<>> sections_;
  std::map<std::string, KeySpec, std::less<>> keys_;
  std::map<std::string, std::string, std::less<>> foreign_;
};

// Parses the text of one scalar for `spec` and validates it. On failure the
// error reads "expected ..., found '...'" (plus a reason or suggestion).
Parsed<ConfigValue> parse_value(const KeySpec& spec, std::string_view text);

// A value as users write it ("80GiB", "10min", "true"): for docs and dumps.
std::string format_value(const KeySpec& spec, const ConfigValue& value);

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string join_path(std::string_view section, std::string_view name);
// "a.b.c" -> "a.b"; "c" -> "".
std::string_view parent_path(std::string_view path);

}  // namespace clustersim::sim
