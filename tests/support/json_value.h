// Test support: the reports and traces the commands write, read back with
// the project's strict JSON reader (config/json_reader.h); a malformed document
// fails the test with the reader's ConfigError (its line and column).
#pragma once

#include <string_view>

#include "config/json_reader.h"

namespace clustersim::test_support {

using sim::JsonValue;

inline JsonValue parse_json(std::string_view text) { return sim::parse_json(text, "<test>"); }

}  // namespace clustersim::test_support
