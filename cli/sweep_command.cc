#include "cli/sweep_command.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/campaign_inputs.h"
#include "cli/commands.h"
#include "cli/mpi_context.h"
#include "cli/scenario_schema.h"
#include "cli/step_config.h"
#include "cli/sweep_grid.h"
#include "cli/table_text.h"
#include "hardware/hardware_profile.h"
#include "config/atomic_file.h"
#include "sim/check.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "config/suggest.h"
#include "config/text_fields.h"
#include "topology/cluster.h"
#include "topology/cluster_config.h"
#include "schedules/step_simulator.h"

namespace clustersim::cli {

namespace {

const char* const kShard = "workload.parallelism.shard_group_size";
const char* const kReplica = "workload.parallelism.replica_group_size";
const char* const kTp = "workload.parallelism.tp";
const char* const kPartialMagic = "# clustersim sweep partial v1";

const std::vector<std::string> kFigureColumns = {
    "status",         "reason", "step_time_s",       "tokens_per_s_per_gpu",
    "tflops_per_gpu", "mfu",    "peak_memory_bytes", "fits_in_memory",
    "exposed_comm_s"};

// Figures are columns 2.. of kFigureColumns, after the swept keys.
constexpr size_t kStatus = 0;
constexpr size_t kReason = 1;
constexpr size_t kStepTime = 2;
constexpr size_t kTokens = 3;
constexpr size_t kMfu = 5;
constexpr size_t kPeak = 6;
constexpr size_t kFits = 7;
// With --campaign, after kFigureColumns.
const std::vector<std::string> kCampaignColumns = {"ettr_mean", "time_to_train_days"};
constexpr size_t kEttr = 9;
constexpr size_t kTimeToTrain = 10;

std::string number_text(double x) {
  if (x == 0) return "0";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x);
  return ec == std::errc() ? std::string(buffer, end) : "nan";
}

std::string csv_field(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Fields of one CSV line (double-quoted fields may hold commas and "").
std::vector<std::string> csv_split(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) text += separator;
    text += parts[i];
  }
  return text;
}

// The errors of a ConfigError without their file: "key: message; ...".
std::string reason_of(const sim::ConfigError& e) {
  std::vector<std::string> parts;
  for (const sim::Diagnostic& d : e.diagnostics()) {
    parts.push_back(d.key_path.empty() ? d.message : d.key_path + ": " + d.message);
  }
  return join(parts, "; ");
}

// The axes: the scenario's, with --grid replacing or adding.
std::vector<SweepAxis> read_axes(const sim::ConfigValues& values, const ParsedCommand& parsed,
                                 const sim::ConfigSchema& schema) {
  std::vector<SweepAxis> axes;
  if (values.has("sweep.axes")) {
    // Validated by the schema already; parsing again cannot fail.
    axes = *parse_sweep_axes(values.get_string("sweep.axes")).value;
    sim::DiagnosticSink sink;
    for (const SweepAxis& axis : axes) {
      if (schema.find_key(axis.key) == nullptr || axis.key == "sweep.axes") {
        sink.add(values.where("sweep.axes"), "sweep.axes",
                 "expected scenario keys to sweep, found '" + axis.key + "', which is not one");
      }
    }
    sink.throw_if_any();
  }
  std::vector<std::string> flag_keys;
  for (const std::string& text : parsed.values("--grid")) {
    sim::Parsed<SweepAxis> axis = parse_sweep_axis(text);
    if (!axis) throw UsageError("option '--grid' expects KEY=V1,V2,...: " + axis.error);
    if (schema.find_key(axis->key) == nullptr || axis->key == "sweep.axes") {
      std::vector<std::string> names;
      for (const auto& [path, spec] : schema.keys()) names.push_back(path);
      std::string message =
          "option '--grid' expects a scenario key to sweep, found '" + axis->key + "'";
      if (auto guess = sim::suggest(axis->key, names)) {
        message += " (did you mean '" + *guess + "'?)";
      }
      throw UsageError(message);
    }
    if (std::find(flag_keys.begin(), flag_keys.end(), axis->key) != flag_keys.end()) {
      throw UsageError("option '--grid' expects each key once, found " + axis->key + " twice");
    }
    flag_keys.push_back(axis->key);
    auto same = std::find_if(axes.begin(), axes.end(),
                             [&](const SweepAxis& a) { return a.key == axis->key; });
    if (same != axes.end()) {
      *same = std::move(*axis.value);
    } else {
      axes.push_back(std::move(*axis.value));
    }
  }
  if (axes.empty()) {
    throw UsageError(
        "expected axes to sweep: '--grid KEY=V1,V2,...' or the scenario's sweep.axes, found "
        "neither");
  }
  for (const std::string& set : parsed.values("--set")) {
    const std::string key = set.substr(0, set.find('='));
    for (const SweepAxis& axis : axes) {
      if (axis.key == key) {
        throw UsageError("key '" + key + "' is both swept and set with '--set " + set +
                         "'; expected one or the other");
      }
    }
  }
  return axes;
}

