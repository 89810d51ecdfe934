// The layout version of clustersim's --json outputs (run, replay, campaign):
// each document's first key, "schema_version". It is raised when a key is
// removed or renamed or changes meaning or unit; a new key does not raise it
// (readers ignore keys they do not know). docs/schemas/<command>.schema.json
// describes each layout (JSON Schema, draft 2020-12) and
// tests/scripts/check_json_schema.py holds shipped scenarios' outputs to it.
// Thread safety: constants and a pure function.
#pragma once

#include <cstdint>

#include "config/json_writer.h"

namespace clustersim::cli {

inline constexpr int64_t kOutputSchemaVersion = 1;

inline void write_schema_version(sim::JsonWriter& json) {
  json.key("schema_version").int64(kOutputSchemaVersion);
}

}  // namespace clustersim::cli
