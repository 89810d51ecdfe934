// The hardware profiles this build ships (scenarios/hardware/*.yaml) and how a
// scenario's `hardware` value names one.
//
// A bare name (no '/' and no .yaml/.yml suffix: `h100`, `h100_96gb_500w`)
// means the shipped profile of that name, wherever the scenario is, as
// Python's hardware_profile("h100") does. Anything else is a path, relative
// to the folder of the file that names it unless absolute.
// Thread safety: pure functions; the folder is fixed when the build is
// configured (CLUSTERSIM_PROFILES_DIR).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace clustersim::collectives {

// The folder holding the shipped profiles.
std::string shipped_profiles_dir();

// Their bare names, sorted ("a100", "h100", ...).
std::vector<std::string> shipped_profile_names();

// True when `value` names a profile by its bare name rather than by a path.
bool is_bare_profile_name(std::string_view value);

// What the shipped profiles and the shipped software stacks share: the stems
// of the .yaml files of `dir`, sorted; and the file a `value` in the file at
// `referrer` names: a bare name (is_bare_profile_name) is `dir`/NAME.yaml,
// an absolute path itself, any other path relative to the referrer's folder.
std::vector<std::string> yaml_stems_in(const std::string& dir);
std::string resolve_named_file(const std::string& referrer, const std::string& value,
                               const std::string& dir);

// "one of the shipped profiles a100, h100, ... (by bare name, e.g.
// 'hardware: h100') or the path of a profile file": the end of an error for
// a profile that is not found.
std::string shipped_profiles_phrase();

}  // namespace clustersim::collectives