// What each point needs to be simulated, or why it cannot be.
struct Prepared {
  std::string reason;  // non-empty: skipped
  sim::ConfigValues values;
  const topology::Cluster* cluster = nullptr;
  const collectives::HardwareProfile* profile = nullptr;
  workloads::StepConfig config;
};

class PointLoader {
 public:
  PointLoader(std::string path, std::string text, std::vector<std::string> sets,
              std::string dropped)
      : path_(std::move(path)),
        text_(std::move(text)),
        sets_(std::move(sets)),
        dropped_(std::move(dropped)) {}

  // The point's values (throws sim::ConfigError).
  sim::ConfigValues values(const std::vector<std::string>& overrides) const {
    std::vector<std::string> all = sets_;
    all.insert(all.end(), overrides.begin(), overrides.end());
    sim::ConfigValues loaded = sim::load_scenario_text(text_, path_, schema_, all);
    if (dropped_.empty() || !loaded.has(dropped_)) return loaded;
    sim::ConfigValues kept;
    for (const auto& [key, entry] : loaded.entries()) {
      if (key != dropped_) kept.set(key, entry);
    }
    return kept;
  }

  DpSize dp_size(const std::vector<std::string>& overrides) const {
    try {
      const sim::ConfigValues v = values(overrides);
      const topology::ClusterSpec spec = topology::read_cluster_spec(v);
      const int64_t gpus = spec.nodes * spec.node.gpus_per_node;
      const int64_t tp = v.get_int(kTp);
      if (tp <= 0 || gpus % tp != 0) {
        return {0, std::string(kTp) + ": expected a divisor of the world size " +
                       std::to_string(gpus) + ", found " + std::to_string(tp)};
      }
      return {gpus / tp, ""};
    } catch (const sim::ConfigError& e) {
      return {0, reason_of(e)};
    }
  }

  Prepared prepare(const std::vector<std::string>& overrides) {
    Prepared p;
    try {
      p.values = values(overrides);
      const sim::ConfigValues& v = p.values;
      const topology::ClusterSpec spec = topology::read_cluster_spec(v);
      std::string cluster_key;
      for (const auto& [key, entry] : v.entries()) {
        if (key.starts_with("cluster.")) {
          cluster_key += key + "=" + sim::format_value(*schema_.find_key(key), entry.value) + "\n";
        }
      }
      std::unique_ptr<topology::Cluster>& cluster = clusters_[cluster_key];
      if (!cluster) {
        cluster = std::make_unique<topology::Cluster>(topology::build_cluster(spec));
      }
      p.cluster = cluster.get();
      if (!v.has("hardware") || v.get_string("hardware").empty()) {
        p.reason = "hardware: missing; expected the path of a hardware profile";
        return p;
      }
      const std::string profile_path =
          collectives::resolve_hardware_path(path_, v.get_string("hardware"));
      if (!std::filesystem::is_regular_file(profile_path)) {
        p.reason =
            "hardware: expected a hardware profile file, found no file at '" + profile_path + "'";
        return p;
      }
      std::unique_ptr<collectives::HardwareProfile>& profile = profiles_[profile_path];
      if (!profile) {
        profile = std::make_unique<collectives::HardwareProfile>(
            collectives::load_hardware_profile(profile_path));
      }
      p.profile = profile.get();
      p.config = step_config_from_scenario(v, *p.cluster, *p.profile);
    } catch (const sim::ConfigError& e) {
      p.reason = reason_of(e);
    }
    return p;
  }

