#include "hardware/shipped_profiles.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace clustersim::collectives {

namespace {

bool has_yaml_suffix(std::string_view value) {
  return value.ends_with(".yaml") || value.ends_with(".yml");
}

}  // namespace

std::string shipped_profiles_dir() { return CLUSTERSIM_PROFILES_DIR; }

std::vector<std::string> yaml_stems_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path& file = entry.path();
    if (file.extension() == ".yaml" && entry.is_regular_file(ec)) {
      names.push_back(file.stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_named_file(const std::string& referrer, const std::string& value,
                               const std::string& dir) {
  if (is_bare_profile_name(value)) {
    return (std::filesystem::path(dir) / (value + ".yaml")).string();
  }
  const std::filesystem::path file(value);
  if (file.is_absolute()) return file.lexically_normal().string();
  return (std::filesystem::path(referrer).parent_path() / file).lexically_normal().string();
}

std::vector<std::string> shipped_profile_names() { return yaml_stems_in(shipped_profiles_dir()); }

bool is_bare_profile_name(std::string_view value) {
  return !value.empty() && value.find('/') == std::string_view::npos && !has_yaml_suffix(value);
}

std::string shipped_profiles_phrase() {
  const std::vector<std::string> names = shipped_profile_names();
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  if (list.empty()) list = "none found in " + shipped_profiles_dir();
  return "one of the shipped profiles by its bare name (" + list +
         "; e.g. 'hardware: h100') or the path of a profile file, relative to the scenario's "
         "folder unless absolute";
}

}  // namespace clustersim::collectives
