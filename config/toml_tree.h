// A TOML document (a torchtitan train config) as a ConfigNode tree
// (config/config_tree.h), parsed by toml++ (Debian's libtomlplusplus-dev).
// Table members keep the file's order; dates and times become strings as
// TOML writes them.
// Errors: invalid TOML is a ConfigError with one diagnostic at the
// file:line:col where toml++ stopped, "expected valid TOML, found ...".
// Thread safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include "config/config_tree.h"

namespace clustersim::sim {

// `file` is what messages name the document by.
ConfigNode parse_toml_tree(std::string_view text, const std::string& file);

}  // namespace clustersim::sim
