#include "cli/sweep_command.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/mpi_context.h"
#include "cli/sweep_journal.h"
#include "cli/sweep_points.h"
#include "cli/sweep_report.h"
#include "cli/sweep_rows.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "config/text_fields.h"
#include "scenario/campaign_inputs.h"
#include "scenario/scenario_schema.h"
#include "scenario/sweep_grid.h"
#include "schedules/step_simulator.h"

namespace clustersim::cli {

namespace {

struct SweepOptions {
  std::string path;
  int threads = 1;
  size_t top = 10;
  std::string output;  // -o; "" for none
  bool resume = false;
  std::vector<std::string> sets;
  bool campaign = false;
  // Campaign trials: --trials wins over --set campaign.trials, which wins
  // over the default.
  int trials = 20;
  bool trials_forced = false;
  bool wall_time = true;

  std::string journal_path() const { return output.empty() ? "" : output + ".partial"; }
};

SweepOptions read_options(const ParsedCommand& parsed) {
  SweepOptions o;
  o.path = parsed.positionals[0];
  o.threads =
      parsed.positive_int_or("--threads", omp_get_max_threads(), 1024, "a number of threads");
  o.top = static_cast<size_t>(parsed.positive_int_or("--top", 10, 1000000, "a number of rows"));
  o.output = parsed.value_or("-o", "");
  o.resume = parsed.has("--resume");
  if (o.resume && o.output.empty()) {
    throw UsageError("option '--resume' needs '-o FILE' (the sweep whose FILE.partial to read)");
  }
  o.sets = parsed.values("--set");
  o.campaign = parsed.has("--campaign");
  if (parsed.has("--trials") && !o.campaign) {
    throw UsageError("option '--trials' needs '--campaign' (the campaign to run at each point)");
  }
  const bool trials_set = std::any_of(o.sets.begin(), o.sets.end(), [](const std::string& s) {
    return s.starts_with("campaign.trials=");
  });
  o.trials = parsed.positive_int_or("--trials", 20, 10000000, "a number of campaign trials");
  o.trials_forced = parsed.has("--trials") || !trials_set;
  o.wall_time = !parsed.has("--no-wall-time");
  return o;
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

// Every point's row once finished, and which are finished.
struct SweepRows {
  std::vector<std::string> rows;
  std::vector<bool> done;
  size_t resumed = 0;  // taken from the journal

  explicit SweepRows(size_t points) : rows(points), done(points, false) {}
};

// --resume: rank 0 reads the journal and tells the other ranks which points
// are done (they need not their rows: rank 0 writes the CSV).
void resume(SweepRows& state, const SweepOptions& o, const std::string& first_line,
            const std::vector<SweepPoint>& points, size_t columns, const MpiContext& mpi) {
  std::string done_list;
  if (mpi.rank() == 0) {
    for (auto& [index, row] : read_journal(o.journal_path(), first_line, points, columns)) {
      state.rows[index] = row;
      state.done[index] = true;
      ++state.resumed;
      done_list += std::to_string(index) + "\n";
    }
  }
  done_list = mpi.broadcast(done_list);
  for (const auto& line : sim::split_lines(done_list)) {
    if (const auto index = sim::parse_number<int64_t>(line.text)) {
      state.done[static_cast<size_t>(*index)] = true;
    }
  }
}

// Prepares every point not done (serially: loading and validation are
// cheap, and clusters are shared); those that cannot run get their row now.
// Returns the points to simulate, in grid order.
std::vector<size_t> prepare_points(std::vector<PreparedPoint>& prepared, SweepRows& state,
                                   PointLoader& loader, const std::vector<SweepAxis>& axes,
                                   const std::vector<SweepPoint>& points, bool campaign) {
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i) {
    if (state.done[i]) continue;
    if (!points[i].invalid_reason.empty()) {
      state.rows[i] = skipped_row(points[i], points[i].invalid_reason, campaign);
      continue;
    }
    prepared[i] = loader.prepare(point_overrides(axes, points[i]));
    const PreparedPoint& p = prepared[i];
    if (!p.reason.empty()) {
      state.rows[i] = p.failed ? failed_row(points[i], p.reason, campaign)
                               : skipped_row(points[i], p.reason, campaign);
      continue;
    }
    todo.push_back(i);
  }
  return todo;
}

// The campaign of the point's own simulated step; its trials run on this
// thread (the points are the parallel work).
std::string campaign_row(const SweepOptions& o, const SweepPoint& point, const PreparedPoint& p,
                         const workloads::StepResult& r) {
  CampaignInputs in = read_campaign_inputs(
      o.path, p.values,
      [&p]() {
        return StepPlatform{*p.cluster, *p.profile};
      },
      &r);
  if (o.trials_forced) in.spec.trials = o.trials;
  const failures::CampaignResult c = failures::run_campaign(in.model, in.policy, in.spec, 1);
  CampaignFigures figures{c.ettr_mean, std::nullopt};
  if (in.spec.tokens > 0) figures.time_to_train_days = c.time_to_train_days;
  return simulated_row(point, r, figures);
}

// The point's row whatever happens: an error of the input skips it, any
// other failure (an invariant, memory) marks it failed; the sweep goes on.
std::string simulate_point(const SweepOptions& o, const SweepPoint& point, const PreparedPoint& p) {
  std::optional<workloads::StepResult> r;
  try {
    r = workloads::simulate_step(*p.cluster, *p.profile, p.config);
    if (!o.campaign) return simulated_row(point, *r, std::nullopt);
    return campaign_row(o, point, p, *r);
  } catch (const sim::ConfigError& e) {
    return skipped_row(point, (r ? "campaign: " : "") + reason_of(e), o.campaign);
  } catch (const std::exception& e) {
    return failed_row(point, (r && o.campaign ? "campaign: " : "") + std::string(e.what()),
                      o.campaign);
  }
}

// This rank's share of the points to simulate: every size-th.
std::vector<size_t> share_of(const std::vector<size_t>& todo, const MpiContext& mpi) {
  std::vector<size_t> mine;
  for (size_t t = 0; t < todo.size(); ++t) {
    if (static_cast<int>(t % static_cast<size_t>(mpi.size())) == mpi.rank()) {
      mine.push_back(todo[t]);
    }
  }
  return mine;
}

// Simulates `mine` in parallel; each row goes to the journal as it
// finishes. What escapes a point (a failure to build its row text) is
// returned, the first one.
std::exception_ptr simulate_points(SweepRows& state, SweepJournal& journal,
                                   const std::vector<size_t>& mine, const SweepOptions& o,
                                   const std::vector<SweepPoint>& points,
                                   const std::vector<PreparedPoint>& prepared, Progress& progress) {
  std::mutex lock;
  std::exception_ptr failure;
  const int64_t n = static_cast<int64_t>(mine.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(o.threads)
  for (int64_t t = 0; t < n; ++t) {
    const size_t i = mine[static_cast<size_t>(t)];
    try {
      std::string row = simulate_point(o, points[i], prepared[i]);
      const std::lock_guard<std::mutex> guard(lock);
      journal.append(i, row);
      state.rows[i] = std::move(row);
      progress.done_one();
    } catch (...) {
      const std::lock_guard<std::mutex> guard(lock);
      if (!failure) failure = std::current_exception();
    }
  }
  return failure;
}

// Rows simulated by the other ranks (none without MPI) to rank 0, which
// keeps them in the journal too (for --resume).
void gather_rows(SweepRows& state, SweepJournal& journal, const std::vector<size_t>& mine,
                 const MpiContext& mpi) {
  std::string theirs;
  for (const size_t i : mine) theirs += journal_line(i, state.rows[i]);
  const std::vector<std::string> all = mpi.gather(theirs);
  for (size_t r = 1; r < all.size(); ++r) {
    for (const auto& line : sim::split_lines(all[r])) {
      const auto entry = parse_journal_line(line.text);
      if (!entry) continue;
      state.rows[entry->first] = entry->second;
      journal.append(entry->first, entry->second);
    }
  }
}

void write_csv(const SweepOptions& o, const std::string& header_line, const SweepRows& state) {
  if (o.output.empty()) return;
  std::string csv = header_line + "\n";
  for (const std::string& row : state.rows) csv += row + "\n";
  sim::write_file_atomically(o.output, csv);
  std::error_code ignored;
  std::filesystem::remove(o.journal_path(), ignored);
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
      "skipped | out_of_memory | failed), reason, step_time_s, tokens_per_s_per_gpu,\n"
      "tflops_per_gpu, mfu, peak_memory_bytes, fits_in_memory, exposed_comm_s; with\n"
      "--campaign also ettr_mean, time_to_train_days (with campaign.tokens).\n"
      "The ranking: tokens/s per GPU (x ETTR with --campaign), fitting points first."};
}

int run_sweep_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  // Under mpirun every rank expands the same grid, takes every size-th point
  // to simulate, and sends its rows to rank 0, which alone keeps the journal,
  // writes the CSV and prints: the same bytes as one process.
  const MpiContext mpi;
  const bool root = mpi.rank() == 0;
  const SweepOptions o = read_options(parsed);

