#include "calibration/profile_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "config/config_schema.h"
#include "config/scenario_loader.h"
#include "sim/check.h"
#include "sim/sim_time.h"

namespace clustersim::calibration {

namespace {

using collectives::HardwareProfile;
using sim::ConfigValue;

constexpr size_t kColumns = 100;

std::string shortest(double value) {
  char buffer[32];
  const auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  CLUSTERSIM_CHECK(ec == std::errc(), "to_chars of a double fits 32 bytes");
  return std::string(buffer, ptr);
}

// A number as std::to_chars writes it at its shortest ("0.8222", "7789131160"), the exponent
// without '+' and leading zeros ("1.41e9", not "1.41e+09"): the same digits, so the same double.
std::string number_text(double value) {
  std::string text = shortest(value);
  const size_t e = text.find('e');
  if (e == std::string::npos) return text;
  std::string exponent = text.substr(e + 1);
  const bool negative = exponent.front() == '-';
  if (exponent.front() == '+' || negative) exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return text.substr(0, e + 1) + (negative ? "-" : "") + exponent;
}

// A duration in microseconds, the unit of every duration key of the profile
// ("6.6us", "0.6us", "0us"): whole nanoseconds need at most 3 decimals, so
// the text is exact.
std::string us_text(sim::SimTime duration) {
  const int64_t ns = duration.count_ns();
  const uint64_t magnitude =
      ns < 0 ? static_cast<uint64_t>(-(ns + 1)) + 1 : static_cast<uint64_t>(ns);
  std::string text = (ns < 0 ? "-" : "") + std::to_string(magnitude / 1000);
  if (const uint64_t fraction = magnitude % 1000; fraction != 0) {
    std::string digits = std::to_string(fraction);
    digits.insert(0, 3 - digits.size(), '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    text += "." + digits;
  }
  return text + "us";
}

// The struct holds microseconds as a double; the file (and the loader) whole
// nanoseconds.
sim::SimTime duration_of(double us, const char* field) {
  CLUSTERSIM_CHECK(std::isfinite(us), std::string("HardwareProfile.") + field + " is finite");
  return sim::SimTime::from_ns_rounded(us * 1e3);
}

// `peak_tflops` for `flops_per_s`: the loader multiplies it by 1e12, so among
// the doubles next to flops_per_s / 1e12 take one whose product is exactly
// flops_per_s (the shortest text; the first on a tie). Such a double exists
// for every loaded profile; for others (about half of all doubles are no
// double's product with 1e12) the quotient itself, one ulp off at most.
double tflops_of(double flops_per_s) {
  CLUSTERSIM_CHECK(std::isfinite(flops_per_s), "HardwareProfile.gpu.peak_flops_per_s is finite");
  const double quotient = flops_per_s / 1e12;
  double candidate = quotient;
  for (int i = 0; i < 4; ++i) candidate = std::nextafter(candidate, -HUGE_VAL);
  std::optional<double> best;
  size_t best_length = 0;
  for (int i = 0; i < 9; ++i, candidate = std::nextafter(candidate, HUGE_VAL)) {
    if (candidate * 1e12 != flops_per_s) continue;
    const size_t length = shortest(candidate).size();
    if (!best || length < best_length) {
      best = candidate;
      best_length = length;
    }
  }
  return best.value_or(quotient);
}

bool is_plain_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' ||
         c == '_' || c == '.' || c == ',' || c == '(' || c == ')' || c == '/' || c == '+' ||
         c == '-';
}

// A string scalar: plain when YAML surely reads it back as the same string
// (a conservative character set, no leading or trailing space or '-', not a
// null or boolean word), double-quoted with escapes otherwise.
std::string yaml_string(const std::string& s) {
  static const std::set<std::string, std::less<>> kSpecialWords = {
      "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE",
      "yes",  "Yes",  "YES",  "no",   "No",   "NO",   "on",    "On",    "ON",
      "off",  "Off",  "OFF",  "y",    "Y",    "n",    "N"};
  bool plain = !s.empty() && s.front() != ' ' && s.back() != ' ' && s.front() != '-' &&
               !kSpecialWords.contains(s);
  for (char c : s) plain = plain && is_plain_safe(c);
  if (plain) return s;
  std::string quoted = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        quoted += "\\\"";
        break;
      case '\\':
        quoted += "\\\\";
        break;
      case '\n':
        quoted += "\\n";
        break;
      case '\t':
        quoted += "\\t";
        break;
      case '\r':
        quoted += "\\r";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          static constexpr char kHex[] = "0123456789ABCDEF";
          quoted += "\\x";
          quoted += kHex[byte >> 4];
          quoted += kHex[byte & 0xf];
        } else {
          quoted += c;  // printable ASCII, or a UTF-8 byte
        }
    }
  }
  return quoted + "\"";
}

