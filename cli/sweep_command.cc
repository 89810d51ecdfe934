#include "cli/sweep_command.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/mpi_context.h"
#include "cli/progress.h"
#include "cli/sweep_report.h"
#include "cli/table_text.h"
#include "config/config_schema.h"
#include "config/suggest.h"
#include "scenario/sweep_grid.h"
#include "sweep/sweep_points.h"
#include "cli/work_guard.h"
#include "sweep/sweep_runner.h"

namespace clustersim::cli {

namespace {

struct SweepOptions {
  SweepSettings settings;
  size_t top = 10;
  bool wall_time = true;
};

SweepOptions read_options(const ParsedCommand& parsed) {
  SweepOptions o;
  SweepSettings& s = o.settings;
  s.path = parsed.positionals[0];
  s.threads =
      parsed.positive_int_or("--threads", omp_get_max_threads(), 1024, "a number of threads");
  o.top = static_cast<size_t>(parsed.positive_int_or("--top", 10, 1000000, "a number of rows"));
  s.output = parsed.value_or("-o", "");
  s.resume = parsed.has("--resume");
  if (s.resume && s.output.empty()) {
    throw UsageError("option '--resume' needs '-o FILE' (the sweep whose FILE.partial to read)");
  }
  s.sets = parsed.values("--set");
  s.limits = work_limits_from(parsed);
  s.campaign = parsed.has("--campaign");
  s.fitting_only = parsed.has("--fitting-only");
  if (parsed.has("--trials") && !s.campaign) {
    throw UsageError("option '--trials' needs '--campaign' (the campaign to run at each point)");
  }
  // --trials wins over --set campaign.trials, which wins over the default.
  const bool trials_set = std::any_of(s.sets.begin(), s.sets.end(), [](const std::string& set) {
    return set.starts_with("campaign.trials=");
  });
  const int trials =
      parsed.positive_int_or("--trials", 20, 10000000, "a number of campaign trials");
  if (parsed.has("--trials") || !trials_set) s.trials = trials;
  o.wall_time = !parsed.has("--no-wall-time");
  return o;
}

// The --grid flags, each replacing the axis of its key or added after them.
void apply_grid_flags(std::vector<SweepAxis>& axes, const ParsedCommand& parsed,
                      const sim::ConfigSchema& schema) {
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
}

// The scenario's sweep.axes with the --grid flags.
// Errors: sim::ConfigError at sweep.axes; UsageError for a bad --grid, no
// axis at all, or a key both swept and --set.
std::vector<SweepAxis> read_sweep_axes(const SweepScenario& scenario, const ParsedCommand& parsed) {
  std::vector<SweepAxis> axes = scenario_sweep_axes(scenario.values, scenario.schema);
  apply_grid_flags(axes, parsed, scenario.schema);
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

// This process's points on stderr: the estimate before the first, then
// progress weighed by the points' estimated work.
class SweepStatus {
 public:
  SweepStatus(StatusLine& line, int threads, const MpiContext& mpi)
      : line_(line), threads_(threads), mpi_(mpi) {}
  void operator()(const SweepTally& t) {
    if (!meter_) {
      if (t.task_timelines >= kLargeTaskTimelines) announce(t);
      meter_.emplace(line_, static_cast<int64_t>(t.points), "points");
      return;
    }
    points_done_ = t.points_done;
    meter_->update(static_cast<int64_t>(t.points_done), t.work_done);
  }
  void finish() {
    if (meter_) meter_->finish(static_cast<int64_t>(points_done_));
  }

 private:
  void announce(const SweepTally& t) {
    std::string text = "simulating " + with_separators(static_cast<int64_t>(t.points)) +
                       " points on " + std::to_string(threads_) + " thread" +
                       (threads_ == 1 ? "" : "s");
    if (mpi_.size() > 1) {
      text += " (rank 0's share; " + std::to_string(mpi_.size()) + " MPI ranks in all)";
    }
    line_.note(text + ", " + count_text(static_cast<double>(t.task_timelines)) + " tasks in all");
  }

  StatusLine& line_;
  int threads_;
  const MpiContext& mpi_;
  std::optional<CountMeter> meter_;
  size_t points_done_ = 0;
};

// The sweep's ranks are mpirun's (one process without it); a rank that
// fails outside its points says so and ends the job.
class MpiRanks final : public SweepRanks {
 public:
  MpiRanks(const MpiContext& mpi, std::ostream& err) : mpi_(mpi), err_(err) {}
  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  std::string broadcast(const std::string& from_root) const override {
    return mpi_.broadcast(from_root);
  }
  std::vector<std::string> gather(const std::string& mine) const override {
    return mpi_.gather(mine);
  }
  bool distributed() const override { return mpi_.active(); }
  void fail(const std::exception_ptr& failure) const override {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      err_ << "clustersim sweep: error on MPI rank " << mpi_.rank() << ": " << e.what() << "\n";
    }
    mpi_.abort(kExitError);
  }

 private:
  const MpiContext& mpi_;
  std::ostream& err_;
};

}  // namespace

CommandSpec sweep_command_spec() {
  CommandSpec spec{
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
       {"--fitting-only", "", false,
        "do not simulate points that do not fit in GPU memory: skip them with their peak memory"},
       {"--no-wall-time", "", false, "leave out the last line (wall time)"},
       quiet_option()},
      "Points that fail validation are skipped with the reason; points that do not fit in\n"
      "GPU memory are simulated and marked (with --fitting-only: skipped, their peak memory\n"
      "in peak_memory_bytes and the reason). CSV columns: the swept keys, status (ok |\n"
      "skipped | out_of_memory | failed), reason, step_time_s, tokens_per_s_per_gpu,\n"
      "tflops_per_gpu, mfu, peak_memory_bytes, fits_in_memory, exposed_comm_s, where the\n"
      "step went (compute_s, exposed_all_gather_s, exposed_reduce_scatter_s,\n"
      "exposed_all_reduce_s, exposed_tp_s, exposed_cp_s, exposed_pcie_s, pipeline_bubble_s,\n"
      "sync_wait_s, launch_bound_s, idle_s: seconds per rank, summing to step_time_s); with\n"
      "--campaign also ettr_mean, time_to_train_days (with campaign.tokens).\n"
      "The ranking: tokens/s per GPU (x ETTR with --campaign), fitting points first.\n"
      "A point whose step is over the work limits below is skipped with the reason.\n"
      "On stderr (rank 0's under mpirun): the points to simulate and their estimated work\n"
      "when it is 20 M tasks or more, then while they run the points done, the percentage\n"
      "of their estimated work and an ETA (redrawn on a terminal, else a line every 5 s,\n"
      "none for a sweep that ends sooner), and 'wrote FILE' for the CSV; --quiet prints\n"
      "none of these."};
  for (OptionSpec& o : work_limit_options()) spec.options.push_back(std::move(o));
  return spec;
}

