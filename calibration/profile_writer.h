// Writing a HardwareProfile back as a hardware profile YAML file
// (scenarios/hardware/*.yaml), for `clustersim calibrate` (issue 7): the
// fitted numbers go out as a complete profile, each with the comment that
// says where it came from.
//
// Contract of hardware_profile_yaml:
//  * Complete: every key of collectives::hardware_profile_schema() but
//    `extends` is written, defaults included (a profile loaded from one that
//    extends another goes out merged, extending nothing), in the section
//    order of the example profiles (identity, launch_overhead, max_channels,
//    nvlink, network, tree, nvls, protocols.{ll,ll128,simple}, gpu, host),
//    with values in the schema's unit syntax: durations in us ("0.6us"),
//    sizes and bandwidths as sim::format_value writes them ("384KiB",
//    "141GB/s"). Hop latencies and efficiency curves are flow mappings
//    (`ring: {base: 6.6us, ...}`) when that line fits 100 columns and none of
//    their keys has a comment, block mappings otherwise.
//  * Round trip: collectives::load_hardware_profile of the text gives back a
//    profile equal to `profile` in every field but source_file, exactly:
//    doubles are written in their shortest round-tripping form, sizes and
//    bandwidths exactly (config/units.h). Two exceptions, because the struct
//    holds a value that the file cannot say: durations (struct microseconds,
//    double) are written rounded to the nanosecond, the loader's resolution,
//    so they come back exactly when they are whole nanoseconds (every loaded
//    profile's are); gpu.peak_flops_per_s is written as `peak_tflops`, which
//    the loader multiplies by 1e12, so it comes back exactly when it is some
//    double times 1e12 (every loaded profile's is), otherwise within one ulp.
//    gpu.gemm.causal_x_half is not written at all: the schema has no such key
//    (a GEMM has no causal mask), so it loads back as 0.
//  * `description` has no field in the struct: it comes from
//    ProfileProvenance::description.
//  * Comments: the provenance header lines first, as "# " lines; then each
//    key_comments entry above its key or section, at that key's indent,
//    wrapped at 100 columns ('\n' separates lines; an empty line is a bare
//    "#"). A key without an entry gets no comment.
//  * Deterministic: the same arguments give the same bytes.
//
// Errors: a key_comments path that is neither a key nor a section of the
// schema, and a non-finite number in the profile, are bugs of the caller (the
// calibration code builds both): sim::InvariantError naming the path.
// Thread safety: a pure function.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hardware/hardware_profile.h"

namespace clustersim::calibration {

// Where a written profile came from, as comments in the file.
struct ProfileProvenance {
  // Comment lines at the top of the file: what made the profile (tool, date,
  // inputs, fit summaries). Written without the leading "# ".
  std::vector<std::string> header_lines;
  // YAML key path ("gpu.gemm", "nvlink.ring_efficiency",
  // "protocols.ll.max_busbw", or a section such as "protocols.ll") -> comment
  // written above that key; '\n' separates lines.
  std::map<std::string, std::string> key_comments;
  // The profile's `description` key (HardwareProfile has no field for it).
  std::string description;
};

// The profile as the text of a complete, commented profile file (see the
// contract above).
std::string hardware_profile_yaml(const collectives::HardwareProfile& profile,
                                  const ProfileProvenance& provenance);

}  // namespace clustersim::calibration