// `text` split at line breaks ('\n'; also \r\n and \r, which YAML would
// read as the end of the comment), each line wrapped at spaces to `width`
// characters (a word longer than that stays whole).
std::vector<std::string> comment_lines(std::string_view raw, size_t width) {
  std::string unified;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\r') {
      unified += raw[i];
    } else if (i + 1 >= raw.size() || raw[i + 1] != '\n') {
      unified += '\n';
    }
  }
  const std::string_view text = unified;
  std::vector<std::string> lines;
  size_t start = 0;
  while (true) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end == std::string_view::npos ? end : end - start);
    while (line.size() > width) {
      size_t cut = line.rfind(' ', width);
      if (cut == std::string_view::npos || line.find_first_not_of(' ') >= cut) {
        cut = line.find(' ', width);
        if (cut == std::string_view::npos) break;
      }
      lines.emplace_back(line.substr(0, cut));
      const size_t next = line.find_first_not_of(' ', cut);
      line = next == std::string_view::npos ? std::string_view() : line.substr(next);
    }
    lines.emplace_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return lines;
}

size_t indent_of(std::string_view path) {
  size_t dots = 0;
  for (char c : path) dots += c == '.' ? 1 : 0;
  return 2 * dots;
}

// One key of a group written on one line: `ring: {base: 6.6us, ...}`.
struct Field {
  const char* name;
  ConfigValue value;
};

// Writes keys and sections in the order it is called, with their comments,
// and checks at the end that every schema key was written and every comment
// placed.
class YamlWriter {
 public:
  explicit YamlWriter(const ProfileProvenance& provenance)
      : schema_(collectives::hardware_profile_schema()), provenance_(provenance) {}

  void header() {
    for (const std::string& line : provenance_.header_lines) write_comment(line, 0);
    if (!provenance_.header_lines.empty()) blank_line();
  }

  void blank_line() { out_ += '\n'; }

  void section(const std::string& path) {
    CLUSTERSIM_CHECK(schema_.find_section(path) != nullptr,
                     "profile section '" + path + "' is in the schema");
    comment_for(path);
    out_ += std::string(indent_of(path), ' ') + std::string(name_of(path)) + ":\n";
    written_.insert(path);
  }

  void key(const std::string& path, const ConfigValue& value) {
    comment_for(path);
    out_ += std::string(indent_of(path), ' ') + std::string(name_of(path)) + ": " +
            value_text(path, value) + "\n";
    written_.insert(path);
  }

  // An optional section the profile leaves out: nothing is written for it or
  // any of its keys, and the profile is still whole.
  void absent_section(const std::string& section) {
    CLUSTERSIM_CHECK(schema_.find_section(section) != nullptr,
                     "'" + section + "' is a section of the schema");
    written_.insert(section);
    for (const auto& [path, spec] : schema_.keys()) {
      if (path.starts_with(section + ".")) written_.insert(path);
    }
  }

  // An optional key (no default) the profile leaves out: nothing is written,
  // and the profile is still whole.
  void absent(const std::string& path) {
    const sim::KeySpec* spec = schema_.find_key(path);
    CLUSTERSIM_CHECK(schema_.find_section(path) != nullptr ||
                         (spec != nullptr && !spec->is_required && !spec->default_value),
                     "'" + path + "' is a section or an optional key without a default");
    written_.insert(path);
  }

  // The section `path` holding exactly `fields`: one flow-mapping line when
  // it fits and no field has a comment of its own, else a block.
  void group(const std::string& path, const std::vector<Field>& fields) {
    bool flow = true;
    std::string line = std::string(indent_of(path), ' ') + std::string(name_of(path)) + ": {";
    for (size_t i = 0; i < fields.size(); ++i) {
      const std::string field_path = path + "." + fields[i].name;
      flow = flow && !provenance_.key_comments.contains(field_path);
      line += (i == 0 ? "" : ", ") + std::string(fields[i].name) + ": " +
              value_text(field_path, fields[i].value);
    }
    line += "}";
    if (flow && line.size() <= kColumns) {
      CLUSTERSIM_CHECK(schema_.find_section(path) != nullptr,
                       "profile section '" + path + "' is in the schema");
      comment_for(path);
      out_ += line + "\n";
      written_.insert(path);
      for (const Field& field : fields) written_.insert(path + "." + field.name);
      return;
    }
    section(path);
    for (const Field& field : fields) key(path + "." + field.name, field.value);
  }

