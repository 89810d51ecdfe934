#include "cli/validate_runs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "cli/progress.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/text_fields.h"
#include "scenario/stack_fit.h"
#include "scenario/training_runs.h"
#include "sim/statistics.h"
#include "sweep/sweep_rows.h"

namespace clustersim::cli {

namespace {

struct Row {
  const TrainingRun* run;
  RunPrediction prediction;
  double error = 0;                    // of the throughput
  std::optional<double> memory_error;  // of the peak memory
  std::optional<double> cv_error;      // predicted with an efficiency fitted without its fold
  std::optional<double> cv_efficiency;
  std::string label;  // "fitted" or "held out"
};

std::set<std::string> fitted_ids(const RunPrediction& prediction) {
  std::set<std::string> ids;
  for (const sim::TextField& f : sim::split_blanks(prediction.fitted_to)) ids.emplace(f.text);
  return ids;
}

// The job-size band of a run, for the summary by size: its lowest GPU count
// and its name ("64-511 GPUs"). Bands of a factor of 8 keep a few runs each.
std::pair<int64_t, std::string> size_band(int64_t gpus) {
  static constexpr int64_t kEdges[] = {8, 64, 512, 4096};
  int64_t lo = 1;
  for (const int64_t edge : kEdges) {
    if (gpus < edge) return {lo, std::to_string(lo) + "-" + std::to_string(edge - 1) + " GPUs"};
    lo = edge;
  }
  return {lo, ">= " + std::to_string(lo) + " GPUs"};
}

std::string percent(double e) { return (e >= 0 ? "+" : "") + fixed(e * 100.0, 1) + "%"; }

// "cases=N median_abs_error=..% max_abs_error=..% mean_error=+..%".
std::string summary(const std::vector<double>& errors) {
  sim::Samples abs;
  double sum = 0;
  for (double e : errors) {
    abs.add(std::fabs(e) * 100.0);
    sum += e;
  }
  std::ostringstream s;
  s << "cases=" << errors.size() << " median_abs_error=" << fixed(abs.percentile(50), 2)
    << "% max_abs_error=" << fixed(abs.percentile(100), 2)
    << "% mean_error=" << percent(sum / static_cast<double>(errors.size()));
  return s.str();
}

// Numbers read back to the same double; an absent one is an empty field.
std::string exact(double x) { return number_text(x); }
std::string maybe(const std::optional<double>& x) { return x ? exact(*x) : ""; }

std::string rows_csv(const std::vector<Row>& rows) {
  std::string text =
      "id,kind,stack,gpus,label,measured_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu,"
      "error,cv_error,cv_stack_efficiency,measured_memory_gib,predicted_memory_gib,capacity_gib,"
      "memory_error,step_time_s,compute_s,exposed_comm_s,sync_wait_s,pipeline_bubble_s,source\n";
  for (const Row& r : rows) {
    const workloads::StepBreakdown& b = r.prediction.breakdown;
    text += csv_field(r.run->id) + "," + csv_field(r.prediction.kind) + "," +
            csv_field(r.prediction.stack) + "," + std::to_string(r.prediction.gpus) + "," +
            r.label + "," + exact(r.run->tokens_per_s_per_gpu) + "," +
            exact(r.prediction.tokens_per_s_per_gpu) + "," + exact(r.error) + "," +
            maybe(r.cv_error) + "," + maybe(r.cv_efficiency) + "," + maybe(r.run->memory_gib) +
            "," + exact(r.prediction.memory_gib) + "," + exact(r.prediction.capacity_gib) + "," +
            maybe(r.memory_error) + "," + exact(r.prediction.step_time_s) + "," +
            exact(b.compute_s) + "," + exact(b.exposed_comm_s()) + "," + exact(b.sync_wait_s) +
            "," + exact(b.pipeline_bubble_s) + "," + csv_field(r.run->source) + "\n";
  }
  return text;
}

}  // namespace

int run_validate_runs(const std::vector<std::string>& files, const RunsValidationOptions& options,
                      std::ostream& out, std::ostream& err) {
  std::vector<TrainingRun> runs = read_training_runs(files);
  for (TrainingRun& run : runs) run.command_line_overrides = options.overrides;
  // Progress: the runs predicted, then the cross-validation's steps, whose
  // most is known once the runs' profiles are.
  StatusLine status(err, "clustersim validate", options.status);
  CountMeter predicted(status, static_cast<int64_t>(runs.size()), "runs predicted");
  int64_t steps = 0;
  StepDone step_done;
  if (!status.quiet()) step_done = [&] { predicted.update(++steps); };
  std::vector<Row> rows;
  for (TrainingRun& run : runs) {
    Row row{&run,
            predict_run(run, std::nullopt, step_done),
            0,
            std::nullopt,
            std::nullopt,
            std::nullopt,
            ""};
    set_measured_throughput(run, row.prediction);
    row.error = row.prediction.tokens_per_s_per_gpu / run.tokens_per_s_per_gpu - 1;
    if (run.memory_gib) row.memory_error = row.prediction.memory_gib / *run.memory_gib - 1;
    row.label = fitted_ids(row.prediction).contains(run.id) ? "fitted" : "held out";
    rows.push_back(std::move(row));
  }
  predicted.finish(steps);
  const bool cv = options.folds > 1;
  if (cv) {
    std::vector<std::string> paths;
    for (const Row& r : rows) paths.push_back(r.prediction.stack_path);
    CountMeter meter(status, cross_validation_steps_at_most(paths, options.folds), "steps",
                     /*at_most=*/true, "cross-validation ");
    steps = 0;
    StepDone cv_step_done;
    if (!status.quiet()) cv_step_done = [&] { meter.update(++steps); };
    const std::vector<std::optional<CrossValidated>> cvs =
        cross_validate_runs(runs, paths, options.folds, cv_step_done);
    meter.finish(steps);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!cvs[i]) continue;
      rows[i].cv_error = cvs[i]->error;
      rows[i].cv_efficiency = cvs[i]->efficiency;
    }
  }

  out << "# clustersim validate: training runs";
  for (const std::string& f : files) out << " " << f;
  out << "\n";
  if (!options.overrides.empty()) {
    out << "# every run with";
    for (const std::string& o : options.overrides) out << " --set " << o;
    out << " (before its own overrides)\n";
  }
  out << "# error = predicted / measured - 1 of tokens/s per GPU (positive: optimistic); "
         "mem-error the same of peak memory (negative: the model holds less than measured)\n";
  if (std::any_of(runs.begin(), runs.end(),
                  [](const TrainingRun& r) { return r.step_time_s.has_value(); })) {
    out << "# runs given by step_time_s: measured tokens/s per GPU = the step's tokens per GPU / "
           "that time\n";
  }
  out << pad_right("# id", 36) << pad_right("kind", 24)
      << "measured  predicted    error  label     " << (cv ? " cv-error  cv-stack" : "")
      << "  mem-GiB  pred-GiB  mem-error  source\n";
  std::map<std::string, std::vector<double>> by_kind, cv_by_kind, by_stack, cv_by_stack;
  std::map<int64_t, std::pair<std::string, std::vector<double>>> by_size, cv_by_size;
  std::vector<double> all, held_out, cv_all, memory;
  for (const Row& r : rows) {
    out << pad_right(r.run->id, 35) << " " << pad_right(r.prediction.kind, 22)
        << pad(fixed(r.run->tokens_per_s_per_gpu, 1), 10)
        << pad(fixed(r.prediction.tokens_per_s_per_gpu, 1), 11) << pad(percent(r.error), 9) << "  "
        << pad_right(r.label, 8);
    if (cv) {
      out << pad(r.cv_error ? percent(*r.cv_error) : "-", 10)
          << pad(r.cv_efficiency ? fixed(*r.cv_efficiency, 3) : "-", 10);
    }
    out << pad(r.run->memory_gib ? fixed(*r.run->memory_gib, 1) : "-", 9)
        << pad(fixed(r.prediction.memory_gib, 1), 10)
        << pad(r.memory_error ? percent(*r.memory_error) : "-", 11) << "  " << r.run->source
        << "\n";
    const std::string stack = r.prediction.stack.empty() ? "no stack" : r.prediction.stack;
    const auto [band_key, band] = size_band(r.prediction.gpus);
    by_kind[r.prediction.kind].push_back(r.error);
    by_stack[stack].push_back(r.error);
    by_size[band_key].first = band;
    by_size[band_key].second.push_back(r.error);
    all.push_back(r.error);
    if (r.label == "held out") held_out.push_back(r.error);
    if (r.cv_error) {
      cv_by_kind[r.prediction.kind].push_back(*r.cv_error);
      cv_by_stack[stack].push_back(*r.cv_error);
      cv_by_size[band_key].second.push_back(*r.cv_error);
      cv_all.push_back(*r.cv_error);
    }
    if (r.memory_error) memory.push_back(*r.memory_error);
  }
  for (const auto& [kind, errors] : by_kind) {
    out << "# " << kind << ": " << summary(errors);
    if (cv_by_kind.contains(kind)) out << "; cross-validated " << summary(cv_by_kind[kind]);
    out << "\n";
  }
  for (const auto& [stack, errors] : by_stack) {
    out << "# stack " << stack << ": " << summary(errors);
    if (cv_by_stack.contains(stack)) out << "; cross-validated " << summary(cv_by_stack[stack]);
    out << "\n";
  }
  for (const auto& [key, band] : by_size) {
    out << "# " << band.first << ": " << summary(band.second);
    if (cv_by_size.contains(key) && !cv_by_size[key].second.empty()) {
      out << "; cross-validated " << summary(cv_by_size[key].second);
    }
    out << "\n";
  }
  if (!held_out.empty()) out << "# held out: " << summary(held_out) << "\n";
  if (!cv_all.empty()) {
    // Run i is in fold i mod K: with more folds than runs, each run is a
    // fold of its own and the rest are empty.
    const size_t folds = static_cast<size_t>(options.folds);
    out << "# cross-validated ("
        << (folds <= runs.size() ? std::to_string(folds) + " folds"
                                 : std::to_string(runs.size()) + " folds: leave-one-out; " +
                                       std::to_string(folds) + " asked")
        << "): " << summary(cv_all) << "\n";
  }
  if (!memory.empty()) out << "# peak memory: " << summary(memory) << "\n";
  // `run` refuses such a step; a measured run says it fit, so the memory
  // model is what is wrong for it, and its throughput is predicted as if the
  // step fit.
  for (const Row& r : rows) {
    if (r.prediction.capacity_gib > 0 && r.prediction.memory_gib > r.prediction.capacity_gib) {
      out << "# " << r.run->id << ": predicted peak memory " << fixed(r.prediction.memory_gib, 1)
          << " GiB is over the GPU's " << fixed(r.prediction.capacity_gib, 1)
          << " GiB (`run` refuses the step); its tokens/s are predicted as if it fit\n";
    }
  }
  out << summary(all) << "\n";
  if (!options.csv_path.empty()) {
    sim::write_file_atomically(options.csv_path, rows_csv(rows));
    status.note("wrote " + options.csv_path);
  }
  sim::Samples abs;
  for (double e : all) abs.add(std::fabs(e) * 100.0);
  if (options.max_error && abs.percentile(50) > *options.max_error) {
    out << "FAIL: median_abs_error " << fixed(abs.percentile(50), 2) << "% exceeds --max-error "
        << fixed(*options.max_error, 2) << "%\n";
    return 1;
  }
  return 0;
}

}  // namespace clustersim::cli
