#include "scenario/training_runs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "config/file_text.h"
#include "config/text_fields.h"
#include "scenario/network_scenario.h"
#include "scenario/stack_profile.h"
#include "scenario/step_config.h"
#include "scenario/work_limits.h"
#include "sim/check.h"
#include "workloads/schedules/step_simulator.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr const char* kRequired[] = {"id", "scenario"};

struct Header {
  std::map<std::string, size_t> column;  // name -> index
  bool has(const std::string& name) const { return column.contains(name); }
};

// The first non-comment line's fields, or nullopt when the text has none.
std::optional<std::pair<Header, int>> read_header(const std::vector<sim::TextLine>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view body = sim::trim_blanks(lines[i].text);
    if (body.empty() || body.front() == '#') continue;
    Header h;
    const std::vector<sim::TextField> fields = sim::split_commas(body);
    for (size_t c = 0; c < fields.size(); ++c) h.column[std::string(fields[c].text)] = c;
    return std::make_pair(h, static_cast<int>(i));
  }
  return std::nullopt;
}

std::string directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

std::string kind_of(const sim::ConfigValues& values, const collectives::HardwareProfile& profile) {
  const std::string strategy = values.get_string("workload.parallelism.strategy");
  std::string kind = strategy == "HYBRID_SHARD"            ? "HSDP"
                     : strategy == "NO_SHARD"              ? "DDP"
                     : strategy == "DISTRIBUTED_OPTIMIZER" ? "DistOpt"
                                                           : "FSDP";
  if (values.get_int("workload.parallelism.tp") > 1) kind += "+TP";
  if (values.get_int("workload.parallelism.pp") > 1) kind += "+PP";
  if (values.get_int("workload.parallelism.cp") > 1) kind += "+CP";
  if (values.get_string("workload.float8.recipe") != "none") kind += "+Float8";
  return kind + " " + profile.name;
}

RunPrediction predict_loaded(const NetworkScenario& net, std::optional<double> efficiency,
                             const StepDone& step_done) {
  RunPrediction out;
  out.profile = net.profile;
  out.stack_path = stack_path_of(net.values, net.values.file());
  out.stack = out.stack_path.empty() ? "" : net.values.get_string("stack");
  out.fitted_to = net.values.get_string("workload.stack_efficiency_fitted_to");
  out.kind = kind_of(net.values, net.profile);
  out.gpus = net.cluster.gpu_count();
  workloads::StepConfig config = step_config_from_scenario(net.values, net.cluster, out.profile);
  if (efficiency) config.compute.stack_efficiency = *efficiency;
  out.stack_efficiency = config.compute.stack_efficiency;
  check_step_work(workloads::estimate_step_work(config), config.workload, net.values, WorkLimits{});
  config.max_task_timelines = WorkLimits{}.max_task_timelines;
  const workloads::StepResult step = workloads::simulate_step(net.cluster, out.profile, config);
  if (step_done) step_done();
  out.tokens_per_s_per_gpu = step.tokens_per_s_per_gpu;
  out.memory_gib = static_cast<double>(step.memory.total()) / kGiB;
  out.capacity_gib = static_cast<double>(step.memory_capacity_bytes) / kGiB;
  out.step_time_s = step.step_time_s;
  out.tokens_per_step_per_gpu = step.tokens_per_s_per_gpu * step.step_time_s;
  out.breakdown = step.breakdown;
  return out;
}

}  // namespace

bool is_training_runs_file(const std::string& path) {
  std::string text;
  if (sim::try_read_file_text(path, text, /*regular_only=*/true).failure !=
      sim::ReadFailure::kNone) {
    return false;
  }
  const auto header = read_header(sim::split_lines(text));
  return header && header->first.has("scenario") &&
         (header->first.has("tokens_per_s_per_gpu") || header->first.has("step_time_s"));
}

std::vector<TrainingRun> read_training_runs(const std::string& path) {
  return parse_training_runs(sim::read_file_text(path), path);
}

