#include "config/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "config/config_error.h"
#include "config/suggest.h"

namespace clustersim::sim {

namespace {

struct Override {
  std::string key;
  std::string value_text;
  SourceLocation where;
};

SourceLocation location(const std::string& file, const YAML::Mark& mark) {
  // yaml-cpp marks are 0-based; -1 when a node has no position.
  return SourceLocation{file, mark.line >= 0 ? mark.line + 1 : 1,
                        mark.column >= 0 ? mark.column + 1 : 1};
}

std::string describe_found(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
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
  const std::vector<std::string> names = schema.child_names(section);
  std::string message = "unknown key";
  if (auto guess = suggest(key, names)) message += " (did you mean '" + *guess + "'?)";
  message += "; expected one of: " + list_names(names);
  if (!section.empty()) message += " (in section '" + std::string(section) + "')";
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
        if (schema_.find_section(section) == nullptr) {
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

  void walk_root(const YAML::Node& root) {
    if (!root.IsMap()) {
      sink_.add(location(file_, root.Mark()), "",
                "expected a mapping of scenario keys at the top level (e.g. 'name: my-run'), "
                "found " +
                    describe_found(root));
      invalid_.insert("");
      return;
    }
    walk_section(root, "");
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
        values_.set(path, ConfigValues::Entry{*spec.default_value, {"(default)", 0, 0}, true});
      }
    }
  }

  ConfigValues take_values() { return std::move(values_); }

 private:
  void walk_section(const YAML::Node& map, const std::string& section) {
    section_locations_.emplace(section, location(file_, map.Mark()));
    std::map<std::string, int> first_line;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies (cheap handles): `it->` yields a temporary proxy, and
      // references into it dangle at the end of the statement.
      const YAML::Node key_node = it->first;
      const YAML::Node value = it->second;
      const SourceLocation key_where = location(file_, key_node.Mark());
      if (!key_node.IsScalar()) {
        sink_.add(key_where, section,
                  "expected a key name, found " + describe_found(key_node) + " as a key");
        continue;
      }
      const std::string& key = key_node.Scalar();
      const std::string path = join_path(section, key);
      if (auto [seen, inserted] = first_line.emplace(key, key_where.line); !inserted) {
        sink_.add(key_where, path,
                  "duplicate key (first set at line " + std::to_string(seen->second) +
                      "); expected each key once");
        continue;
      }
      if (schema_.find_section(path) != nullptr) {
        if (value.IsMap()) {
          walk_section(value, path);
        } else if (!value.IsNull()) {
          sink_.add(location(file_, value.Mark()), path,
                    "expected a mapping (section '" + path + "'), found " + describe_found(value));
          invalid_.insert(path);
        }
        continue;
      }
      const KeySpec* spec = schema_.find_key(path);
      if (spec == nullptr) {
        sink_.add(key_where, path, unknown_key_message(schema_, section, key));
        continue;
      }
      if (overrides_.contains(path)) continue;
      // An empty value has no position of its own: point at the key.
      const SourceLocation value_where = value.IsNull() ? key_where : location(file_, value.Mark());
      if (!value.IsScalar()) {
        sink_.add(value_where, path,
                  "expected " + spec->type_description() + ", found " + describe_found(value));
        invalid_.insert(path);
        continue;
      }
      store(*spec, value.Scalar(), value_where);
    }
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

ConfigValues load_scenario_text(std::string_view yaml, const std::string& file_name,
                                const ConfigSchema& schema,
                                std::span<const std::string> overrides) {
  DiagnosticSink sink;
  Loader loader(file_name, schema, sink);
  loader.parse_overrides(overrides);
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    sink.add(location(file_name, e.mark), "", "invalid YAML: " + e.msg);
    sink.throw_if_any();
  }
  // A file of only comments or whitespace parses as no document or a null one.
  if (documents.empty() || (documents.size() == 1 && documents[0].IsNull())) {
    sink.add(SourceLocation{file_name, 1, 1}, "",
             "the file is empty; expected a mapping of scenario keys (at least 'name')");
    sink.throw_if_any();
  }
  if (documents.size() > 1) {
    sink.add(location(file_name, documents[1].Mark()), "",
             "expected one YAML document, found " + std::to_string(documents.size()) +
                 " (separated by '---')");
  }
  loader.walk_root(documents[0]);
  loader.finish();
  sink.throw_if_any();
  return loader.take_values();
}

ConfigValues load_scenario_file(const std::string& path, const ConfigSchema& schema,
                                std::span<const std::string> overrides) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  const auto fail = [&](const std::string& message) {
    DiagnosticSink sink;
    sink.add(SourceLocation{path, 0, 0}, "", message);
    sink.throw_if_any();
  };
  if (!fs::exists(status)) fail("cannot open the scenario: no such file");
  if (fs::is_directory(status)) fail("is a directory; expected a scenario YAML file");
  if (!fs::is_regular_file(status)) fail("is not a regular file; expected a scenario YAML file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open the scenario for reading (permission denied?)");
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) fail("read error while loading the scenario");
  return load_scenario_text(content.str(), path, schema, overrides);
}

}  // namespace clustersim::sim
