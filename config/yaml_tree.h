// A YAML document of another tool (a NeMo / Megatron-Core recipe) as a
// ConfigNode tree (config/config_tree.h), parsed by yaml-cpp. A plain
// scalar is typed as YAML 1.2's core schema reads it: null (~, null, or
// nothing), true/false, an integer, a number, else a string; a quoted one is
// always a string. OmegaConf interpolations ("${...}") stay strings for the
// caller to resolve.
// Errors (ConfigError, at file:line:col): invalid YAML, an empty file, more
// than one document, a top level that is not a mapping, a key that is not a
// scalar.
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include "config/config_tree.h"

namespace clustersim::sim {

// `file` is what messages name the document by.
ConfigNode parse_yaml_tree(std::string_view text, const std::string& file);

}  // namespace clustersim::sim
