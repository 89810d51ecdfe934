#include "config/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "config/config_error.h"
#include "config/file_text.h"
#include "config/suggest.h"
#include "config/yaml_layers.h"

namespace clustersim::sim {

namespace {

struct Override {
  std::string key;
  std::string value_text;
  SourceLocation where;
};

SourceLocation location(const std::string& file, const YAML::Mark& mark) {
  return yaml_location(file, mark);
}

// One file's mapping for one section; the files of a section are ordered
// bases first, so the last one's values win.
struct Layer {
  YAML::Node map;
  const std::string* file;
};

// One key of a section as each file that gives it says it, bases first.
struct Given {
  YAML::Node key;
  YAML::Node value;
  const std::string* file;
};
struct MergedKey {
  std::string name;
  std::vector<Given> given;
};

std::string describe_found(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar: {
      // A whole file of plain text (a CSV given as a scenario) is one scalar.
      constexpr size_t kShown = 60;
      const std::string& text = node.Scalar();
      if (text.size() <= kShown) return "'" + text + "'";
      return "'" + text.substr(0, kShown) + "...' (text of " + std::to_string(text.size()) +
             " characters)";
    }
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing (an empty value)";
}

std::string list_names(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

std::string unknown_key_message(const ConfigSchema& schema, std::string_view section,
                                std::string_view key) {
  const std::string path =
      section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
  if (const std::string* belongs = schema.foreign(path)) {
    return "expected a key of this file, found '" + path + "', which " + *belongs;
  }
  const std::vector<std::string> names = schema.child_names(section);
  std::string message = "unknown key";
  if (auto guess = suggest(key, names)) message += " (did you mean '" + *guess + "'?)";
  message += "; expected one of: " + list_names(names);
  if (!section.empty()) message += " (in section '" + std::string(section) + "')";
  if (const SectionSpec* spec = schema.find_section(section);
      spec != nullptr && !spec->unknown_key_hint.empty()) {
    message += "; " + spec->unknown_key_hint;
  }
  return message;
}

class Loader {
 public:
  Loader(const std::string& file, const ConfigSchema& schema, DiagnosticSink& sink)
      : file_(file), schema_(schema), sink_(sink) {}

  void parse_overrides(std::span<const std::string> overrides) {
    for (const std::string& text : overrides) {
      SourceLocation where{"--set " + text, 0, 0};
      const size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0) {
        sink_.add(where, "", "expected KEY=VALUE (e.g. --set seed=7), found '" + text + "'");
        continue;
      }
      std::string key = text.substr(0, eq);
      if (schema_.find_section(key) != nullptr) {
        sink_.add(where, key,
                  "is a section, not a key; expected one of its keys: " +
                      list_names(schema_.child_names(key)));
        continue;
      }
      if (schema_.find_key(key) == nullptr) {
        const std::string_view section = parent_path(key);
        if (const std::string* belongs = schema_.foreign(key)) {
          sink_.add(where, key,
                    "expected a key of this file, found '" + key + "', which " + *belongs);
        } else if (schema_.find_section(section) == nullptr) {
          sink_.add(where, key, "unknown key: there is no section '" + std::string(section) + "'");
        } else {
          sink_.add(where, key,
                    unknown_key_message(schema_, section, key.substr(key.rfind('.') + 1)));
        }
        continue;
      }
      overrides_[key] = Override{key, text.substr(eq + 1), where};
    }
  }

  // `files`: bases first (config/yaml_layers.h).
  void walk_root(const std::vector<YamlLayer>& files) {
    std::vector<Layer> layers;
    for (const YamlLayer& f : files) {
      if (!f.root.IsMap()) {
        sink_.add(location(f.file, f.root.Mark()), "",
                  "expected a mapping of scenario keys at the top level (e.g. 'name: my-run'), "
                  "found " +
                      describe_found(f.root));
        invalid_.insert("");
        continue;
      }
      layers.push_back(Layer{f.root, &f.file});
    }
    if (invalid_.contains("")) return;
    walk_section(layers, "");
  }

  // Defaults, required keys and overrides, once the file has been read.
  void finish() {
    for (const auto& [path, ov] : overrides_) apply_override(ov);
    for (const auto& [path, spec] : schema_.keys()) {
      if (values_.has(path)) continue;
      if (spec.is_required && !reported_invalid(path)) {
        const std::string_view section = parent_path(path);
        const auto it = section_locations_.find(std::string(section));
        const SourceLocation where =
            it != section_locations_.end() ? it->second : SourceLocation{file_, 1, 1};
        sink_.add(
            where, path,
            "missing required key; expected " + spec.type_description() + " (" + spec.doc + ")");
      } else if (spec.default_value) {
        values_.set(path, ConfigValues::Entry{*spec.default_value, default_location(path), true});
      }
    }
  }

  ConfigValues take_values() {
    values_.set_file(file_);
    return std::move(values_);
  }
  // The top level is not a mapping: there are no keys to check.
  bool file_unusable() const { return invalid_.contains(""); }

  // Where a check that fails on the default of an absent key points: the
  // innermost of its sections that the file has, else the file.
  SourceLocation default_location(std::string_view path) const {
    std::string_view section = path;
    do {
      section = parent_path(section);
      const auto it = section_locations_.find(std::string(section));
      if (it != section_locations_.end()) {
        SourceLocation where = it->second;
        where.defaulted = true;
        return where;
      }
    } while (!section.empty());
    return SourceLocation{file_, 0, 0, true};
  }

 private:
  // Deep merge while walking: each key once, in the order the files first
  // give it; the last file's value wins, and where it is a mapping the
  // mappings below it (down to a value that is not one, which it replaces)
  // merge into it. An empty section adds nothing.
  void walk_section(const std::vector<Layer>& layers, const std::string& section) {
    section_locations_.emplace(section, location(*layers.back().file, layers.back().map.Mark()));
    std::vector<MergedKey> keys;
    std::map<std::string, size_t, std::less<>> index;
    // In file order: a key at its first appearance (an index into `keys`),
    // or a problem of the mapping itself, so that messages keep that order.
    std::vector<std::variant<size_t, Diagnostic>> order;
    for (const Layer& layer : layers) {
      std::map<std::string, int> first_line;
      for (auto it = layer.map.begin(); it != layer.map.end(); ++it) {
        // Copies (cheap handles): `it->` yields a temporary proxy, and
        // references into it dangle at the end of the statement.
        const YAML::Node key_node = it->first;
        const YAML::Node value = it->second;
        const SourceLocation key_where = location(*layer.file, key_node.Mark());
        if (!key_node.IsScalar()) {
          order.emplace_back(
              Diagnostic{key_where, section,
                         "expected a key name, found " + describe_found(key_node) + " as a key"});
          continue;
        }
        const std::string& key = key_node.Scalar();
        if (auto [seen, inserted] = first_line.emplace(key, key_where.line); !inserted) {
          order.emplace_back(Diagnostic{key_where, join_path(section, key),
                                        "duplicate key (first set at line " +
                                            std::to_string(seen->second) +
                                            "); expected each key once"});
          continue;
        }
        const auto [slot, added] = index.emplace(key, keys.size());
        if (added) {
          keys.push_back(MergedKey{key, {}});
          order.emplace_back(slot->second);
        }
        keys[slot->second].given.push_back(Given{key_node, value, layer.file});
      }
    }
    for (const auto& step : order) {
      if (const size_t* k = std::get_if<size_t>(&step)) {
        walk_key(keys[*k], section);
      } else {
        const Diagnostic& d = std::get<Diagnostic>(step);
        sink_.add(d.where, d.key_path, d.message);
      }
    }
  }

  void walk_key(const MergedKey& merged, const std::string& section) {
    const Given& top = merged.given.back();
    const std::string& file = *top.file;
    const YAML::Node& value = top.value;
    const SourceLocation key_where = location(file, top.key.Mark());
    const std::string path = join_path(section, merged.name);
    if (schema_.find_section(path) != nullptr) {
      if (value.IsMap() || value.IsNull()) {
        // The mappings from the last value that is not one (replaced) up.
        auto first = merged.given.end();
        while (first != merged.given.begin() &&
               (std::prev(first)->value.IsMap() || std::prev(first)->value.IsNull())) {
          --first;
        }
        // Built by copies: assigning a YAML::Node assigns the node it refers to.
        std::vector<Layer> below;
        for (auto it = first; it != merged.given.end(); ++it) {
          if (it->value.IsMap()) below.push_back(Layer{it->value, it->file});
        }
        if (!below.empty()) walk_section(below, path);
      } else {
        sink_.add(location(file, value.Mark()), path,
                  "expected a mapping (section '" + path + "'), found " + describe_found(value));
        invalid_.insert(path);
      }
      return;
    }
    const KeySpec* spec = schema_.find_key(path);
    if (spec == nullptr) {
      sink_.add(key_where, path, unknown_key_message(schema_, section, merged.name));
      return;
    }
    if (overrides_.contains(path)) return;
    // An empty value has no position of its own: point at the key.
    const SourceLocation value_where = value.IsNull() ? key_where : location(file, value.Mark());
    if (!value.IsScalar()) {
      sink_.add(value_where, path,
                "expected " + spec->type_description() + ", found " + describe_found(value));
      invalid_.insert(path);
      return;
    }
    store(*spec, value.Scalar(), value_where);
  }

  void apply_override(const Override& ov) {
    const KeySpec& spec = *schema_.find_key(ov.key);
    std::optional<std::string> text;
    std::string found = "nothing (an empty value)";
    try {
      const YAML::Node node = YAML::Load(ov.value_text);
      if (node.IsScalar()) {
        text = node.Scalar();
      } else if (!node.IsNull()) {
        found = describe_found(node);
      }
    } catch (const YAML::Exception&) {
      text = ov.value_text;  // not YAML on its own (e.g. "a: b"): take it literally
    }
    if (!text) {
      sink_.add(ov.where, ov.key, "expected " + spec.type_description() + ", found " + found);
      invalid_.insert(ov.key);
      return;
    }
    store(spec, *text, ov.where);
  }

  void store(const KeySpec& spec, const std::string& text, const SourceLocation& where) {
    Parsed<ConfigValue> parsed = parse_value(spec, text);
    if (!parsed) {
      sink_.add(where, spec.path, parsed.error);
      invalid_.insert(spec.path);
      return;
    }
    values_.set(spec.path, ConfigValues::Entry{*parsed, where, false});
  }

  // True when `path`, or a section above it, was given but already reported
  // as invalid: it is not also "missing".
  bool reported_invalid(std::string_view path) const {
    for (;;) {
      if (invalid_.contains(path)) return true;
      if (path.empty()) return false;
      path = parent_path(path);
    }
  }

  const std::string& file_;
  const ConfigSchema& schema_;
  DiagnosticSink& sink_;
  std::map<std::string, Override> overrides_;
  std::map<std::string, SourceLocation> section_locations_;
  std::set<std::string, std::less<>> invalid_;  // given, but reported as invalid
  ConfigValues values_;
};

}  // namespace

void add_scenario_identity_keys(ConfigSchema& schema) {
  schema.add_key("name", ValueType::kString, "Name of the scenario, shown in every report.")
      .required()
      .not_empty();
  schema.add_key("description", ValueType::kString, "Free text describing the scenario.")
      .default_to(std::string());
  schema
      .add_key("seed", ValueType::kInt,
               "Seed of every random stream; same scenario and seed, same results.")
      .default_to(int64_t{1})
      .non_negative();
}

void add_extends_key(ConfigSchema& schema) {
  schema
      .add_key(std::string(kExtendsKey), ValueType::kString,
               "A file of the same kind that this one builds on, relative to this file's "
               "directory unless absolute: it is read first (after any file it extends in turn), "
               "then this file's keys override its keys one by one (mappings merge, a scalar or a "
               "list replaces).")
      .not_empty();
}

namespace {

// Reads `yaml` with its overrides into values; the problems of single keys
// go to `problems`. Throws only when the text is unusable as a whole (not
// YAML, not a mapping, a base it extends missing).
ConfigValues load_keeping_going(std::string_view yaml, const std::string& file_name,
                                const ConfigSchema& schema,
                                std::span<const std::string> overrides, DiagnosticSink& problems) {
  DiagnosticSink sink;
  Loader loader(file_name, schema, sink);
  loader.parse_overrides(overrides);
  const bool follow_extends = schema.find_key(kExtendsKey) != nullptr;
  const std::vector<YamlLayer> files = read_yaml_layers(yaml, file_name, follow_extends, sink);
  loader.walk_root(files);
  loader.finish();
  if (loader.file_unusable()) sink.throw_if_any();
  problems.append(std::move(sink));
  return loader.take_values();
}

}  // namespace

ConfigValues load_scenario_text(std::string_view yaml, const std::string& file_name,
                                const ConfigSchema& schema,
                                std::span<const std::string> overrides) {
  DiagnosticSink problems;
  ConfigValues values = load_keeping_going(yaml, file_name, schema, overrides, problems);
  problems.throw_if_any();
  return values;
}

ConfigValues load_scenario_file(const std::string& path, const ConfigSchema& schema,
                                std::span<const std::string> overrides) {
  return load_scenario_text(read_scenario_text(path), path, schema, overrides);
}

ConfigValues load_scenario_file_keeping_going(const std::string& path, const ConfigSchema& schema,
                                              std::span<const std::string> overrides,
                                              DiagnosticSink& problems) {
  return load_keeping_going(read_scenario_text(path), path, schema, overrides, problems);
}

std::string read_scenario_text(const std::string& path) {
  std::string content;
  const ReadOutcome outcome = try_read_file_text(path, content, /*regular_only=*/true);
  std::string problem;
  switch (outcome.failure) {
    case ReadFailure::kNone:
      return content;
    case ReadFailure::kMissing:
      problem = "cannot open the scenario: no such file";
      break;
    case ReadFailure::kDirectory:
      problem = "is a directory; expected a scenario YAML file";
      break;
    case ReadFailure::kNotRegular:
      problem = "is not a regular file; expected a scenario YAML file";
      break;
    case ReadFailure::kSymlinkLoop:
      problem = "cannot open the scenario: a loop of symbolic links";
      break;
    case ReadFailure::kUnreadable:
      problem = "cannot open the scenario for reading (permission denied?)";
      break;
    case ReadFailure::kTooLarge:
      problem = "cannot load the scenario: it " + read_failure_text(outcome);
      break;
    case ReadFailure::kReadError:
      problem = "read error while loading the scenario";
      break;
  }
  DiagnosticSink sink;
  sink.add(SourceLocation{path, 0, 0}, "", problem);
  sink.throw_if_any();
  return {};
}

}  // namespace clustersim::sim