 private:
  std::string path_;
  std::string text_;
  std::vector<std::string> sets_;
  std::string dropped_;
  sim::ConfigSchema schema_ = build_scenario_schema();
  std::map<std::string, std::unique_ptr<topology::Cluster>> clusters_;
  std::map<std::string, std::unique_ptr<collectives::HardwareProfile>> profiles_;
};

std::string row_of(const SweepPoint& point, const std::vector<std::string>& figures) {
  std::vector<std::string> fields;
  for (const std::string& v : point.values) fields.push_back(csv_field(v));
  for (const std::string& f : figures) fields.push_back(csv_field(f));
  return join(fields, ",");
}

std::string skipped_row(const SweepPoint& point, const std::string& reason, bool campaign) {
  std::vector<std::string> figures(kFigureColumns.size() + (campaign ? kCampaignColumns.size() : 0),
                                   "");
  figures[kStatus] = "skipped";
  figures[kReason] = reason;
  return row_of(point, figures);
}

// The campaign's figures of a point: ETTR and time to train (empty without
// campaign.tokens).
struct CampaignFigures {
  double ettr_mean = 0;
  std::optional<double> time_to_train_days;
};

std::string simulated_row(const SweepPoint& point, const workloads::StepResult& r,
                          const std::optional<CampaignFigures>& campaign) {
  std::vector<std::string> figures = {r.fits_in_memory ? "ok" : "out_of_memory",
                                      "",
                                      number_text(r.step_time_s),
                                      number_text(r.tokens_per_s_per_gpu),
                                      number_text(r.tflops_per_gpu),
                                      number_text(r.mfu),
                                      std::to_string(r.memory.total()),
                                      r.fits_in_memory ? "true" : "false",
                                      number_text(r.breakdown.exposed_comm_s())};
  if (campaign) {
    figures.push_back(number_text(campaign->ettr_mean));
    figures.push_back(campaign->time_to_train_days ? number_text(*campaign->time_to_train_days)
                                                   : "");
  }
  return row_of(point, figures);
}

// Rows of FILE.partial that belong to this sweep, by point index.
std::map<size_t, std::string> read_partial(const std::string& path, const std::string& first_line,
                                           const std::vector<SweepPoint>& points, size_t columns) {
  std::map<size_t, std::string> rows;
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) return rows;
  const std::string text = sim::read_file_text(path);
  sim::DiagnosticSink sink;
  size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // cut by an interruption: recompute it
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line_number == 1) {
      if (line != first_line) {
        sink.add(sim::SourceLocation{path, 1, 1}, "",
                 "expected the partial results of this sweep ('" + first_line + "'), found '" +
                     line + "'; remove it or run without --resume");
        sink.throw_if_any();
      }
      continue;
    }
    const size_t comma = line.find(',');
    const int64_t index =
        comma == std::string::npos
            ? -1
            : sim::parse_number<int64_t>(std::string_view(line).substr(0, comma)).value_or(-1);
    const std::string row = comma == std::string::npos ? "" : line.substr(comma + 1);
    const std::vector<std::string> fields = csv_split(row);
    if (index < 0 || static_cast<size_t>(index) >= points.size() || fields.size() != columns) {
      sink.add(sim::SourceLocation{path, line_number, 1}, "",
               "expected INDEX,ROW with an index below " + std::to_string(points.size()) + " and " +
                   std::to_string(columns) + " columns, found '" + line + "'");
      continue;
    }
    const SweepPoint& point = points[static_cast<size_t>(index)];
    for (size_t a = 0; a < point.values.size(); ++a) {
      if (fields[a] != point.values[a]) {
        sink.add(sim::SourceLocation{path, line_number, 1}, "",
                 "expected point " + std::to_string(index) + " of this sweep (" +
                     join(point.values, ",") + "), found '" + row +
                     "'; the grid changed: remove the file or run without --resume");
        break;
      }
    }
    rows[static_cast<size_t>(index)] = row;
  }
  sink.throw_if_any();
  return rows;
}