int run_sweep_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  // Under mpirun every rank runs the sweep (sweep/sweep_runner.h); rank 0
  // alone writes the CSV and prints: the same bytes as one process.
  const MpiContext mpi;
  const SweepOptions o = read_options(parsed);
  const SweepSettings& s = o.settings;
  const SweepScenario scenario = load_sweep_scenario(s);
  const std::vector<SweepAxis> axes = read_sweep_axes(scenario, parsed);
  const bool root = mpi.rank() == 0;
  StatusLine line(err, "clustersim sweep", root ? status_mode(parsed, err) : StatusMode::kQuiet);
  SweepStatus status(line, s.threads, mpi);
  SweepProgress progress;
  if (!line.quiet()) progress = [&status](const SweepTally& t) { status(t); };
  const SweepOutcome outcome = run_sweep(s, scenario, axes, MpiRanks(mpi, err), progress);
  status.finish();
  if (!root) return kExitOk;

  write_sweep_csv(s, outcome);
  if (!s.output.empty()) line.note("wrote " + s.output);
  out << sweep_report({s.path, axes, outcome.points, outcome.rows, outcome.resumed,
                       s.journal_path(), o.top, s.campaign});
  if (o.wall_time) {
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << "wall time: " << fixed(wall_s, 3) << " s (" << s.threads << " thread"
        << (s.threads == 1 ? "" : "s") << ")\n";
  }
  return kExitOk;
}

}  // namespace clustersim::cli
