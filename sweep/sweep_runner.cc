#include "sweep/sweep_runner.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>

#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "config/text_fields.h"
#include "failures/campaign.h"
#include "scenario/campaign_inputs.h"
#include "scenario/network_scenario.h"
#include "scenario/scenario_schema.h"
#include "scenario/stack_profile.h"
#include "sweep/sweep_journal.h"
#include "sweep/sweep_points.h"
#include "sweep/sweep_rows.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

namespace {

// Every point's row once finished, and which are finished.
struct SweepRows {
  std::vector<std::string> rows;
  std::vector<bool> done;
  size_t resumed = 0;  // taken from the journal

  explicit SweepRows(size_t points) : rows(points), done(points, false) {}
};

// Resume: rank 0 reads the journal and tells the other ranks which points
// are done (they need not their rows: rank 0 writes the CSV).
void resume(SweepRows& state, const SweepSettings& s, const std::string& first_line,
            const std::vector<SweepPoint>& points, size_t columns, const SweepRanks& ranks) {
  std::string done_list;
  if (ranks.rank() == 0) {
    for (auto& [index, row] : read_journal(s.journal_path(), first_line, points, columns)) {
      state.rows[index] = row;
      state.done[index] = true;
      ++state.resumed;
      done_list += std::to_string(index) + "\n";
    }
  }
  done_list = ranks.broadcast(done_list);
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
std::string campaign_row(const SweepSettings& s, const SweepPoint& point, const PreparedPoint& p,
                         const workloads::StepResult& r) {
  CampaignInputs in = read_campaign_inputs(
      s.path, p.values,
      [&p]() {
        return StepPlatform{*p.cluster, *p.profile};
      },
      &r);
  if (s.trials) in.spec.trials = *s.trials;
  const failures::CampaignResult c = failures::run_campaign(in.model, in.policy, in.spec, 1);
  CampaignFigures figures{c.ettr_mean, std::nullopt};
  if (in.spec.tokens > 0) figures.time_to_train_days = c.time_to_train_days;
  return simulated_row(point, r, figures);
}

// The point's row whatever happens: an error of the input skips it, any
// other failure (an invariant, memory) marks it failed; the sweep goes on.
std::string simulate_point(const SweepSettings& s, const SweepPoint& point, const PreparedPoint& p,
                           const workloads::EngineProgressFn& progress) {
  std::optional<workloads::StepResult> r;
  try {
    if (s.fitting_only && p.config.memory_capacity_bytes > 0) {
      const workloads::MemoryBreakdown memory = workloads::memory_breakdown(p.config.workload);
      if (!workloads::fits(memory, p.config.memory_capacity_bytes)) {
        return oversized_row(point, memory, p.config.memory_capacity_bytes, s.campaign);
      }
    }
    if (progress) {
      workloads::StepConfig watched = p.config;
      watched.progress = progress;
      r = workloads::simulate_step(*p.cluster, *p.profile, watched);
    } else {
      r = workloads::simulate_step(*p.cluster, *p.profile, p.config);
    }
    if (!s.campaign) return simulated_row(point, *r, std::nullopt);
    return campaign_row(s, point, p, *r);
  } catch (const sim::ConfigError& e) {
    return skipped_row(point, (r ? "campaign: " : "") + reason_of(e), s.campaign);
  } catch (const std::exception& e) {
    return failed_row(point, (r && s.campaign ? "campaign: " : "") + std::string(e.what()),
                      s.campaign);
  }
}

// This rank's share of the points to simulate: every size-th.
std::vector<size_t> share_of(const std::vector<size_t>& todo, const SweepRanks& ranks) {
  std::vector<size_t> mine;
  for (size_t t = 0; t < todo.size(); ++t) {
    if (static_cast<int>(t % static_cast<size_t>(ranks.size())) == ranks.rank()) {
      mine.push_back(todo[t]);
    }
  }
  return mine;
}

// The tally of the points this process simulates, each weighing its
// estimated work; a running point is credited the fraction of its
// operations done. Not thread-safe: the caller holds the sweep's lock.
class PointsTally {
 public:
  PointsTally(const std::vector<size_t>& mine, const std::vector<PreparedPoint>& prepared)
      : credited_(mine.size(), 0) {
    tally_.points = mine.size();
    for (const size_t i : mine) {
      // At least 1, so that a point whose estimate is 0 still counts.
      weights_.push_back(static_cast<double>(std::max<int64_t>(1, prepared[i].task_timelines)));
      tally_.task_timelines += prepared[i].task_timelines;
      total_ += weights_.back();
    }
  }
  const SweepTally& tally() const { return tally_; }
  // Point `t` of `mine` is at `fraction` of its operations.
  void running(size_t t, double fraction) {
    const double credit = weights_[t] * std::clamp(fraction, 0.0, 1.0);
    credited_sum_ += credit - credited_[t];
    credited_[t] = credit;
    update();
  }
  void finished(size_t t) {
    credited_sum_ -= credited_[t];
    credited_[t] = 0;
    finished_sum_ += weights_[t];
    ++tally_.points_done;
    update();
  }

 private:
  void update() {
    // Every point finished is all the work, whatever the sums' rounding.
    tally_.work_done = tally_.points_done == tally_.points
                           ? 1.0
                           : std::clamp((finished_sum_ + credited_sum_) / total_, 0.0, 1.0);
  }

  SweepTally tally_;
  std::vector<double> weights_;
  std::vector<double> credited_;
  double total_ = 0;
  double finished_sum_ = 0;
  double credited_sum_ = 0;
};

// Simulates `mine` in parallel; each row goes to the journal as it
// finishes. What escapes a point (a failure to build its row text) is
// returned, the first one.
std::exception_ptr simulate_points(SweepRows& state, SweepJournal& journal,
                                   const std::vector<size_t>& mine, const SweepSettings& s,
                                   const std::vector<SweepPoint>& points,
                                   const std::vector<PreparedPoint>& prepared,
                                   const SweepProgress& progress) {
  std::mutex lock;
  std::exception_ptr failure;
  PointsTally tally(mine, prepared);
  if (progress) progress(tally.tally());
  const int64_t n = static_cast<int64_t>(mine.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(s.threads)
  for (int64_t t = 0; t < n; ++t) {
    const size_t i = mine[static_cast<size_t>(t)];
    workloads::EngineProgressFn running;
    if (progress) {
      running = [&, t](const workloads::EngineProgress& p) {
        const double fraction =
            p.ops_total > 0 ? static_cast<double>(p.ops_done) / static_cast<double>(p.ops_total)
                            : 0;
        const std::lock_guard<std::mutex> guard(lock);
        tally.running(static_cast<size_t>(t), fraction);
        progress(tally.tally());
      };
    }
    try {
      std::string row = simulate_point(s, points[i], prepared[i], running);
      const std::lock_guard<std::mutex> guard(lock);
      journal.append(i, row);
      state.rows[i] = std::move(row);
      tally.finished(static_cast<size_t>(t));
      if (progress) progress(tally.tally());
    } catch (...) {
      const std::lock_guard<std::mutex> guard(lock);
      if (!failure) failure = std::current_exception();
    }
  }
  return failure;
}

// Rows simulated by the other ranks (none in one process) to rank 0, which
// keeps them in the journal too (for resume).
void gather_rows(SweepRows& state, SweepJournal& journal, const std::vector<size_t>& mine,
                 const SweepRanks& ranks) {
  std::string theirs;
  for (const size_t i : mine) theirs += journal_line(i, state.rows[i]);
  const std::vector<std::string> all = ranks.gather(theirs);
  for (size_t r = 1; r < all.size(); ++r) {
    for (const auto& line : sim::split_lines(all[r])) {
      const auto entry = parse_journal_line(line.text);
      if (!entry) continue;
      state.rows[entry->first] = entry->second;
      journal.append(entry->first, entry->second);
    }
  }
}

}  // namespace

SweepScenario load_sweep_scenario(const SweepSettings& settings) {
  SweepScenario scenario{build_scenario_schema(), sim::read_scenario_text(settings.path), {}};
  scenario.values =
      sim::load_scenario_text(scenario.text, settings.path, scenario.schema, settings.sets);
  apply_stack_profile(scenario.values, settings.path);
  apply_profile_node(scenario.values, settings.path);
  return scenario;
}

SweepOutcome run_sweep(const SweepSettings& settings, const SweepScenario& scenario,
                       const std::vector<SweepAxis>& axes, const SweepRanks& ranks,
                       const SweepProgress& progress) {
  PointLoader loader(settings.path, scenario.text, settings.sets,
                     derived_group_key(axes, settings.sets), settings.limits);
  SweepOutcome outcome;
  outcome.points = expand_sweep_grid(
      axes, [&loader](const std::vector<std::string>& v) { return loader.dp_size(v); });
  const std::vector<SweepPoint>& points = outcome.points;

  outcome.header_line = sweep_header(axes, settings.campaign);
  const size_t columns =
      axes.size() + kFigureColumns.size() + (settings.campaign ? kCampaignColumns.size() : 0);
  const std::string first_line = journal_first_line(points.size(), outcome.header_line);
  SweepRows state(points.size());
  if (settings.resume) resume(state, settings, first_line, points, columns, ranks);

  std::vector<PreparedPoint> prepared(points.size());
  const std::vector<size_t> todo =
      prepare_points(prepared, state, loader, axes, points, settings.campaign);
  std::optional<SweepJournal> journal;
  if (!settings.output.empty() && ranks.rank() == 0) {
    journal.emplace(settings.journal_path(), first_line, state.rows, state.done);
  } else {
    journal.emplace();
  }

  const std::vector<size_t> mine = share_of(todo, ranks);
  const std::exception_ptr failure =
      simulate_points(state, *journal, mine, settings, points, prepared, progress);
  if (failure && ranks.distributed()) ranks.fail(failure);
  if (!failure) gather_rows(state, *journal, mine, ranks);
  journal.reset();
  if (failure) std::rethrow_exception(failure);
  outcome.rows = std::move(state.rows);
  outcome.resumed = state.resumed;
  return outcome;
}

void write_sweep_csv(const SweepSettings& settings, const SweepOutcome& outcome) {
  if (settings.output.empty()) return;
  std::string csv = outcome.header_line + "\n";
  for (const std::string& row : outcome.rows) csv += row + "\n";
  sim::write_file_atomically(settings.output, csv);
  std::error_code ignored;
  std::filesystem::remove(settings.journal_path(), ignored);
}

}  // namespace clustersim::cli