class Progress {
 public:
  Progress(std::ostream& err, size_t total, bool enabled)
      : err_(err), total_(total), enabled_(enabled), started_(std::chrono::steady_clock::now()) {}
  void done_one() {
    ++done_;
    if (!enabled_) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const double rate = s > 0 ? static_cast<double>(done_) / s : 0;
    const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
    err_ << "\rsweep: " << done_ << "/" << total_ << " points, " << fixed(rate, 2)
         << " points/s, ETA " << fixed(eta, 0) << " s   " << std::flush;
    if (done_ == total_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point started_;
  size_t done_ = 0;
};

std::string ranked_table(const std::vector<SweepAxis>& axes, const std::vector<SweepPoint>& points,
                         const std::vector<std::string>& rows, size_t top, bool campaign) {
  struct Ranked {
    size_t index;
    std::vector<std::string> fields;
    bool fits;
    double score;
  };
  const size_t k = axes.size();
  std::vector<Ranked> ranked;
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> fields = csv_split(rows[i]);
    if (fields[k + kStatus] == "skipped") continue;
    double score = sim::parse_number<double>(fields[k + kTokens]).value_or(0);
    if (campaign) score *= sim::parse_number<double>(fields[k + kEttr]).value_or(0);
    const bool fits = fields[k + kFits] == "true";
    ranked.push_back(Ranked{i, std::move(fields), fits, score});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.fits != b.fits) return a.fits;
    return a.score > b.score;
  });
  if (ranked.size() > top) ranked.resize(top);
  if (ranked.empty()) return "no point could be simulated\n";

  std::vector<std::string> headings = {"#"};
  for (const SweepAxis& axis : axes)
    headings.emplace_back(axis.key.substr(axis.key.rfind('.') + 1));
  for (const char* h : {"step s", "tokens/s/GPU", "MFU", "peak GiB", "fits"}) headings.push_back(h);
  if (campaign) {
    for (const char* h : {"ETTR", "x ETTR", "train days"}) headings.push_back(h);
  }
  std::vector<std::vector<std::string>> cells;
  for (size_t r = 0; r < ranked.size(); ++r) {
    const std::vector<std::string>& f = ranked[r].fields;
    std::vector<std::string> line = {std::to_string(r + 1)};
    for (size_t a = 0; a < k; ++a) line.push_back(f[a]);
    const auto num = [](const std::string& t) { return sim::parse_number<double>(t).value_or(0); };
    line.push_back(fixed(num(f[k + kStepTime]), 4));
    line.push_back(fixed(num(f[k + kTokens]), 1));
    line.push_back(fixed(100 * num(f[k + kMfu]), 1) + "%");
    line.push_back(fixed(num(f[k + kPeak]) / (1024.0 * 1024.0 * 1024.0), 2));
    line.push_back(ranked[r].fits ? "yes" : "no");
    if (campaign) {
      line.push_back(fixed(100 * num(f[k + kEttr]), 2) + "%");
      line.push_back(fixed(ranked[r].score, 1));
      line.push_back(f[k + kTimeToTrain].empty() ? "-" : fixed(num(f[k + kTimeToTrain]), 2));
    }
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(headings.size());
  for (size_t c = 0; c < headings.size(); ++c) {
    width[c] = headings[c].size();
    for (const auto& line : cells) width[c] = std::max(width[c], line[c].size());
  }
  const auto format = [&width](const std::vector<std::string>& line) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) text += pad(line[c], width[c] + (c == 0 ? 0 : 2));
    return text + "\n";
  };
  std::string text = format(headings);
  for (const auto& line : cells) text += format(line);
  return text;
}

}  // namespace

