// Tables tying an enum's values to the names a scenario uses for them
// ("FULL_SHARD", "ft_hsdp"), and the three lookups every section reader
// needs: the name of a value, the value of a name the schema has already
// restricted to the table (ConfigSchema one_of(names(table))), and the names.
// Thread safety: constexpr tables and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sim/check.h"

namespace clustersim::sim {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

template <class E, size_t N>
std::string_view name_of(const std::array<Named<E>, N>& table, E value) {
  for (const Named<E>& n : table) {
    if (n.value == value) return n.name;
  }
  return "?";
}

// Precondition: `name` is in the table (the schema has checked it).
template <class E, size_t N>
E value_of(const std::array<Named<E>, N>& table, const std::string& name) {
  for (const Named<E>& n : table) {
    if (n.name == name) return n.value;
  }
  CLUSTERSIM_CHECK(false, "'" + name + "' is not a declared choice");
  return table[0].value;
}

template <class E, size_t N>
std::vector<std::string> names(const std::array<Named<E>, N>& table) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const Named<E>& n : table) out.emplace_back(n.name);
  return out;
}

}  // namespace clustersim::sim
