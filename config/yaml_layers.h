// The YAML documents of one configuration file and of the files it extends
// (`extends: <file>` at its top level), for config/scenario_loader.cc, which
// merges them key by key while validating: each document keeps its own file
// name so that every message points at the file that holds the value.
//
// Errors (reported to the sink): a base file that is missing, a directory or
// unreadable (at the `extends` value that names it), invalid YAML, an empty
// file or more than one document in any file, and a cycle of extends (naming
// every file of the cycle). Invalid YAML, an empty file, a missing base and a
// cycle stop the reading (ConfigError is thrown); the rest are collected.
// Thread safety: pure functions of their inputs and the file system.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/scenario_loader.h"

namespace clustersim::sim {

struct YamlLayer {
  std::string file;  // as messages show it
  YAML::Node root;   // the first document of the file
};

// yaml-cpp's 0-based mark as a 1-based file:line:col.
SourceLocation yaml_location(const std::string& file, const YAML::Mark& mark);

// Parses `text` (the content of `file_name`) and, when `follow_extends`, the
// chain of files it extends: bases first, `file_name` last. A relative
// `extends` is resolved against the directory of the file that names it.
std::vector<YamlLayer> read_yaml_layers(std::string_view text, const std::string& file_name,
                                        bool follow_extends, DiagnosticSink& sink);

}  // namespace clustersim::sim