CommandSpec sweep_command_spec() {
  return {
      "sweep",
      "Simulate the step at every point of a grid of scenario settings and rank them.",
      {"SCENARIO"},
      {{"--grid", "KEY=V1,V2,...", true,
        "sweep a key: values, A..B:xF, A..B:+S or 'divisors' (replaces sweep.axes' axis)"},
       {"--set", "KEY=VALUE", true, "override a scenario key at every point"},
       {"-o", "FILE", false, "write one CSV row per point, in grid order (atomically)"},
       {"--resume", "", false, "continue from FILE.partial, keeping its finished points"},
       {"--threads", "N", false, "points in parallel (default: every core; same results)"},
       {"--top", "N", false, "rows of the ranked table (default 10)"},
       {"--campaign", "", false,
        "also simulate the campaign under failures at each point (ETTR, time to train)"},
       {"--trials", "N", false, "campaign trials per point (default 20, or --set campaign.trials)"},
       {"--no-wall-time", "", false, "leave out the last line (wall time)"}},
      "Points that fail validation are skipped with the reason; points that do not fit in\n"
      "GPU memory are simulated and marked. CSV columns: the swept keys, status (ok |\n"
      "skipped | out_of_memory), reason, step_time_s, tokens_per_s_per_gpu,\n"
      "tflops_per_gpu, mfu, peak_memory_bytes, fits_in_memory, exposed_comm_s; with\n"
      "--campaign also ettr_mean, time_to_train_days (with campaign.tokens).\n"
      "The ranking: tokens/s per GPU (x ETTR with --campaign), fitting points first."};
}