  const sim::ConfigSchema schema = build_scenario_schema();
  const std::string text = sim::read_file_text(o.path);
  const sim::ConfigValues base = sim::load_scenario_text(text, o.path, schema, o.sets);
  const std::vector<SweepAxis> axes = read_sweep_axes(base, parsed, schema);
  PointLoader loader(o.path, text, o.sets, derived_group_key(axes, o.sets));
  const std::vector<SweepPoint> points = expand_sweep_grid(
      axes, [&loader](const std::vector<std::string>& v) { return loader.dp_size(v); });

  const std::string header_line = sweep_header(axes, o.campaign);
  const size_t columns =
      axes.size() + kFigureColumns.size() + (o.campaign ? kCampaignColumns.size() : 0);
  const std::string first_line = journal_first_line(points.size(), header_line);
  SweepRows state(points.size());
  if (o.resume) resume(state, o, first_line, points, columns, mpi);

  std::vector<PreparedPoint> prepared(points.size());
  const std::vector<size_t> todo =
      prepare_points(prepared, state, loader, axes, points, o.campaign);
  std::optional<SweepJournal> journal;
  if (!o.output.empty() && root) {
    journal.emplace(o.journal_path(), first_line, state.rows, state.done);
  } else {
    journal.emplace();
  }

  const std::vector<size_t> mine = share_of(todo, mpi);
  Progress progress(err, mine.size(), root && isatty(STDERR_FILENO) == 1);
  const std::exception_ptr failure =
      simulate_points(state, *journal, mine, o, points, prepared, progress);
  if (failure && mpi.active()) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      err << "clustersim sweep: error on MPI rank " << mpi.rank() << ": " << e.what() << "\n";
    }
    mpi.abort(kExitError);
  }
  if (!failure) gather_rows(state, *journal, mine, mpi);
  journal.reset();
  if (failure) std::rethrow_exception(failure);
  if (!root) return kExitOk;  // rank 0 writes and prints

  write_csv(o, header_line, state);
  out << sweep_report(
      {o.path, axes, points, state.rows, state.resumed, o.journal_path(), o.top, o.campaign});
  if (o.wall_time) {
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    out << "wall time: " << fixed(wall_s, 3) << " s (" << o.threads << " thread"
        << (o.threads == 1 ? "" : "s") << ")\n";
  }
  return kExitOk;
}

}  // namespace clustersim::cli