std::vector<TrainingRun> read_training_runs(const std::vector<std::string>& paths) {
  std::vector<TrainingRun> runs;
  std::map<std::string, sim::SourceLocation> first;
  std::set<std::filesystem::path> files;
  sim::DiagnosticSink sink;
  for (const std::string& path : paths) {
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
    if (!ec && !files.insert(canonical).second) {
      sink.add(sim::SourceLocation{path, 0, 0}, "",
               "expected each runs file once, found this one again");
      continue;
    }
    for (TrainingRun& run : read_training_runs(path)) {
      if (const auto [it, added] = first.emplace(run.id, run.where); !added) {
        sink.add(run.where, "id",
                 "expected an id no other runs file has, found '" + run.id + "' again (first at " +
                     it->second.to_string() + ")");
      }
      runs.push_back(std::move(run));
    }
  }
  sink.throw_if_any();
  return runs;
}

std::vector<TrainingRun> parse_training_runs(std::string_view text, const std::string& path) {
  const std::vector<sim::TextLine> lines = sim::split_lines(text);
  sim::DiagnosticSink sink;
  const auto header = read_header(lines);
  if (!header) {
    sink.add(sim::SourceLocation{path, 1, 1}, "",
             "expected a header line naming the columns id, scenario, tokens_per_s_per_gpu "
             "(or step_time_s), found no line");
    sink.throw_if_any();
  }
  const Header& h = header->first;
  for (const char* name : kRequired) {
    if (!h.has(name)) {
      sink.add(sim::SourceLocation{path, lines[static_cast<size_t>(header->second)].number, 1},
               name, std::string("expected a column named ") + name + ", found none");
    }
  }
  if (!h.has("tokens_per_s_per_gpu") && !h.has("step_time_s")) {
    sink.add(sim::SourceLocation{path, lines[static_cast<size_t>(header->second)].number, 1},
             "tokens_per_s_per_gpu",
             "expected a column named tokens_per_s_per_gpu or step_time_s (what was measured), "
             "found neither");
  }
  sink.throw_if_any();

  const std::string dir = directory_of(path);
  std::vector<TrainingRun> runs;
  std::set<std::string> ids;
  for (size_t i = static_cast<size_t>(header->second) + 1; i < lines.size(); ++i) {
    const std::string_view body = sim::trim_blanks(lines[i].text);
    if (body.empty() || body.front() == '#') continue;
    const std::vector<sim::TextField> fields = sim::split_commas(lines[i].text);
    const auto cell = [&](const std::string& name) -> std::optional<sim::TextField> {
      const auto it = h.column.find(name);
      if (it == h.column.end() || it->second >= fields.size()) return std::nullopt;
      return fields[it->second];
    };
    const auto at = [&](const std::optional<sim::TextField>& f) {
      return sim::SourceLocation{path, lines[i].number, f ? f->column : 1};
    };
    TrainingRun run;
    run.where = sim::SourceLocation{path, lines[i].number, 1};
    const auto id = cell("id");
    const auto scenario = cell("scenario");
    const auto tps = cell("tokens_per_s_per_gpu");
    if (!id || id->text.empty()) {
      sink.add(at(id), "id", "expected the run's name, found nothing");
    } else if (!ids.insert(std::string(id->text)).second) {
      sink.add(at(id), "id", "expected a unique id, found '" + std::string(id->text) + "' again");
    } else {
      run.id = std::string(id->text);
    }
    if (!scenario || scenario->text.empty()) {
      sink.add(at(scenario), "scenario", "expected a scenario file, found nothing");
    } else {
      const std::filesystem::path p(std::string(scenario->text));
      run.scenario = p.is_absolute() ? p.string() : (std::filesystem::path(dir) / p).string();
    }
    // A cell's number > 0, or an error at it saying `expected` and what it holds.
    const auto positive = [&](const std::optional<sim::TextField>& f, const char* column,
                              const std::string& expected) -> std::optional<double> {
      const std::optional<double> x = f ? sim::parse_number<double>(f->text) : std::nullopt;
      if (x && *x > 0) return x;
      sink.add(at(f), column,
               "expected " + expected + ", found '" + std::string(f ? f->text : "") + "'");
      return std::nullopt;
    };
    const auto step = cell("step_time_s");
    const bool by_step_time = step && !step->text.empty();
    if (by_step_time && tps && !tps->text.empty()) {
      sink.add(at(step), "step_time_s",
               "expected nothing where tokens_per_s_per_gpu is given (one measurement a run), "
               "found '" +
                   std::string(step->text) + "'");
    } else if (by_step_time) {
      run.step_time_s = positive(step, "step_time_s", "a number of seconds > 0");
    } else if (const auto x = positive(
                   tps, "tokens_per_s_per_gpu",
                   h.has("step_time_s") ? "a number > 0 (or a step_time_s)" : "a number > 0")) {
      run.tokens_per_s_per_gpu = *x;
    }
    if (const auto mem = cell("memory_gib"); mem && !mem->text.empty()) {
      run.memory_gib = positive(mem, "memory_gib", "a number > 0 or nothing");
    }
    if (const auto o = cell("overrides")) {
      for (const sim::TextField& f : sim::split_blanks(o->text)) {
        if (f.text.find('=') == std::string_view::npos) {
          sink.add(sim::SourceLocation{path, lines[i].number, o->column + f.column - 1},
                   "overrides", "expected KEY=VALUE, found '" + std::string(f.text) + "'");
        } else {
          run.overrides.emplace_back(f.text);
          run.override_where.push_back(
              sim::SourceLocation{path, lines[i].number, o->column + f.column - 1});
        }
      }
    }
    if (const auto s = cell("source")) run.source = std::string(s->text);
    runs.push_back(std::move(run));
  }
  if (runs.empty() && sink.empty()) {
    sink.add(sim::SourceLocation{path, lines[static_cast<size_t>(header->second)].number, 1}, "",
             "expected at least one run after the header, found none");
  }
  sink.throw_if_any();
  return runs;
}

