#include "config/config_schema.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "config/suggest.h"
#include "config/text_fields.h"
#include "sim/check.h"

namespace clustersim::sim {

namespace {

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string limit_phrase(Limit limit) {
  switch (limit) {
    case Limit::kPositive:
      return "> 0";
    case Limit::kNonNegative:
      return ">= 0";
    case Limit::kFraction:
      return "in [0, 1]";
    case Limit::kNone:
      break;
  }
  return "";
}

// "a positive integer", "an integer >= 0"...: the noun phrase of a message.
std::string expected_phrase(const KeySpec& spec) {
  std::string noun;
  switch (spec.type) {
    case ValueType::kInt:
      noun = "integer";
      break;
    case ValueType::kFloat:
      noun = "finite number";
      break;
    case ValueType::kBool:
      return "true or false";
    case ValueType::kString:
      return spec.non_empty ? "a non-empty string" : "a string";
    case ValueType::kEnum: {
      std::string text = "one of ";
      for (size_t i = 0; i < spec.choices.size(); ++i) {
        if (i > 0) text += ", ";
        text += spec.choices[i];
      }
      return text;
    }
    case ValueType::kBytes:
      noun = "size such as '80GiB'";
      break;
    case ValueType::kBandwidth:
      noun = "bandwidth such as '400Gbps' or '50GB/s'";
      break;
    case ValueType::kDuration:
      noun = "duration such as '10min'";
      break;
  }
  if (spec.limit == Limit::kPositive) return "a positive " + noun;
  if (spec.limit == Limit::kNonNegative) return "a non-negative " + noun;
  if (spec.limit == Limit::kFraction) return "a " + noun + " in [0, 1]";
  return (noun[0] == 'i' ? "an " : "a ") + noun;
}

// Sign of a parsed numeric value, for the limits.
int sign_of(const ConfigValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return (*i > 0) - (*i < 0);
  if (const auto* d = std::get_if<double>(&value)) return (*d > 0) - (*d < 0);
  if (const auto* t = std::get_if<SimTime>(&value)) {
    return (t->count_ns() > 0) - (t->count_ns() < 0);
  }
  return 1;
}

bool within_limit(Limit limit, const ConfigValue& value) {
  switch (limit) {
    case Limit::kNone:
      return true;
    case Limit::kPositive:
      return sign_of(value) > 0;
    case Limit::kNonNegative:
      return sign_of(value) >= 0;
    case Limit::kFraction: {
      const double x = std::holds_alternative<double>(value)
                           ? std::get<double>(value)
                           : static_cast<double>(std::get<int64_t>(value));
      return x >= 0.0 && x <= 1.0;
    }
  }
  return true;
}

// A '|' inside a Markdown table cell must be written "\|"; messages show it plain.
std::string escape_pipes(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

bool looks_like_nan_or_inf(std::string_view text) {
  std::string lower;
  for (char c : text) {
    if (c != '+' && c != '-' && c != '.') lower += ascii_lower(c);
  }
  return lower == "nan" || lower == "inf" || lower == "infinity";
}

Parsed<ConfigValue> parse_int(std::string_view text) {
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  // from_chars takes no '+': skip one, but not before a '-', or "+-5" would read as -5.
  if (!text.empty() && text.front() == '+') ++begin;
  if (begin != text.data() && begin != end && *begin == '-') return Parsed<ConfigValue>::fail("");
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    return Parsed<ConfigValue>::fail("overflows a 64-bit integer (limit +-9223372036854775807)");
  }
  if (ec != std::errc() || ptr != end || begin == end) return Parsed<ConfigValue>::fail("");
  return Parsed<ConfigValue>::ok(value);
}

Parsed<ConfigValue> parse_float(std::string_view text) {
  if (looks_like_nan_or_inf(text)) return Parsed<ConfigValue>::fail("not a finite number");
  double value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  // As in parse_int: "+-1.5" is not -1.5.
  if (!text.empty() && text.front() == '+') ++begin;
  if (begin != text.data() && begin != end && *begin == '-') return Parsed<ConfigValue>::fail("");
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    return Parsed<ConfigValue>::fail("out of the range of a double");
  }
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(value)) {
    return Parsed<ConfigValue>::fail("");
  }
  return Parsed<ConfigValue>::ok(value);
}

Parsed<ConfigValue> parse_bool(std::string_view text) {
  const std::string lower = ascii_lower(text);
  if (lower == "true") return Parsed<ConfigValue>::ok(true);
  if (lower == "false") return Parsed<ConfigValue>::ok(false);
  return Parsed<ConfigValue>::fail("");
}

