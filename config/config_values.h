// ConfigValues: the validated values of one scenario, each with where it
// came from (file:line:col, a --set override, or the schema's default).
//
// Layers read their section from here into plain structs, and use where()
// to point an error that involves several keys (e.g. group sizes that do
// not multiply to the world size) at the right line.
// Getters check the stored type against the request: asking for a key the
// schema does not declare, or with the wrong type, is a bug (InvariantError).
// Thread safety: read-only after loading; safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "sim/sim_time.h"

namespace clustersim::sim {

class ConfigValues {
 public:
  struct Entry {
    ConfigValue value;
    SourceLocation where;
    bool is_default = false;
  };

  void set(std::string path, Entry entry);

  // False for an optional key without a default that the scenario omits.
  bool has(std::string_view path) const { return entries_.find(path) != entries_.end(); }
  const Entry& entry(std::string_view path) const;
  const SourceLocation& where(std::string_view path) const { return entry(path).where; }

  int64_t get_int(std::string_view path) const { return get<int64_t>(path); }
  double get_float(std::string_view path) const { return get<double>(path); }
  bool get_bool(std::string_view path) const { return get<bool>(path); }
  const std::string& get_string(std::string_view path) const { return get<std::string>(path); }
  int64_t get_bytes(std::string_view path) const { return get<int64_t>(path); }
  double get_bandwidth_Bps(std::string_view path) const { return get<double>(path); }
  SimTime get_duration(std::string_view path) const { return get<SimTime>(path); }

  // Sorted by path.
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

  // The file the values were read from ("" when built in memory), where a
  // check reports a key the file lacks and that has no default.
  const std::string& file() const { return file_; }
  void set_file(std::string file) { file_ = std::move(file); }

 private:
  template <class T>
  const T& get(std::string_view path) const;

  std::map<std::string, Entry, std::less<>> entries_;
  std::string file_;
};

}  // namespace clustersim::sim
