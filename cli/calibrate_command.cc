#include "cli/calibrate_command.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibration/collective_fit.h"
#include "calibration/compute_fit.h"
#include "calibration/measurement_files.h"
#include "calibration/profile_writer.h"
#include "cli/calibrate_stack.h"
#include "cli/fit_summary.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "config/units.h"
#include "hardware/hardware_profile.h"
#include "scenario/network_scenario.h"
#include "scenario/training_runs.h"
#include "sim/statistics.h"

namespace clustersim::cli {

namespace {

using calibration::AttentionMeasurement;
using calibration::CollectiveCase;
using calibration::GemmMeasurement;
using collectives::HardwareProfile;

// The base: a scenario (its hardware profile and, for collectives, its
// cluster) or a hardware profile alone.
struct Base {
  HardwareProfile profile;
  std::string profile_path;
  std::optional<NetworkScenario> scenario;
  collectives::ForcedChoice forced;
};

bool is_scenario(const std::string& path) {
  try {
    const YAML::Node root = YAML::LoadFile(path);
    return root.IsMap() && root["cluster"].IsDefined();
  } catch (const YAML::Exception&) {
    return false;  // the profile loader reports the problem with its line
  }
}

Base load_base(const std::string& path, const std::vector<std::string>& overrides) {
  Base base;
  if (const sim::ReadOutcome file = sim::check_input_file(path);
      file.failure != sim::ReadFailure::kNone) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{path, 0, 0}, "",
             "expected a hardware profile or a scenario as --base, found " +
                 sim::found_phrase(file, path) + shipped_profile_hint(path));
    sink.throw_if_any();
  }
  if (is_scenario(path)) {
    base.scenario.emplace(load_network_scenario(path, overrides));
    base.profile = base.scenario->profile;
    base.profile_path = base.profile.source_file;
    base.forced = collectives::read_forced_choice(base.scenario->values);
  } else {
    if (!overrides.empty()) throw UsageError("--set needs a scenario as --base, not a profile");
    base.profile = collectives::load_hardware_profile(path);
    base.profile_path = path;
  }
  return base;
}

// Through the profile loader, not the bare YAML: a profile that extends
// another and says no description of its own has its base's.
std::string description_of(const std::string& profile_path) {
  try {
    return sim::load_scenario_file(profile_path, collectives::hardware_profile_schema())
        .get_string("description");
  } catch (const sim::ConfigError&) {
    return "";
  }
}

// Which cases a split holds out. --folds K: case i in fold i mod K.
// --holdout F: one split; case i is held out when floor((i + 1) F) >
// floor(i F), which spreads round(F n) held-out cases evenly.
struct Split {
  int folds = 0;       // 0: no cross-validation
  double holdout = 0;  // fraction, when folds == 1
  bool held_out(size_t i, int fold) const {
    if (folds == 1) {
      return std::floor(static_cast<double>(i + 1) * holdout) >
             std::floor(static_cast<double>(i) * holdout);
    }
    return static_cast<int>(i % static_cast<size_t>(folds)) == fold;
  }
};

// Cross-validated relative errors of one kind of case: for each fold, fit
// on the others and predict the fold's cases.
template <class Case, class Model>
std::vector<double> cross_validate(const std::vector<Case>& cases, const Split& split,
                                   const std::function<Model(const std::vector<Case>&)>& fit,
                                   const std::function<double(const Case&, const Model&)>& error) {
  std::vector<double> errors;
  for (int fold = 0; fold < split.folds; ++fold) {
    std::vector<Case> train, test;
    for (size_t i = 0; i < cases.size(); ++i) {
      (split.held_out(i, fold) ? test : train).push_back(cases[i]);
    }
    if (train.empty() || test.empty()) continue;
    const Model model = fit(train);
    for (const Case& c : test) errors.push_back(error(c, model));
  }
  return errors;
}

Split read_split(const ParsedCommand& parsed) {
  Split split;
  if (parsed.has("--folds") && parsed.has("--holdout")) {
    throw UsageError("give --folds or --holdout, not both");
  }
  if (parsed.has("--folds"))
    split.folds = parsed.positive_int_or("--folds", 5, 1000, "a fold count");
  if (split.folds == 1) throw UsageError("option '--folds' expects at least 2 folds, found 1");
  if (parsed.has("--holdout")) {
    const std::string text = parsed.value_or("--holdout", "");
    char* end = nullptr;
    const double f = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(f > 0 && f < 1)) {
      throw UsageError("option '--holdout' expects a fraction in (0, 1) such as 0.2, found '" +
                       text + "'");
    }
    split.folds = 1;
    split.holdout = f;
  }
  return split;
}