template <class T>
Parsed<ConfigValue> widen(Parsed<T> parsed) {
  if (!parsed) return Parsed<ConfigValue>::fail(std::move(parsed.error));
  return Parsed<ConfigValue>::ok(ConfigValue(*parsed));
}

Parsed<ConfigValue> parse_typed(const KeySpec& spec, std::string_view text) {
  switch (spec.type) {
    case ValueType::kInt:
      return parse_int(text);
    case ValueType::kFloat:
      return parse_float(text);
    case ValueType::kBool:
      return parse_bool(text);
    case ValueType::kString:
      return Parsed<ConfigValue>::ok(std::string(text));
    case ValueType::kEnum:
      for (const std::string& choice : spec.choices) {
        if (choice == text) return Parsed<ConfigValue>::ok(choice);
      }
      if (auto guess = suggest(text, spec.choices)) {
        return Parsed<ConfigValue>::fail("did you mean " + quoted(*guess) + "?");
      }
      return Parsed<ConfigValue>::fail("");
    case ValueType::kBytes:
      return widen(parse_bytes(text, spec.unit));
    case ValueType::kBandwidth:
      return widen(parse_bandwidth(text, spec.unit));
    case ValueType::kDuration:
      return widen(parse_duration(text, spec.unit));
  }
  return Parsed<ConfigValue>::fail("");
}

}  // namespace

std::string join_path(std::string_view section, std::string_view name) {
  if (section.empty()) return std::string(name);
  return std::string(section) + "." + std::string(name);
}

