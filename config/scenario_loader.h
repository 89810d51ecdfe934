// Loading a scenario: one YAML file, validated against a ConfigSchema, with
// command-line overrides (`--set a.b.c=value`) applied on top.
//
// Every problem is reported at once in a ConfigError (see config_error.h):
// a missing, unreadable or empty file, a directory, invalid YAML, more than
// one YAML document, a top level that is not a mapping, duplicate keys,
// unknown keys (with a did-you-mean from the keys of the same section), a
// value of the wrong kind or out of its limits, missing required keys, and
// malformed overrides. Locations are 1-based line:column of the offending
// key or value.
//
// Extends: when the schema declares the top-level key `extends`
// (add_extends_key), a file may name another file that is read first, and
// recursively; the file's keys then override the base's key by key (deep
// merge of mappings; a scalar or a list replaces), and the merged keys are
// validated as one file. Each message names the file that holds the value
// (a base file's own line:col); a missing base is reported at the `extends`
// that names it, a cycle with every file in it (config/yaml_layers.h).
//
// A key set by an override is not read from the file (so an override can
// fix a bad value). Keys the scenario omits take the schema's default.
// Thread safety: pure functions of their inputs.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::sim {

// The keys every scenario has: name, description, seed.
void add_scenario_identity_keys(ConfigSchema& schema);

// The top-level key naming the file a file extends; add_extends_key declares it.
inline constexpr std::string_view kExtendsKey = "extends";
void add_extends_key(ConfigSchema& schema);

ConfigValues load_scenario_file(const std::string& path, const ConfigSchema& schema,
                                std::span<const std::string> overrides = {});

// The same, going on past the problems of single keys so that the checks of
// what the keys mean can run too (one pass reports everything): the keys'
// problems are added to `problems`, and the values hold every key that
// passed, with the default of a key reported invalid in its place. Throws
// ConfigError only when the file as a whole is unusable (unreadable, not
// YAML, not a mapping), where nothing else can be checked.
ConfigValues load_scenario_file_keeping_going(const std::string& path, const ConfigSchema& schema,
                                              std::span<const std::string> overrides,
                                              DiagnosticSink& problems);

// The scenario file's text, as load_scenario_file reads it: a ConfigError at
// the path worded for a scenario ("cannot open the scenario: no such file")
// when it cannot be read. For callers that keep the text (the sweep).
std::string read_scenario_text(const std::string& path);

// The same for text already in memory; `file_name` is what messages show.
ConfigValues load_scenario_text(std::string_view yaml, const std::string& file_name,
                                const ConfigSchema& schema,
                                std::span<const std::string> overrides = {});

}  // namespace clustersim::sim