// The run's scenario with its overrides. A problem with an override is
// reported at its place in the runs file, one of the scenario file where it
// is; both name the run.
NetworkScenario load_run_scenario(const TrainingRun& run) {
  std::vector<std::string> overrides = run.command_line_overrides;
  overrides.insert(overrides.end(), run.overrides.begin(), run.overrides.end());
  try {
    return load_network_scenario(run.scenario, overrides);
  } catch (const sim::ConfigError& e) {
    std::vector<sim::Diagnostic> located;
    for (sim::Diagnostic d : e.diagnostics()) {
      bool in_overrides = false;
      for (size_t k = 0; k < run.overrides.size() && k < run.override_where.size(); ++k) {
        if (d.where.file == "--set " + run.overrides[k]) {
          d.where = run.override_where[k];
          in_overrides = true;
          break;
        }
      }
      const bool on_command_line =
          !in_overrides &&
          std::any_of(run.command_line_overrides.begin(), run.command_line_overrides.end(),
                      [&](const std::string& o) { return d.where.file == "--set " + o; });
      d.message += in_overrides ? " (in the overrides of run '" + run.id + "')"
                   : on_command_line
                       ? " (applied to run '" + run.id + "', " + run.where.to_string() + ")"
                       : " (the scenario of run '" + run.id + "', " + run.where.to_string() + ")";
      located.push_back(std::move(d));
    }
    throw sim::ConfigError(std::move(located));
  }
}

void set_measured_throughput(TrainingRun& run, const RunPrediction& prediction) {
  if (run.step_time_s)
    run.tokens_per_s_per_gpu = prediction.tokens_per_step_per_gpu / *run.step_time_s;
}

RunPrediction predict_run(const TrainingRun& run, std::optional<double> efficiency,
                          const StepDone& step_done) {
  return predict_loaded(load_run_scenario(run), efficiency, step_done);
}

RunPrediction predict_scenario(const NetworkScenario& net, std::optional<double> efficiency,
                               const StepDone& step_done) {
  return predict_loaded(net, efficiency, step_done);
}

}  // namespace clustersim::cli
