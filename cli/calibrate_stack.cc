#include "cli/calibrate_stack.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/fit_summary.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "scenario/stack_fit.h"
#include "scenario/stack_profile.h"
#include "scenario/training_runs.h"
#include "sim/statistics.h"

namespace clustersim::cli {

namespace {

// `target` as the file at `from_dir` names it: relative when both are.
std::string path_from(const std::string& from_dir, const std::string& target) {
  const std::filesystem::path t(target);
  std::error_code ec;
  const std::filesystem::path rel = std::filesystem::relative(
      t, from_dir.empty() ? std::filesystem::path(".") : std::filesystem::path(from_dir), ec);
  return ec || rel.empty() ? std::filesystem::absolute(t).lexically_normal().string()
                           : rel.string();
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea);
  const auto cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb ? ca == cb : a == b;
}

std::string stack_yaml(const std::string& extends, const std::string& name,
                       const std::vector<std::string>& runs_files, const StackFit& fit, int folds) {
  const ErrorSummary in = summarize_errors(fit.in_sample);
  std::string text = "# Fitted by clustersim calibrate on " + fit_date() + " from training runs:\n";
  for (const std::string& f : runs_files) text += "#   " + f + "\n";
  text +=
      "# workload.stack_efficiency: the value at which the median of log(predicted / "
      "measured\n# tokens/s per GPU) over the " +
      std::to_string(fit.fit.fitted_to.size()) +
      " runs naming the stack is zero; in sample median |error| " + fit_percent(in.median) +
      ", max " + fit_percent(in.max);
  if (!fit.cross_validated.empty()) {
    const ErrorSummary cv = summarize_errors(fit.cross_validated);
    text += ";\n# " + std::to_string(folds) + "-fold cross-validated median " +
            fit_percent(cv.median) + ", max " + fit_percent(cv.max);
  }
  text += ".\nextends: " + extends + "\nname: " + name + "\n";
  text += "workload:\n  stack_efficiency: " + fixed(fit.fit.stack_efficiency, 3) + "\n";
  text += "  stack_efficiency_fitted_to: >-\n   ";
  size_t width = 3;
  for (const std::string& id : fit.fit.fitted_to) {
    if (width + id.size() + 1 > 100) {
      text += "\n   ";
      width = 3;
    }
    text += " " + id;
    width += id.size() + 1;
  }
  return text + "\n";
}

}  // namespace

int run_calibrate_stack(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  if (!parsed.has("-o")) throw UsageError("calibrate needs -o FILE for the fitted stack");
  if (parsed.has("--base")) {
    throw UsageError("give --stack (training runs) or --base (measurements), not both");
  }
  int folds = 0;
  if (parsed.has("--folds")) folds = parsed.positive_int_or("--folds", 5, 1000, "a fold count");
  if (folds == 1) throw UsageError("option '--folds' expects at least 2 folds, found 1");
  if (parsed.has("--holdout")) throw UsageError("a stack's fit takes --folds K, not --holdout");
  std::vector<std::string> runs_files;
  for (const std::string& f : parsed.positionals) {
    if (!is_training_runs_file(f)) {
      sim::DiagnosticSink sink;
      sink.add(sim::SourceLocation{f, 0, 0}, "",
               "expected a training runs file (a CSV with the columns id, scenario and "
               "tokens_per_s_per_gpu or step_time_s) for --stack, found another kind of file");
      sink.throw_if_any();
    }
    runs_files.push_back(f);
  }
  if (runs_files.empty()) throw UsageError("calibrate --stack needs a training runs file");
  const std::string value = parsed.value_or("--stack", "");
  const std::string stack_path = resolve_stack_path("./", value);
  if (const sim::ReadOutcome file = sim::check_input_file(stack_path);
      file.failure != sim::ReadFailure::kNone) {
    throw UsageError(
        "option '--stack' expects a shipped stack's bare name or a stack file, found '" + value +
        "' (" + sim::found_phrase(file, stack_path) + ")");
  }
  const std::string output = parsed.value_or("-o", "");
  if (same_file(output, stack_path)) {
    throw UsageError("option '-o' expects a new file, found the stack itself ('" + output +
                     "'): the output extends it");
  }

  StatusLine status(err, "clustersim calibrate", status_mode(parsed, err));
  const auto runs = static_cast<int64_t>(read_training_runs(runs_files).size());
  CountMeter meter(status, stack_fit_steps_at_most(runs, folds), "steps", /*at_most=*/true);
  int64_t steps = 0;
  StepDone step_done;
  if (!status.quiet()) step_done = [&] { meter.update(++steps); };
  const StackFit fit = fit_stack(runs_files, stack_path, folds, step_done);
  meter.finish(steps);

  const std::string stem = std::filesystem::path(stack_path).stem().string();
  const std::string name = parsed.value_or("--name", stem + "_calibrated");
  const std::string out_dir = std::filesystem::path(output).parent_path().string();
  sim::write_file_atomically(
      output, stack_yaml(path_from(out_dir, stack_path), name, runs_files, fit, folds));
  status.note("wrote " + output);

  out << "# clustersim calibrate: stack " << value << " (" << stack_path << ")\n# inputs\n";
  for (const std::string& f : runs_files) {
    out << "  " << pad_right(f, 48) << " training runs\n";
  }
  out << "# " << fit.fit.fitted_to.size() << " runs name the stack, " << fit.other_runs
      << " do not (not used)\n";
  out << "# workload.stack_efficiency " << fixed(fit.fit.stack_efficiency, 3) << " fitted to "
      << fit.fit.fitted_to.size() << " training runs\n";
  out << "# errors (|predicted / measured tokens/s - 1|)\n"
      << pad_right("kind", 14) << pad("cases", 6) << pad("median", 9) << pad("max", 9);
  if (folds > 1) out << pad("cv-cases", 10) << pad("cv-median", 11) << pad("cv-max", 9);
  out << "\n";
  const ErrorSummary in = summarize_errors(fit.in_sample);
  out << pad_right("training runs", 14) << pad(std::to_string(in.cases), 6)
      << pad(fit_percent(in.median), 9) << pad(fit_percent(in.max), 9);
  if (folds > 1) {
    const ErrorSummary cv = summarize_errors(fit.cross_validated);
    out << pad(std::to_string(cv.cases), 10) << pad(fit_percent(cv.median), 11)
        << pad(fit_percent(cv.max), 9);
  }
  out << "\n";
  if (folds > 1) {
    out << "# cross-validation: " << folds << " folds (run i in fold i mod " << folds << ")\n";
  }
  out << "wrote " << output << " (stack " << name << ")\n";
  return 0;
}

}  // namespace clustersim::cli