  std::string finish() && {
    for (const auto& [path, spec] : schema_.keys()) {
      // A written profile is whole: it extends nothing.
      if (path == sim::kExtendsKey) continue;
      CLUSTERSIM_CHECK(written_.contains(path),
                       "hardware_profile_yaml writes every schema key; it misses '" + path + "'");
    }
    for (const auto& [path, comment] : provenance_.key_comments) {
      CLUSTERSIM_CHECK(written_.contains(path),
                       "a key_comments path names a key or section of the hardware profile "
                       "schema; '" +
                           path + "' does not");
    }
    return std::move(out_);
  }

 private:
  static std::string_view name_of(std::string_view path) {
    const size_t dot = path.rfind('.');
    return dot == std::string_view::npos ? path : path.substr(dot + 1);
  }

  void write_comment(std::string_view text, size_t indent) {
    const size_t width = kColumns > indent + 2 ? kColumns - indent - 2 : 1;
    for (const std::string& line : comment_lines(text, width)) {
      out_ += std::string(indent, ' ') + (line.empty() ? "#" : "# " + line) + "\n";
    }
  }

  void comment_for(const std::string& path) {
    const auto it = provenance_.key_comments.find(path);
    if (it != provenance_.key_comments.end()) write_comment(it->second, indent_of(path));
  }

  std::string value_text(const std::string& path, const ConfigValue& value) const {
    const sim::KeySpec* spec = schema_.find_key(path);
    CLUSTERSIM_CHECK(spec != nullptr, "profile key '" + path + "' is in the schema");
    if (spec->type == sim::ValueType::kString) return yaml_string(std::get<std::string>(value));
    if (const double* number = std::get_if<double>(&value)) {
      CLUSTERSIM_CHECK(std::isfinite(*number), "the profile's value for '" + path +
                                                   "' is finite, found " + shortest(*number));
      if (spec->type == sim::ValueType::kFloat) return number_text(*number);
    }
    if (spec->type == sim::ValueType::kDuration && spec->unit == "us") {
      return us_text(std::get<sim::SimTime>(value));
    }
    return sim::format_value(*spec, value);
  }

  const sim::ConfigSchema schema_;
  const ProfileProvenance& provenance_;
  std::set<std::string, std::less<>> written_;
  std::string out_;
};

std::vector<Field> hops(const collectives::HopLatency& h) {
  return {{"base", duration_of(h.base_us, "protocols.*.base_us")},
          {"nvlink_hop", duration_of(h.nvlink_hop_us, "protocols.*.nvlink_hop_us")},
          {"network_hop", duration_of(h.network_hop_us, "protocols.*.network_hop_us")}};
}

std::vector<Field> gemm_curve(const collectives::EfficiencyCurveParams& c) {
  return {{"e_max", c.e_max}, {"x_half", c.x_half}, {"min_dim_half", c.dim_half}};
}

std::vector<Field> attention_curve(const collectives::EfficiencyCurveParams& c) {
  return {{"e_max", c.e_max},
          {"x_half", c.x_half},
          {"head_dim_half", c.dim_half},
          {"causal_x_half", c.causal_x_half}};
}

void write_collectives(YamlWriter& w, const HardwareProfile& p) {
  w.key("launch_overhead", duration_of(p.launch_overhead_us, "launch_overhead_us"));
  w.key("max_channels", int64_t{p.max_channels});
  w.blank_line();
  w.section("nvlink");
  w.key("nvlink.ring_efficiency", p.nvlink_ring_efficiency);
  w.section("network");
  w.key("network.efficiency", p.network_efficiency);
  w.section("tree");
  w.key("tree.efficiency", p.tree_efficiency);
  w.blank_line();
  w.section("nvls");
  w.key("nvls.supported", p.nvls_supported);
  w.key("nvls.latency", duration_of(p.nvls_latency_us, "nvls_latency_us"));
  w.key("nvls.busbw_efficiency", p.nvls_busbw_efficiency);
  w.key("nvls.full_bandwidth_size", p.nvls_full_bandwidth_bytes);
  w.blank_line();
  w.section("protocols");
  // The schema's names of collectives::Protocol, in kAllProtocols order.
  static constexpr const char* kProtocolKeys[] = {"ll", "ll128", "simple"};
  for (size_t i = 0; i < collectives::kAllProtocols.size(); ++i) {
    const collectives::ProtocolParams& pp = p.protocol(collectives::kAllProtocols[i]);
    const std::string sec = std::string("protocols.") + kProtocolKeys[i];
    w.section(sec);
    w.group(sec + ".ring", hops(pp.ring));
    w.group(sec + ".tree", hops(pp.tree));
    w.key(sec + ".efficiency", pp.efficiency);
    w.key(sec + ".max_busbw", pp.max_busbw_Bps);
    w.key(sec + ".full_bandwidth_size", pp.full_bandwidth_bytes);
  }
}

