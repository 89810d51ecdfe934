// What the importers of training configs (scenario/torchtitan_import.h,
// scenario/nemo_import.h) share: taking the config's keys one by one from
// its tree (config/config_tree.h), writing scenario keys that name the key
// and line they came from (or the tool's default they took), noting what is
// only approximated, and finishing: the keys left over listed with their
// values, the command line's keys added (scenario/import_target.h), the
// written scenario checked as `check` and `run` read it.
//
// Errors collect in the sink (every problem of the config at once) and are
// thrown as one sim::ConfigError by finish().
// Thread safety: one import per object, on one thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/config_tree.h"
#include "scenario/import_target.h"
#include "scenario/imported_scenario.h"

namespace clustersim::cli {

// The largest count (GPUs, a degree, sequences) an import takes from a config:
// 2^20, so that products of a few stay exact in 64 bits.
inline constexpr int64_t kMostConfigCount = int64_t{1} << 20;

class ConfigImport {
 public:
  enum class KeyStyle {
    kToml,    // "[training] seq_len"
    kDotted,  // "model.seq_len"
  };

  // Keeps references to `root` and `options`, which must outlive the import.
  // `tool` is the import command's name for it ("torchtitan"), `tool_name`
  // how comments name its defaults ("torchtitan's default 2048").
  ConfigImport(const sim::ConfigNode& root, std::string tool, std::string tool_name,
               const std::string& config_path, const ImportOptions& options, KeyStyle style);

  // Problems found before the import read the tree (its interpolations),
  // reported with the import's own.
  void add_diagnostics(sim::DiagnosticSink&& other) { sink_.append(std::move(other)); }

 protected:
  // The key as the config's format shows it.
  std::string shown(std::string_view path) const;
  // The one of `paths` the config has (versions of a tool name one setting
  // differently); the first when it has none.
  std::string path_of(std::initializer_list<const char*> paths) const;
  sim::SourceLocation where_of(const std::string& path) const;
  // A scenario key from the config's `path`; `comment` (default: the key as
  // shown) says how it was derived.
  void put(std::string key, std::string value, const std::string& path, std::string comment = "");
  // The key as shown, plus "(absent: TOOL's default VALUE)" when the config
  // leaves it out.
  std::string absent(const std::string& path, const std::string& value) const;
  void report(const std::string& path, std::string message);
  // The config does not give `path` (absent, or null) and no problem with
  // it was reported yet (an interpolation that named nothing leaves null).
  bool missing(const std::string& path) const;
  void approximate(std::string what) { scenario_.approximations.push_back(std::move(what)); }

  int64_t int_or(const std::string& path, int64_t fallback);
  double number_or(const std::string& path, double fallback);
  bool bool_or(const std::string& path, bool fallback);
  std::string string_or(const std::string& path, std::string fallback);
  // A scalar of any kind as its text ("16", "bf16-mixed"): keys some
  // configs write as numbers and others as strings.
  std::string text_or(const std::string& path, std::string fallback);

  // Lists the keys left over, adds the target keys for `gpus`, checks the
  // scenario; throws sim::ConfigError with every problem found.
  ImportedScenario finish(const JobGpus& gpus);

  const sim::ConfigNode& root_;
  sim::DiagnosticSink sink_;
  sim::ConfigTreeReader reader_;
  const ImportOptions& options_;
  ImportedScenario scenario_;

 private:
  std::string tool_name_;
  KeyStyle style_;
};

}  // namespace clustersim::cli