std::string_view parent_path(std::string_view path) {
  const size_t dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

KeySpec& KeySpec::default_to(ConfigValue value) {
  default_value = std::move(value);
  return *this;
}
KeySpec& KeySpec::required() {
  is_required = true;
  return *this;
}
KeySpec& KeySpec::required_by(std::string commands) {
  needed_by = std::move(commands);
  return *this;
}
KeySpec& KeySpec::positive() {
  limit = Limit::kPositive;
  return *this;
}
KeySpec& KeySpec::non_negative() {
  limit = Limit::kNonNegative;
  return *this;
}
KeySpec& KeySpec::fraction() {
  limit = Limit::kFraction;
  return *this;
}
KeySpec& KeySpec::not_empty() {
  non_empty = true;
  return *this;
}
KeySpec& KeySpec::in_unit(std::string bare_unit) {
  unit = std::move(bare_unit);
  return *this;
}
KeySpec& KeySpec::one_of(std::vector<std::string> values) {
  choices = std::move(values);
  return *this;
}
KeySpec& KeySpec::validated_by(std::function<std::string(const ConfigValue&)> fn,
                               std::string description) {
  check = std::move(fn);
  check_doc = std::move(description);
  return *this;
}

std::string_view KeySpec::name() const {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? std::string_view(path) : std::string_view(path).substr(dot + 1);
}

std::string KeySpec::type_description() const {
  std::string text;
  switch (type) {
    case ValueType::kInt:
      text = "integer";
      break;
    case ValueType::kFloat:
      text = "number";
      break;
    case ValueType::kBool:
      text = "boolean";
      break;
    case ValueType::kString:
      text = non_empty ? "non-empty string" : "string";
      break;
    case ValueType::kEnum:
      text = "one of:";
      for (size_t i = 0; i < choices.size(); ++i) text += (i == 0 ? " " : " | ") + choices[i];
      break;
    case ValueType::kBytes:
      text = "size";
      break;
    case ValueType::kBandwidth:
      text = "bandwidth";
      break;
    case ValueType::kDuration:
      text = "duration";
      break;
  }
  const std::string bound = limit_phrase(limit);
  if (!bound.empty()) text += " " + bound;
  if (!check_doc.empty()) text += ", " + check_doc;
  return text;
}

ConfigSchema::ConfigSchema() { sections_.emplace("", SectionSpec{"", "Scenario identity.", ""}); }

SectionSpec& ConfigSchema::add_section(std::string path, std::string doc) {
  CLUSTERSIM_CHECK(!path.empty() && find_section(parent_path(path)) != nullptr,
                   "section '" + path + "' needs a declared parent section");
  CLUSTERSIM_CHECK(!keys_.contains(path) && !sections_.contains(path),
                   "'" + path + "' declared twice");
  auto [it, inserted] = sections_.emplace(path, SectionSpec{path, std::move(doc), ""});
  return it->second;
}

KeySpec& ConfigSchema::add_key(std::string path, ValueType type, std::string doc) {
  CLUSTERSIM_CHECK(find_section(parent_path(path)) != nullptr,
                   "key '" + path + "' needs a declared parent section");
  CLUSTERSIM_CHECK(!keys_.contains(path) && !sections_.contains(path),
                   "'" + path + "' declared twice");
  KeySpec spec;
  spec.path = path;
  spec.type = type;
  spec.doc = std::move(doc);
  auto [it, inserted] = keys_.emplace(std::move(path), std::move(spec));
  return it->second;
}

const KeySpec* ConfigSchema::find_key(std::string_view path) const {
  const auto it = keys_.find(path);
  return it == keys_.end() ? nullptr : &it->second;
}

const SectionSpec* ConfigSchema::find_section(std::string_view path) const {
  const auto it = sections_.find(path);
  return it == sections_.end() ? nullptr : &it->second;
}

void ConfigSchema::add_foreign(std::string path, std::string belongs) {
  foreign_.insert_or_assign(std::move(path), std::move(belongs));
}

const std::string* ConfigSchema::foreign(std::string_view path) const {
  for (std::string_view p = path; !p.empty(); p = parent_path(p)) {
    if (const auto it = foreign_.find(p); it != foreign_.end()) return &it->second;
  }
  return nullptr;
}

std::vector<std::string> ConfigSchema::child_names(std::string_view section) const {
  std::vector<std::string> names;
  for (const auto& [path, spec] : keys_) {
    if (parent_path(path) == section) names.emplace_back(spec.name());
  }
  for (const auto& [path, spec] : sections_) {
    if (!path.empty() && parent_path(path) == section) {
      names.emplace_back(path.substr(section.empty() ? 0 : section.size() + 1));
    }
  }
  return names;
}

std::string ConfigSchema::describe_markdown() const {
  std::string text =
      "# Scenario keys\n\n"
      "Every key a scenario file may set, by section. Sizes take B, KB, MB, GB, TB, PB or "
      "KiB..PiB;\n"
      "bandwidths bps..Tbps (bits) or B/s..TB/s, KiB/s..TiB/s; durations ns, us, ms, s, min, h, "
      "d.\n"
      "A bare number is in the unit column. Any key can be overridden on the command line with\n"
      "`--set KEY=VALUE`.\n";
  for (const auto& [path, section] : sections_) {
    text += "\n## " + (path.empty() ? std::string("Top level") : "`" + path + "`") + "\n\n";
    text += section.doc + "\n\n";
    text += "| key | type | unit | default | description |\n";
    text += "| --- | --- | --- | --- | --- |\n";
    for (const auto& [key_path, spec] : keys_) {
      if (parent_path(key_path) != path) continue;
      std::string default_text = "(optional)";
      if (spec.is_required) {
        default_text = "required";
      } else if (!spec.needed_by.empty()) {
        default_text = "required by " + spec.needed_by;
      } else if (spec.default_value) {
        const std::string shown = format_value(spec, *spec.default_value);
        default_text = shown.empty() ? "`\"\"`" : "`" + shown + "`";
      }
      text += "| `" + key_path + "` | " + escape_pipes(spec.type_description()) + " | " +
              spec.unit + " | " + default_text + " | " + spec.doc + " |\n";
    }
  }
  return text;
}

Parsed<ConfigValue> parse_value(const KeySpec& spec, std::string_view text) {
  Parsed<ConfigValue> parsed = parse_typed(spec, text);
  std::string problem;
  if (!parsed) {
    problem = std::move(parsed.error);
  } else if (spec.non_empty && std::get<std::string>(*parsed).empty()) {
    problem = "";
    parsed.value.reset();
  } else if (!within_limit(spec.limit, *parsed)) {
    parsed.value.reset();
  } else if (spec.check) {
    std::string expected = spec.check(*parsed);
    if (!expected.empty()) {
      return Parsed<ConfigValue>::fail("expected " + expected + ", found " + quoted(text));
    }
  }
  if (parsed) return parsed;
  std::string message = "expected " + expected_phrase(spec) + ", found " + quoted(text);
  if (!problem.empty()) message += ": " + problem;
  return Parsed<ConfigValue>::fail(std::move(message));
}

std::string format_value(const KeySpec& spec, const ConfigValue& value) {
  switch (spec.type) {
    case ValueType::kInt:
      return std::to_string(std::get<int64_t>(value));
    case ValueType::kFloat: {
      char buffer[32];
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, std::get<double>(value));
      return std::string(buffer, result.ptr);
    }
    case ValueType::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case ValueType::kString:
    case ValueType::kEnum:
      return std::get<std::string>(value);
    case ValueType::kBytes:
      return format_bytes(std::get<int64_t>(value));
    case ValueType::kBandwidth:
      return format_bandwidth(std::get<double>(value));
    case ValueType::kDuration:
      return format_duration(std::get<SimTime>(value));
  }
  return "";
}

}  // namespace clustersim::sim