void write_gpu_and_host(YamlWriter& w, const HardwareProfile& p) {
  const collectives::GpuProfile& g = p.gpu;
  w.section("gpu");
  w.key("gpu.curves_fitted_to", g.curves_fitted_to);
  w.key("gpu.peak_tflops", tflops_of(g.peak_flops_per_s));
  if (g.peak_clock_mhz > 0) {
    w.key("gpu.peak_clock_mhz", g.peak_clock_mhz);
  } else {
    w.absent("gpu.peak_clock_mhz");
  }
  w.key("gpu.peak_fp8_tflops", tflops_of(g.peak_fp8_flops_per_s));
  w.key("gpu.fp8_gemm_efficiency", g.fp8_gemm_efficiency);
  w.key("gpu.block_scaled_mma", g.block_scaled_mma);
  w.key("gpu.mxfp8_gemm_efficiency", g.mxfp8_gemm_efficiency);
  w.key("gpu.peak_fp4_tflops", tflops_of(g.peak_fp4_flops_per_s));
  w.key("gpu.nvfp4_gemm_efficiency", g.nvfp4_gemm_efficiency);
  if (g.power_w > 0) {
    w.key("gpu.power", g.power_w);
  } else {
    w.absent("gpu.power");
  }
  w.key("gpu.memory", g.memory_bytes);
  w.key("gpu.hbm_bandwidth", g.hbm_Bps);
  w.key("gpu.mem_efficiency", g.mem_efficiency);
  const auto& by_class = g.mem_efficiency_by_class;
  const bool any_by_class = std::any_of(collectives::kMemEfficiencyClasses.begin(),
                                        collectives::kMemEfficiencyClasses.end(),
                                        [&](const auto& c) { return by_class.*c.field > 0; });
  if (any_by_class) {
    w.section("gpu.mem_efficiency_by_class");
  } else {
    w.absent("gpu.mem_efficiency_by_class");
  }
  for (const collectives::MemEfficiencyClassKey& c : collectives::kMemEfficiencyClasses) {
    const std::string path = "gpu.mem_efficiency_by_class." + std::string(c.name);
    const double value = by_class.*c.field;
    if (value > 0) {
      w.key(path, value);
    } else {
      w.absent(path);
    }
  }
  w.group("gpu.gemm", gemm_curve(g.gemm));
  w.group("gpu.attention_fwd", attention_curve(g.attention_fwd));
  w.group("gpu.attention_bwd", attention_curve(g.attention_bwd));
  for (const auto& [section, curve] :
       {std::pair{"gpu.cudnn_attention_fwd", &g.cudnn_attention_fwd},
        std::pair{"gpu.cudnn_attention_bwd", &g.cudnn_attention_bwd}}) {
    if (curve->has_value()) {
      w.group(section, attention_curve(**curve));
    } else {
      w.absent_section(section);
    }
  }
  w.key("gpu.comm_overlap_slowdown", g.comm_overlap_slowdown);
  w.key("gpu.sustained_clock", g.sustained_clock);
  w.key("gpu.speed_variation", g.speed_variation);
  w.key("gpu.segment_jitter", g.segment_jitter);
  w.blank_line();
  const collectives::HostProfile& h = p.host;
  w.section("host");
  w.key("host.kernel_launch", duration_of(h.kernel_launch_us, "host.kernel_launch_us"));
  w.key("host.graph_launch", duration_of(h.graph_launch_us, "host.graph_launch_us"));
  w.key("host.pcie_efficiency", h.pcie_efficiency);
  w.key("host.cpu_adam_params_per_s", h.cpu_adam_params_per_s);
  if (h.system_power_per_gpu_w > 0) {
    w.key("host.system_power", h.system_power_per_gpu_w);
  } else {
    w.absent("host.system_power");
  }
}

}  // namespace

std::string hardware_profile_yaml(const collectives::HardwareProfile& profile,
                                  const ProfileProvenance& provenance) {
  YamlWriter w(provenance);
  w.header();
  w.key("name", profile.name);
  w.key("description", provenance.description);
  if (profile.node.empty()) {
    w.absent("node");
  } else {
    w.key("node", profile.node);
  }
  w.blank_line();
  write_collectives(w, profile);
  w.blank_line();
  write_gpu_and_host(w, profile);
  return std::move(w).finish();
}

}  // namespace clustersim::calibration