int run_sweep_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  // Under mpirun every rank expands the same grid, takes every size-th point
  // to simulate, and sends its rows to rank 0, which alone keeps FILE.partial,
  // writes the CSV and prints: the same bytes as one process.
  const MpiContext mpi;
  const bool root = mpi.rank() == 0;
  const std::string path = parsed.positionals[0];
  const int threads =
      parsed.positive_int_or("--threads", omp_get_max_threads(), 1024, "a number of threads");
  const size_t top =
      static_cast<size_t>(parsed.positive_int_or("--top", 10, 1000000, "a number of rows"));
  const std::string output = parsed.value_or("-o", "");
  if (parsed.has("--resume") && output.empty()) {
    throw UsageError("option '--resume' needs '-o FILE' (the sweep whose FILE.partial to read)");
  }
  const std::vector<std::string> sets = parsed.values("--set");
  const bool campaign = parsed.has("--campaign");
  if (parsed.has("--trials") && !campaign) {
    throw UsageError("option '--trials' needs '--campaign' (the campaign to run at each point)");
  }
  const bool trials_set = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
    return s.starts_with("campaign.trials=");
  });
  const int trials =
      parsed.positive_int_or("--trials", 20, 10000000, "a number of campaign trials");

  const sim::ConfigSchema schema = build_scenario_schema();
  const std::string text = sim::read_file_text(path);
  const sim::ConfigValues base = sim::load_scenario_text(text, path, schema, sets);
  const std::vector<SweepAxis> axes = read_axes(base, parsed, schema);

  // HYBRID_SHARD: one group size swept, the other derived.
  const auto swept = [&axes](const char* key) {
    return std::any_of(axes.begin(), axes.end(),
                       [key](const SweepAxis& a) { return a.key == key; });
  };
  const auto is_set = [&sets](const char* key) {
    return std::any_of(sets.begin(), sets.end(), [key](const std::string& s) {
      return s.starts_with(std::string(key) + "=");
    });
  };
  std::string dropped;
  if (swept(kShard) && !swept(kReplica) && !is_set(kReplica)) dropped = kReplica;
  if (swept(kReplica) && !swept(kShard) && !is_set(kShard)) dropped = kShard;

  PointLoader loader(path, text, sets, dropped);
  const std::vector<SweepPoint> points = expand_sweep_grid(
      axes, [&loader](const std::vector<std::string>& o) { return loader.dp_size(o); });

  std::vector<std::string> header;
  for (const SweepAxis& axis : axes) header.push_back(axis.key);
  header.insert(header.end(), kFigureColumns.begin(), kFigureColumns.end());
  if (campaign) header.insert(header.end(), kCampaignColumns.begin(), kCampaignColumns.end());
  const std::string header_line = join(header, ",");
  const std::string partial_first =
      std::string(kPartialMagic) + "; points " + std::to_string(points.size()) + "; " + header_line;

  std::vector<std::string> rows(points.size());
  std::vector<bool> done(points.size(), false);
  const std::string partial_path = output.empty() ? "" : output + ".partial";
  size_t resumed = 0;
  if (parsed.has("--resume")) {
    std::string done_list;
    if (root) {
      for (auto& [index, row] : read_partial(partial_path, partial_first, points, header.size())) {
        rows[index] = row;
        done[index] = true;
        ++resumed;
        done_list += std::to_string(index) + "\n";
      }
    }
    done_list = mpi.broadcast(done_list);
    for (const auto& line : sim::split_lines(done_list)) {
      if (const auto index = sim::parse_number<int64_t>(line.text)) {
        done[static_cast<size_t>(*index)] = true;
      }
    }
  }

  // Prepare every point not done (serial: loading and validation are cheap,
  // and clusters are shared).
  std::vector<Prepared> prepared(points.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i) {
    if (done[i]) continue;
    if (!points[i].invalid_reason.empty()) {
      rows[i] = skipped_row(points[i], points[i].invalid_reason, campaign);
      continue;
    }
    prepared[i] = loader.prepare(point_overrides(axes, points[i]));
    if (!prepared[i].reason.empty()) {
      rows[i] = skipped_row(points[i], prepared[i].reason, campaign);
      continue;
    }
    todo.push_back(i);
  }

  std::FILE* partial = nullptr;
  if (!partial_path.empty() && root) {
    std::string kept = partial_first + "\n";
    for (size_t i = 0; i < points.size(); ++i) {
      if (done[i]) kept += std::to_string(i) + "," + rows[i] + "\n";
    }
    sim::write_file_atomically(partial_path, kept);
    partial = std::fopen(partial_path.c_str(), "a");
    if (partial == nullptr) {
      throw sim::OutputError("cannot append to '" + partial_path + "'");
    }
  }

  std::vector<size_t> mine;
  for (size_t t = 0; t < todo.size(); ++t) {
    if (static_cast<int>(t % static_cast<size_t>(mpi.size())) == mpi.rank()) {
      mine.push_back(todo[t]);
    }
  }
  Progress progress(err, mine.size(), root && isatty(STDERR_FILENO) == 1);
  std::mutex lock;
  std::exception_ptr failure;
  const int64_t n = static_cast<int64_t>(mine.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t t = 0; t < n; ++t) {
    const size_t i = mine[static_cast<size_t>(t)];
    try {
      const Prepared& p = prepared[i];
      const workloads::StepResult r = workloads::simulate_step(*p.cluster, *p.profile, p.config);
      std::string row;
      if (!campaign) {
        row = simulated_row(points[i], r, std::nullopt);
      } else {
        // The campaign of the point's own step; its trials run on this
        // thread (the points are the parallel work).
        try {
          CampaignInputs in = read_campaign_inputs(
              path, p.values,
              [&p]() {
                return StepPlatform{*p.cluster, *p.profile};
              },
              &r);
          if (parsed.has("--trials") || !trials_set) in.spec.trials = trials;
          const failures::CampaignResult c =
              failures::run_campaign(in.model, in.policy, in.spec, 1);
          CampaignFigures figures{c.ettr_mean, std::nullopt};
          if (in.spec.tokens > 0) figures.time_to_train_days = c.time_to_train_days;
          row = simulated_row(points[i], r, figures);
        } catch (const sim::ConfigError& e) {
          row = skipped_row(points[i], "campaign: " + reason_of(e), true);
        }
      }
      const std::lock_guard<std::mutex> guard(lock);
      if (partial != nullptr) {
        const std::string line = std::to_string(i) + "," + row + "\n";
        std::fputs(line.c_str(), partial);
        std::fflush(partial);
      }
      rows[i] = std::move(row);
      progress.done_one();
    } catch (...) {
      const std::lock_guard<std::mutex> guard(lock);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure && mpi.active()) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      err << "clustersim sweep: error on MPI rank " << mpi.rank() << ": " << e.what() << "\n";
    }
    mpi.abort(kExitError);
  }
  if (!failure) {
    // Rows simulated by the other ranks (none without MPI), kept for
    // --resume too.
    std::string theirs;
    for (const size_t i : mine) theirs += std::to_string(i) + "," + rows[i] + "\n";
    const std::vector<std::string> all = mpi.gather(theirs);
    for (size_t r = 1; r < all.size(); ++r) {
      for (const auto& line : sim::split_lines(all[r])) {
        const size_t comma = line.text.find(',');
        if (comma == std::string_view::npos) continue;
        const auto index = sim::parse_number<int64_t>(line.text.substr(0, comma));
        if (!index) continue;
        rows[static_cast<size_t>(*index)] = std::string(line.text.substr(comma + 1));
        if (partial != nullptr) std::fputs((std::string(line.text) + "\n").c_str(), partial);
      }
    }
    if (partial != nullptr) std::fflush(partial);
  }
  if (partial != nullptr) std::fclose(partial);
  if (failure) std::rethrow_exception(failure);
  if (!root) return kExitOk;  // rank 0 writes and prints

  if (!output.empty()) {
    std::string csv = header_line + "\n";
    for (const std::string& row : rows) csv += row + "\n";
    sim::write_file_atomically(output, csv);
    std::error_code ignored;
    std::filesystem::remove(partial_path, ignored);
  }

  size_t ok = 0, oom = 0, skipped = 0;
  std::string skipped_text;
  const size_t k = axes.size();
  for (size_t i = 0; i < points.size(); ++i) {
    const std::vector<std::string> fields = csv_split(rows[i]);
    const std::string& status = fields[k + kStatus];
    if (status == "ok") ++ok;
    if (status == "out_of_memory") ++oom;
    if (status == "skipped") {
      if (++skipped <= 10) {
        skipped_text +=
            "  " + join(point_overrides(axes, points[i]), " ") + ": " + fields[k + kReason] + "\n";
      }
    }
  }
  std::string report = "# clustersim sweep: " + path + "\n";
  report += "points: " + std::to_string(points.size()) + " (" + std::to_string(ok) + " ok, " +
            std::to_string(oom) + " out of memory, " + std::to_string(skipped) + " skipped";
  if (resumed > 0) report += "; " + std::to_string(resumed) + " resumed from " + partial_path;
  report += ")\n";
  if (skipped > 0) {
    report += "skipped:\n" + skipped_text;
    if (skipped > 10) report += "  ... and " + std::to_string(skipped - 10) + " more\n";
  }
  report += campaign ? "\nbest by tokens/s per GPU x ETTR (fitting in memory first):\n"
                     : "\nbest by tokens/s per GPU (fitting in memory first):\n";
  report += ranked_table(axes, points, rows, top, campaign);
  out << report;
  if (!parsed.has("--no-wall-time")) {
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << "wall time: " << fixed(wall_s, 3) << " s (" << threads << " thread"
        << (threads == 1 ? "" : "s") << ")\n";
  }
  return kExitOk;
}

}  // namespace clustersim::cli
