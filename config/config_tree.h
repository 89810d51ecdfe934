// Another tool's configuration file (a torchtitan TOML, a NeMo YAML) as a
// plain tree of tables, arrays and scalars, each with its file:line:col, and
// a reader that takes keys from it by dotted path, checks their kind, and
// remembers what it took, so that an importer can list every key it left
// (config/toml_tree.h and config/yaml_tree.h build the trees).
//
// Errors: a key of the wrong kind is a Diagnostic in the reader's sink at
// the value's file:line:col, keyed by its dotted path ("training.seq_len"),
// "expected an integer, found the string '8192'"; the reader goes on, so
// that one pass finds every such key. A YAML null reads as absent.
// Thread safety: ConfigNode is a value type; a reader is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config_error.h"

namespace clustersim::sim {

struct ConfigMember;

struct ConfigNode {
  enum class Kind { kTable, kArray, kString, kInteger, kFloat, kBool, kNull };

  Kind kind = Kind::kNull;
  SourceLocation where;  // of the value (a table's: of its header or first key)
  std::string text;      // scalars as written, strings without their quotes
  int64_t integer = 0;   // kInteger
  double number = 0;     // kFloat, and kInteger's value as a double
  bool boolean = false;  // kBool
  // kTable, in file order. A member is its own struct, declared below: a
  // std::pair of an incomplete ConfigNode is not allowed (clang refuses it).
  std::vector<ConfigMember> members;
  std::vector<ConfigNode> items;  // kArray

  bool is_scalar() const { return kind != Kind::kTable && kind != Kind::kArray; }
  // The member of a table called `name`, or nullptr.
  const ConfigNode* member(std::string_view name) const;
  // The node at a dotted path below this one ("training.seq_len"), or nullptr.
  const ConfigNode* find(std::string_view dotted_path) const;
};

// A table's member: its key and its value (a structured binding gives
// `auto& [key, node]`).
struct ConfigMember {
  std::string key;
  ConfigNode node;
};

// "a table", "an integer", "the string 'x'", "the number 1.5", "true": what
// a message says was found.
std::string found_text(const ConfigNode& node);
// The value as a configuration shows it, for listings: 8192, 'bfloat16',
// true, [0.9, 0.95]; cut to about `max_chars` with "..." (a table: "{...}").
std::string value_text(const ConfigNode& node, std::size_t max_chars = 72);

class ConfigTreeReader {
 public:
  // Keeps references to `root` and `sink`, which must outlive the reader.
  ConfigTreeReader(const ConfigNode& root, DiagnosticSink& sink);

  // The node at `path`, marked as read with everything under it; nullptr
  // when absent (or null).
  const ConfigNode* take(std::string_view path);
  // Marks the path read without using it (a key the importer knows means
  // nothing for a step, or has checked another way).
  void mark_read(std::string_view path);
  bool has(std::string_view path) const;

  // The value at `path` of the kind asked: nothing when absent, and nothing
  // with a diagnostic when of another kind. take_number accepts integers.
  std::optional<int64_t> take_int(std::string_view path);
  std::optional<double> take_number(std::string_view path);
  std::optional<bool> take_bool(std::string_view path);
  std::optional<std::string> take_string(std::string_view path);

  // Every scalar and array nobody took, with its dotted path, in file order.
  std::vector<std::pair<std::string, const ConfigNode*>> unread() const;

  DiagnosticSink& sink() { return sink_; }
  // A diagnostic at the node of `path` (or at the file when it is absent).
  void report(std::string_view path, const ConfigNode* node, std::string message);

 private:
  const ConfigNode* taken_of(std::string_view path, const char* expected,
                             std::initializer_list<ConfigNode::Kind> kinds);
  bool was_read(const std::string& path) const;

  const ConfigNode& root_;
  DiagnosticSink& sink_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace clustersim::sim
