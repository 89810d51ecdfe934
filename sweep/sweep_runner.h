// The sweep runner: a scenario's step simulated at every point of a grid
// (scenario/sweep_grid.h), in parallel, each point ending as one CSV row
// (sweep/sweep_rows.h), with a resume journal (sweep/sweep_journal.h).
// `clustersim sweep` (cli/sweep_command.h) parses its options into
// SweepSettings, runs this and prints.
//
// A point is the scenario loaded with its axes' values as overrides (and
// --set), so it is validated exactly like the file (sweep/sweep_points.h,
// which also derives the HSDP group size left free). Each point: invalid
// ones (any scenario or workload error: sizes that do not divide, tp above
// the GPUs of a node, a forced collectives.algorithm or protocol that one of
// its groups cannot run, ...) are `skipped` with the reason (the errors'
// "key: message", without the file); the others are simulated like `run
// --allow-oom` and are `ok` or `out_of_memory` (with `fitting_only`, a
// point that does not fit is not simulated: `skipped`, with its peak memory
// and the capacity in the reason). A point on which clustersim
// itself fails (an invariant, memory) is `failed` with the error's text; no
// point stops the sweep. Clusters are built once per distinct `cluster.*`
// setting and shared (read-only) by the points' simulations; points run in
// parallel (OpenMP, SweepSettings::threads).
//
// With an output FILE, FILE.partial receives each finished row as
// "INDEX,ROW" (flushed, any order) after a first line naming the sweep;
// `resume` reads it back (a row must name the same point; a cut last line
// is ignored), keeps its rows verbatim and simulates only the rest, so the
// final CSV is the same bytes as an uninterrupted run. FILE.partial is
// removed once FILE is written (write_sweep_csv). Without `resume` an old
// FILE.partial is started afresh.
// With `campaign`, each simulated point also runs the campaign of its own
// step (scenario/campaign_inputs.h; the point's simulated step is used even
// when campaign.step_time is set), serially inside the point; a point whose
// campaign cannot run (e.g. ft_hsdp with one replica group) is skipped with
// "campaign: " and the reason.
//
// Over several processes (SweepRanks, MPI under mpirun): every rank expands
// the same grid and simulates every size-th point still to do; rank 0 alone
// reads the journal (telling the others which points are done), appends its
// rows as they finish and the other ranks' when they arrive at the end, and
// alone has every row: the same bytes as one process.
// Errors: sim::ConfigError for a bad scenario or journal; sim::OutputError
// for a journal or CSV that cannot be written; what escapes a point's row
// (not the point's simulation, which becomes its row) is rethrown after the
// journal is closed (handed first to SweepRanks::fail when distributed).
// Thread safety: run_sweep uses its own threads; call it from one thread.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "scenario/sweep_grid.h"
#include "scenario/work_limits.h"

namespace clustersim::cli {

struct SweepSettings {
  std::string path;               // the scenario file
  std::vector<std::string> sets;  // KEY=VALUE overrides of every point
  int threads = 1;                // points in parallel on this process
  std::string output;             // the CSV; "" for none (and no journal)
  bool resume = false;            // keep the rows of output's journal
  bool campaign = false;          // also a campaign at every simulated point
  // Points whose step does not fit in GPU memory are not simulated: skipped,
  // with their peak memory (sweep_rows.h's oversized_row).
  bool fitting_only = false;
  // Campaign trials of every point; none: the scenario's campaign.trials.
  std::optional<int> trials;
  WorkLimits limits;  // a point's step over them is skipped (scenario/work_limits.h)

  // FILE.partial, or "" without an output.
  std::string journal_path() const { return output.empty() ? "" : output + ".partial"; }
};

// The scenario a sweep starts from: its text, loaded with the settings'
// overrides against the full schema.
struct SweepScenario {
  sim::ConfigSchema schema;
  std::string text;
  sim::ConfigValues values;
};
// Errors: sim::ConfigError naming the file and line.
SweepScenario load_sweep_scenario(const SweepSettings& settings);

// The processes a sweep is spread over. One process: rank 0 of 1, and
// broadcast and gather return what they are given.
class SweepRanks {
 public:
  virtual ~SweepRanks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank 0's text, on every rank. Collective: every rank calls it.
  virtual std::string broadcast(const std::string& from_root) const = 0;
  // Every rank's text at rank 0, in rank order; the others get nothing.
  // Collective.
  virtual std::vector<std::string> gather(const std::string& mine) const = 0;
  // Whether other processes wait on this one's collectives.
  virtual bool distributed() const = 0;
  // This rank failed outside its points and `distributed()`: the other
  // ranks would wait for it in a collective, so under MPI this ends the job.
  // When it returns, run_sweep rethrows the failure.
  virtual void fail(const std::exception_ptr& failure) const = 0;
};

// One process alone.
class SingleProcess final : public SweepRanks {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string broadcast(const std::string& from_root) const override { return from_root; }
  std::vector<std::string> gather(const std::string& mine) const override { return {mine}; }
  bool distributed() const override { return false; }
  void fail(const std::exception_ptr&) const override {}
};

// How far this process's share of a sweep is, for progress lines.
struct SweepTally {
  size_t points_done = 0;  // simulated by this process so far
  size_t points = 0;       // this process's points to simulate
  // Their work estimated before simulating: tasks x timelines (scenario/work_limits.h).
  int64_t task_timelines = 0;
  // The share of that work done, 0 to 1: a finished point counts its
  // estimate, a running one the part of it its engine's operations have
  // done (points of very different sizes, cluster.nodes swept, are then
  // weighed as they cost).
  double work_done = 0;
};
// Told once with points_done = 0 before the first point, after each point,
// and as points run; under a lock, never concurrently, from any of the
// sweep's threads. Never changes a result.
using SweepProgress = std::function<void(const SweepTally&)>;

struct SweepOutcome {
  std::vector<SweepPoint> points;  // in grid order
  // One per point, sweep/sweep_rows.h; complete on rank 0 only (another
  // rank holds only the rows it simulated).
  std::vector<std::string> rows;
  size_t resumed = 0;       // rows taken from the journal
  std::string header_line;  // the CSV header
};

// Runs the sweep of `axes` (at least one) over `scenario`.
SweepOutcome run_sweep(const SweepSettings& settings, const SweepScenario& scenario,
                       const std::vector<SweepAxis>& axes, const SweepRanks& ranks,
                       const SweepProgress& progress);

// The CSV of a finished sweep at settings.output, written atomically, and
// the journal removed; nothing without an output. Rank 0 only.
// Errors: sim::OutputError naming the path.
void write_sweep_csv(const SweepSettings& settings, const SweepOutcome& outcome);

}  // namespace clustersim::cli