// "nothing to fit", at the first measurement file, naming what the files
// hold instead (the hardware labels and attention kernels of their compute
// rows), so that the --hardware or --attention-kernel to give is in view.
void no_rows(const std::string& what, const std::vector<std::string>& files,
             const calibration::MeasurementSet& set) {
  std::set<std::string> labels, kernels;
  for (const GemmMeasurement& row : set.gemm) labels.insert(row.hardware + " " + row.dtype);
  for (const AttentionMeasurement& row : set.attention) {
    labels.insert(row.hardware);
    kernels.insert(row.kernel);
  }
  const auto list = [](const std::set<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "'" : ", '") + item + "'";
    return text;
  };
  std::string found = "found none";
  if (!labels.empty()) {
    found = "found compute rows of " + list(labels) +
            (kernels.empty() ? std::string() : " (attention kernels " + list(kernels) + ")") +
            ": --hardware and --attention-kernel choose them";
  } else if (!set.collectives.empty()) {
    found = "found only collective rows below the size limit (--min-bytes)";
  } else if (!set.kineto_traces.empty()) {
    found =
        "found only Kineto traces, which `validate SCENARIO TRACE` compares with the "
        "simulated step (no constant is fitted from them)";
  }
  sim::DiagnosticSink sink;
  sink.add(sim::SourceLocation{files.empty() ? std::string() : files.front(), 0, 0}, "",
           what + ", " + found);
  sink.throw_if_any();
}

}  // namespace

CommandSpec calibrate_command_spec() {
  return {
      "calibrate",
      "Fit a hardware profile to GEMM, attention and collective measurements, or a software "
      "stack's efficiency to training runs.",
      {"MEASUREMENTS..."},
      {{"--base", "PROFILE|SCENARIO", false,
        "the profile to start from (required for measurements); a scenario also gives the "
        "cluster the collectives ran on"},
       {"--stack", "STACK", false,
        "with training runs: the stack whose efficiency to fit (a shipped stack's bare name "
        "or a stack file); the runs whose scenario names it are used"},
       {"-o", "FILE", false, "write the fitted profile (or stack) to FILE, atomically (required)"},
       {"--name", "NAME", false,
        "the new profile's or stack's name (default: the base's + _calibrated)"},
       {"--hardware", "PART", false,
        "the `hardware` rows of compute CSVs to fit (default: the base's "
        "gpu.curves_fitted_to)"},
       {"--attention-kernel", "NAME", false, "the attention kernel's rows (default FA2)"},
       {"--min-bytes", "SIZE", false, "ignore collective rows below SIZE (default 64KiB)"},
       {"--op", "OP", false, "the collective of nccl-tests files whose name does not say"},
       {"--folds", "K", false, "report K-fold cross-validated errors"},
       {"--holdout", "F", false, "report errors on a held-out fraction F of the cases"},
       {"--set", "KEY=VALUE", true, "override a key of a scenario --base"},
       quiet_option()},
      "Measurements: GEMM and attention CSVs (scripts/microbench/gemm.py, attention.py),\n"
      "collective CSVs or nccl-tests output (scripts/microbench/collectives.py). Every fit\n"
      "is least squares on the relative error of the predicted time, robust to outliers\n"
      "(Tukey) and bounded by physics (efficiency <= 1, busbw <= link rate). Constants the\n"
      "measurements do not inform keep the base's value. Collective rows below 64 KiB are\n"
      "left out by default: there NCCL's time grows with size inside the latency-bound\n"
      "range, which one latency per algorithm and protocol does not describe.\n"
      "Training runs (a runs CSV: id, scenario, overrides, tokens_per_s_per_gpu or\n"
      "step_time_s; see `validate --help`) with --stack STACK fit the stack's\n"
      "workload.stack_efficiency to the runs whose scenario names that stack (the value at\n"
      "which their median log error is zero) and write a stack file that extends STACK with\n"
      "it and their ids (workload.stack_efficiency_fitted_to, which `validate` labels\n"
      "fitted); docs/stacks.md. A part's clock is measured, never fitted to training runs.\n"
      "Set SOURCE_DATE_EPOCH for a reproducible date in the output.\n"
      "On stderr: while training runs' steps are simulated, the steps done of at most so\n"
      "many with a percentage and an ETA (redrawn on a terminal, else a line every 5 s),\n"
      "and 'wrote FILE' for the profile or stack; --quiet prints none of these."};
}

