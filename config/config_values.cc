#include "config/config_values.h"

#include "sim/check.h"

namespace clustersim::sim {

void ConfigValues::set(std::string path, Entry entry) {
  entries_.insert_or_assign(std::move(path), std::move(entry));
}

const ConfigValues::Entry& ConfigValues::entry(std::string_view path) const {
  const auto it = entries_.find(path);
  CLUSTERSIM_CHECK(it != entries_.end(), "no value for key '" + std::string(path) + "'");
  return it->second;
}

template <class T>
const T& ConfigValues::get(std::string_view path) const {
  const Entry& e = entry(path);
  const T* value = std::get_if<T>(&e.value);
  CLUSTERSIM_CHECK(value != nullptr,
                   "key '" + std::string(path) + "' read with a type it was not declared with");
  return *value;
}

template const int64_t& ConfigValues::get<int64_t>(std::string_view) const;
template const double& ConfigValues::get<double>(std::string_view) const;
template const bool& ConfigValues::get<bool>(std::string_view) const;
template const std::string& ConfigValues::get<std::string>(std::string_view) const;
template const SimTime& ConfigValues::get<SimTime>(std::string_view) const;

}  // namespace clustersim::sim
