// A scenario that `clustersim import` writes from another tool's training
// configuration (scenario/torchtitan_import.h, scenario/nemo_import.h): its
// keys, each with what it came from (the config's key and its file:line:col,
// a command-line option, or a default of the tool), the config's keys that
// have no counterpart here, what was written in place of what the config
// says, and what the config cannot say and the command line supplied.
//
// scenario_yaml() renders it: a header of comments listing those, then the
// keys as nested YAML, each followed by a comment naming its source
// ("local_batch: 2  # [training] local_batch_size"). The text is a scenario
// that `check` and `run` read (import_target.h checks it before it is
// written). Thread safety: value type; pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"

namespace clustersim::cli {

struct ImportedKey {
  std::string key;    // scenario key path: "workload.local_batch"
  std::string value;  // as a YAML scalar: 2, bf16, "15,16,16,15" (quoted by the writer when needed)
  std::string source;  // the comment: "[training] local_batch_size", "--gpus 8"
  // Where a problem with this key is reported: the config value's
  // file:line:col, or the option ("--gpus 8") with no line.
  sim::SourceLocation where;
  // The config's key a diagnostic names ("training.local_batch_size"); empty
  // when the key came from the command line (the diagnostic then names `key`).
  std::string source_key;
};

struct ImportedScenario {
  std::string tool;         // "torchtitan", "nemo": the import command's first argument
  std::string config_path;  // as given on the command line
  std::string name;
  std::string description;
  std::vector<ImportedKey> keys;  // in writing order
  // "[profiling] enable_profiling = true": every key of the config with no
  // counterpart, with its value, in file order.
  std::vector<std::string> unmapped;
  // What was written in place of what the config says, and why.
  std::vector<std::string> approximations;
  // What the config cannot say, and what supplied it ("GPUs: 8 (--gpus)").
  std::vector<std::string> supplied;

  // Adds `k`, or replaces the value, source and location of the key of that
  // path (keeping its place).
  void set(ImportedKey k);
  const ImportedKey* find(std::string_view key) const;
};

// The scenario's YAML text with its comments (see the top of this file).
std::string scenario_yaml(const ImportedScenario& scenario);

// A value as a YAML scalar that reads back as the same text: plain when it
// is safe (letters, digits, and . _ - + /), else double-quoted.
std::string yaml_scalar(std::string_view text);

}  // namespace clustersim::cli