int run_calibrate_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  if (parsed.has("--stack")) return run_calibrate_stack(parsed, out, err);
  if (!parsed.has("--base")) {
    throw UsageError(
        "calibrate needs --base PROFILE|SCENARIO (measurements) or --stack STACK (training runs)");
  }
  if (!parsed.has("-o")) throw UsageError("calibrate needs -o FILE for the fitted profile");
  const Split split = read_split(parsed);
  const int64_t min_bytes = parsed.bytes_or("--min-bytes", 65536);
  const std::string base_path = parsed.value_or("--base", "");
  const Base base = load_base(base_path, parsed.values("--set"));
  std::vector<std::string> runs_files, measurement_files;
  for (const std::string& f : parsed.positionals) {
    (is_training_runs_file(f) ? runs_files : measurement_files).push_back(f);
  }
  if (!runs_files.empty()) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{runs_files.front(), 0, 0}, "",
             "expected measurements for a hardware profile (--base), found training runs: they "
             "fit a software stack's efficiency, given as --stack STACK (a part's clock is "
             "measured, not fitted to training runs; docs/stacks.md)");
    sink.throw_if_any();
  }
  const calibration::MeasurementSet set =
      measurement_files.empty()
          ? calibration::MeasurementSet{}
          : calibration::read_measurement_files(measurement_files, parsed.value_or("--op", ""));

  const std::string hardware = parsed.value_or("--hardware", base.profile.gpu.curves_fitted_to);
  const std::string kernel = parsed.value_or("--attention-kernel", "FA2");
  std::vector<GemmMeasurement> gemm;
  for (const GemmMeasurement& row : set.gemm) {
    if (row.hardware == hardware && calibration::is_16_bit_dtype(row.dtype)) gemm.push_back(row);
  }
  std::vector<AttentionMeasurement> attention;
  for (const AttentionMeasurement& row : set.attention) {
    if (row.hardware == hardware && row.kernel == kernel) attention.push_back(row);
  }
  const double peak_clock = base.profile.gpu.peak_clock_mhz;
  const int at_clock = calibration::at_peak_clock(gemm, peak_clock) +
                       calibration::at_peak_clock(attention, peak_clock);
  calibration::check_below_peak(gemm, base.profile.gpu.peak_flops_per_s / 1e12);
  const std::string clock_note =
      at_clock > 0 ? "; " + std::to_string(at_clock) + " of them scaled from their SM clock to " +
                         fixed(peak_clock, 0) + " MHz (gpu.peak_clock_mhz)"
                   : std::string();
  std::vector<CollectiveCase> cases;
  if (!set.collectives.empty()) {
    if (!base.scenario) {
      sim::DiagnosticSink sink;
      sink.add({base_path, 0, 0}, "",
               "collective measurements need the cluster they ran on: expected a scenario as "
               "--base (its `cluster` and `hardware`), found a hardware profile");
      sink.throw_if_any();
    }
    cases = calibration::collective_cases(set.collectives, base.scenario->cluster, base.forced,
                                          min_bytes);
    calibration::check_forced_choices(cases, base.profile, base.scenario->values);
  }
  if (gemm.empty() && attention.empty() && cases.empty()) {
    no_rows("no measurement rows to fit: expected GEMM or attention rows of hardware '" + hardware +
                "' (attention kernel " + kernel + ") or collective rows at or above " +
                std::to_string(min_bytes) + " bytes",
            measurement_files, set);
  }

  // Collective constants first (the fit starts from the base profile), then
  // the compute curves on top.
  HardwareProfile fitted = base.profile;
  std::vector<calibration::FitGroupReport> groups;
  std::map<std::string, std::string> collective_notes;
  if (!cases.empty()) {
    calibration::CollectiveFit fit =
        calibration::fit_collectives(cases, base.scenario->cluster, base.profile);
    fitted = std::move(fit.profile);
    collective_notes = std::move(fit.key_notes);
    groups = std::move(fit.groups);
  }
  fitted.name = parsed.value_or("--name", base.profile.name + "_calibrated");
  if (!gemm.empty()) {
    const calibration::GemmCurveFit fit = calibration::fit_gemm_curve(gemm, base.profile.gpu);
    fitted.gpu.gemm = fit.curve;
    groups.insert(groups.begin(), fit.report);
  }
  if (!attention.empty()) {
    const calibration::AttentionCurveFit fit =
        calibration::fit_attention_curves(attention, base.profile.gpu);
    fitted.gpu.attention_fwd = fit.fwd;
    fitted.gpu.attention_bwd = fit.bwd;
    groups.insert(groups.begin() + (gemm.empty() ? 0 : 1), fit.report);
  }
  calibration::ProfileProvenance provenance;
  provenance.description = description_of(base.profile_path);
  StatusLine status(err, "clustersim calibrate", status_mode(parsed, err));
  if (!gemm.empty() || !attention.empty()) fitted.gpu.curves_fitted_to = hardware;

  // In-sample errors by kind, with the profile as written.
  struct Kind {
    std::string name;
    std::vector<double> in_sample;
    std::vector<double> cross_validated;
  };
  std::vector<Kind> kinds;
  if (!gemm.empty()) {
    Kind k{"gemm", {}, {}};
    for (const GemmMeasurement& row : gemm) {
      k.in_sample.push_back(row.tflops / calibration::predicted_tflops(row, fitted.gpu) - 1);
    }
    if (split.folds > 0) {
      k.cross_validated = cross_validate<GemmMeasurement, collectives::GpuProfile>(
          gemm, split,
          [&](const std::vector<GemmMeasurement>& train) {
            collectives::GpuProfile gpu = base.profile.gpu;
            gpu.gemm = calibration::fit_gemm_curve(train, base.profile.gpu).curve;
            return gpu;
          },
          [](const GemmMeasurement& row, const collectives::GpuProfile& gpu) {
            return row.tflops / calibration::predicted_tflops(row, gpu) - 1;
          });
    }
    kinds.push_back(std::move(k));
  }
  if (!attention.empty()) {
    Kind k{"attention", {}, {}};
    for (const AttentionMeasurement& row : attention) {
      k.in_sample.push_back(row.tflops / calibration::predicted_tflops(row, fitted.gpu) - 1);
    }
    if (split.folds > 0) {
      k.cross_validated = cross_validate<AttentionMeasurement, collectives::GpuProfile>(
          attention, split,
          [&](const std::vector<AttentionMeasurement>& train) {
            collectives::GpuProfile gpu = base.profile.gpu;
            const calibration::AttentionCurveFit fit =
                calibration::fit_attention_curves(train, base.profile.gpu);
            gpu.attention_fwd = fit.fwd;
            gpu.attention_bwd = fit.bwd;
            return gpu;
          },
          [](const AttentionMeasurement& row, const collectives::GpuProfile& gpu) {
            return row.tflops / calibration::predicted_tflops(row, gpu) - 1;
          });
    }
    kinds.push_back(std::move(k));
  }
  if (!cases.empty()) {
    const topology::Cluster& cluster = base.scenario->cluster;
    Kind k{"collectives", {}, {}};
    for (const CollectiveCase& c : cases) {
      k.in_sample.push_back(calibration::predict_case(fitted, cluster, c).seconds / c.measured_s -
                            1);
    }
    if (split.folds > 0) {
      k.cross_validated = cross_validate<CollectiveCase, HardwareProfile>(
          cases, split,
          [&](const std::vector<CollectiveCase>& train) {
            return calibration::fit_collectives(train, cluster, base.profile).profile;
          },
          [&](const CollectiveCase& c, const HardwareProfile& profile) {
            return calibration::predict_case(profile, cluster, c).seconds / c.measured_s - 1;
          });
    }
    kinds.push_back(std::move(k));
  }

  // Provenance: what went in, and how well each group fits.
  provenance.header_lines.push_back("Written by clustersim calibrate on " + fit_date() + " (UTC).");
  provenance.header_lines.push_back("Base: " + base_path + " (profile " + base.profile.name +
                                    "); constants not fitted below keep its values.");
  provenance.header_lines.push_back("Inputs:");
  for (const calibration::MeasurementFile& f : set.files) {
    provenance.header_lines.push_back("  " + f.path + " (" +
                                      std::string(calibration::measurement_kind_name(f.kind)) +
                                      (f.kind == calibration::MeasurementKind::kKinetoTrace
                                           ? ", not used by the fit"
                                           : ", " + std::to_string(f.rows) + " rows") +
                                      ")");
  }
  provenance.header_lines.push_back(
      "Used: " + std::to_string(gemm.size()) + " GEMM rows (" + hardware + ", fp16/bf16), " +
      std::to_string(attention.size()) + " attention rows (" + kernel + "), " +
      std::to_string(cases.size()) + " collective rows >= " + std::to_string(min_bytes) + " B" +
      clock_note + ".");
  provenance.header_lines.push_back(
      "Fit residuals (relative error of the predicted time, inliers, per group):");
  for (const calibration::FitGroupReport& g : groups) {
    provenance.header_lines.push_back("  " + g.name + ": " + std::to_string(g.cases) + " cases, " +
                                      std::to_string(g.outliers.size()) + " outliers, rms " +
                                      fit_percent(g.rms_relative_error));
  }
  for (const Kind& k : kinds) {
    const ErrorSummary s = summarize_errors(k.in_sample);
    std::string line =
        "  " + k.name + ": median |error| " + fit_percent(s.median) + ", max " + fit_percent(s.max);
    if (!k.cross_validated.empty()) {
      const ErrorSummary cv = summarize_errors(k.cross_validated);
      line += "; cross-validated median " + fit_percent(cv.median) + ", max " + fit_percent(cv.max);
    }
    provenance.header_lines.push_back(line);
  }
  const auto comment_of = [](const calibration::FitGroupReport& g) {
    std::string text = "Fitted by clustersim calibrate: " + std::to_string(g.cases) +
                       " cases, rms " + fit_percent(g.rms_relative_error) + ".";
    for (const std::string& note : g.notes) text += "\n" + note;
    return text;
  };
  for (const calibration::FitGroupReport& g : groups) {
    if (g.name == "gpu.gemm") provenance.key_comments["gpu.gemm"] = comment_of(g);
    if (g.name == "gpu.attention") {
      provenance.key_comments["gpu.attention_fwd"] = comment_of(g);
      provenance.key_comments["gpu.attention_bwd"] = "Fitted together with attention_fwd.";
    }
  }
  for (const auto& [key, note] : collective_notes) {
    provenance.key_comments[key] = "Fitted by clustersim calibrate: " + note + ".";
  }
  const std::string output = parsed.value_or("-o", "");
  sim::write_file_atomically(output, calibration::hardware_profile_yaml(fitted, provenance));
  status.note("wrote " + output);

  // The report.
  out << "# clustersim calibrate: base " << base_path << " (profile " << base.profile.name
      << ")\n# inputs\n";
  for (const calibration::MeasurementFile& f : set.files) {
    out << "  " << pad_right(f.path, 48) << " "
        << pad_right(std::string(calibration::measurement_kind_name(f.kind)), 13)
        << (f.kind == calibration::MeasurementKind::kKinetoTrace
                ? std::string("not used by the fit (see validate)")
                : std::to_string(f.rows) + " rows")
        << "\n";
  }
  out << "# used: " << gemm.size() << " GEMM rows (" << hardware << ", fp16/bf16), "
      << attention.size() << " attention rows (" << kernel << "), " << cases.size()
      << " collective rows >= " << min_bytes << " B" << clock_note << "\n";
  // A training-runs-only calibration fits no curve or collective group.
  if (!groups.empty()) {
    out << "# fit groups (relative error of the predicted time)\n"
        << pad_right("group", 36) << pad("cases", 6) << pad("outliers", 10) << pad("rms", 9)
        << "\n";
  }
  for (const calibration::FitGroupReport& g : groups) {
    out << pad_right(g.name, 36) << pad(std::to_string(g.cases), 6)
        << pad(std::to_string(g.outliers.size()), 10) << pad(fit_percent(g.rms_relative_error), 9)
        << "\n";
    for (const std::string& note : g.notes) out << "    " << note << "\n";
  }
  out << "# errors by kind (|predicted / measured time - 1|)\n"
      << pad_right("kind", 14) << pad("cases", 6) << pad("median", 9) << pad("max", 9);
  if (split.folds > 0) {
    out << pad(split.folds == 1 ? "holdout" : "cv-cases", 10) << pad("cv-median", 11)
        << pad("cv-max", 9);
  }
  out << "\n";
  for (const Kind& k : kinds) {
    const ErrorSummary s = summarize_errors(k.in_sample);
    out << pad_right(k.name, 14) << pad(std::to_string(s.cases), 6) << pad(fit_percent(s.median), 9)
        << pad(fit_percent(s.max), 9);
    if (split.folds > 0) {
      const ErrorSummary cv = summarize_errors(k.cross_validated);
      out << pad(std::to_string(cv.cases), 10) << pad(fit_percent(cv.median), 11)
          << pad(fit_percent(cv.max), 9);
    }
    out << "\n";
  }
  if (split.folds > 1) {
    out << "# cross-validation: " << split.folds << " folds (case i in fold i mod " << split.folds
        << ")\n";
  } else if (split.folds == 1) {
    out << "# holdout: " << fixed(split.holdout * 100, 0) << "% of the cases, evenly spread\n";
  }
  out << "wrote " << output << " (profile " << fitted.name << ")\n";
  return 0;
}

}  // namespace clustersim::cli
