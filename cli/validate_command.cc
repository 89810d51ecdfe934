#include "cli/validate_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/collective_fit.h"
#include "calibration/compute_fit.h"
#include "calibration/kineto_trace.h"
#include "calibration/measurement_files.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "cli/validate_kineto.h"
#include "cli/validate_runs.h"
#include "collectives/group_collectives.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "config/text_fields.h"
#include "config/units.h"
#include "scenario/network_scenario.h"
#include "scenario/training_runs.h"
#include "sim/statistics.h"

namespace clustersim::cli {

namespace {

using calibration::AttentionMeasurement;
using calibration::CollectiveCase;
using calibration::GemmMeasurement;

std::optional<double> read_max_error(const ParsedCommand& parsed) {
  if (!parsed.has("--max-error")) return std::nullopt;
  std::string text = parsed.value_or("--max-error", "");
  if (!text.empty() && text.back() == '%') text.pop_back();
  char* end = nullptr;
  const double p = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(p >= 0)) {
    throw UsageError("option '--max-error' expects a percentage such as 5 or 5%, found '" +
                     parsed.value_or("--max-error", "") + "'");
  }
  return p;
}

// |errors| in percent, with a per-kind summary line.
void summarize_kind(const std::string& kind, const std::vector<double>& relative, sim::Samples& all,
                    std::ostream& out) {
  sim::Samples samples;
  for (double e : relative) {
    samples.add(std::fabs(e) * 100.0);
    all.add(std::fabs(e) * 100.0);
  }
  if (samples.size() == 0) return;
  out << "# " << kind << ": cases=" << samples.size()
      << " median_abs_error=" << fixed(samples.percentile(50), 2)
      << "% max_abs_error=" << fixed(samples.percentile(100), 2) << "%\n";
}

std::vector<double> validate_gemm(const std::vector<GemmMeasurement>& rows,
                                  const collectives::GpuProfile& gpu, std::ostream& out) {
  std::vector<double> errors;
  out << "#  gemm            m        n        k  dtype  measured-TFLOP/s  predicted-TFLOP/s   "
         "error  source\n";
  for (const GemmMeasurement& row : rows) {
    const double predicted = calibration::predicted_tflops(row, gpu);
    const double error = row.tflops / predicted - 1;  // of the time
    errors.push_back(error);
    out << pad(std::to_string(row.m), 16) << pad(std::to_string(row.n), 9)
        << pad(std::to_string(row.k), 9) << pad(row.dtype, 7) << pad(fixed(row.tflops, 1), 18)
        << pad(fixed(predicted, 1), 19) << pad(fixed(error * 100.0, 1) + "%", 8) << "  "
        << row.where.to_string() << "\n";
  }
  return errors;
}

std::vector<double> validate_attention(const std::vector<AttentionMeasurement>& rows,
                                       const collectives::GpuProfile& gpu, std::ostream& out) {
  std::vector<double> errors;
  out << "#  attention  pass  causal  head_dim    seq  measured-TFLOP/s  predicted-TFLOP/s   "
         "error  source\n";
  for (const AttentionMeasurement& row : rows) {
    const double predicted = calibration::predicted_tflops(row, gpu);
    const double error = row.tflops / predicted - 1;
    errors.push_back(error);
    out << pad(row.kernel, 12) << pad(row.pass, 9) << pad(row.causal ? "true" : "false", 8)
        << pad(std::to_string(row.head_dim), 10) << pad(std::to_string(row.seq), 7)
        << pad(fixed(row.tflops, 1), 18) << pad(fixed(predicted, 1), 19)
        << pad(fixed(error * 100.0, 1) + "%", 8) << "  " << row.where.to_string() << "\n";
  }
  return errors;
}

std::vector<double> validate_collectives(const std::vector<CollectiveCase>& cases,
                                         const NetworkScenario& net, std::ostream& out) {
  std::vector<double> errors;
  out << "#            op  gpus  per-node         bytes  measured-us  predicted-us   error   algo  "
         "proto  source\n";
  for (const CollectiveCase& c : cases) {
    const collectives::GroupPrediction prediction =
        calibration::predict_case(net.profile, net.cluster, c);
    const double measured_us = c.measured_s * 1e6;
    const double predicted_us = prediction.seconds * 1e6;
    const double error = (predicted_us - measured_us) / measured_us;
    errors.push_back(error);
    out << pad(c.row.op, 15) << pad(std::to_string(c.row.gpus), 6)
        << pad(std::to_string(c.row.gpus_per_node), 10) << pad(std::to_string(c.row.bytes), 14)
        << pad(fixed(measured_us, 2), 13) << pad(fixed(predicted_us, 2), 14)
        << pad(fixed(error * 100.0, 1) + "%", 8)
        << pad(collectives::to_string(prediction.tuned.choice.algorithm), 7)
        << pad(collectives::to_string(prediction.tuned.choice.protocol), 7) << "  "
        << c.row.where.to_string() << "\n";
  }
  return errors;
}

// A CSV given where the scenario goes is a measurements file in the wrong
// place or a runs file whose header was not recognised: say which and show
// the header, instead of the scenario loader's complaint about its content.
void check_not_a_csv(const std::string& first) {
  if (!sim::ascii_lower(first).ends_with(".csv")) return;
  std::string text;
  // One that cannot be read is reported by the scenario loader, as any file.
  if (sim::try_read_file_text(first, text, /*regular_only=*/true).failure !=
      sim::ReadFailure::kNone) {
    return;
  }
  std::string header = "empty";
  for (const sim::TextLine& line : sim::split_lines(text)) {
    const std::string_view t = line.text;
    if (t.find_first_not_of(" \t") == std::string_view::npos || t.front() == '#') continue;
    header = "'" + std::string(t.substr(0, 80)) + (t.size() > 80 ? "...'" : "'");
    break;
  }
  throw UsageError(
      "'" + first +
      "' is a CSV, not a scenario: give the scenario first and its measurements "
      "after it (validate SCENARIO MEASUREMENTS...), or only runs files, whose "
      "header names the columns scenario and tokens_per_s_per_gpu or step_time_s "
      "(comma-separated); its header is " +
      header);
}

}  // namespace

CommandSpec validate_command_spec() {
  return {"validate",
          "Compare predictions with measurements: GEMM, attention, collectives, Kineto traces, "
          "training runs.",
          {"SCENARIO|RUNS", "[MEASUREMENTS...]"},
          {{"--min-bytes", "SIZE", false, "ignore collective rows smaller than SIZE (e.g. 64KiB)"},
           {"--op", "OP", false, "the collective of nccl-tests files whose name does not say"},
           {"--hardware", "PART", false,
            "the `hardware` rows of compute CSVs to compare (default: the profile's "
            "gpu.curves_fitted_to)"},
           {"--attention-kernel", "NAME", false, "the attention kernel's rows (default FA2)"},
           {"--rank", "R", false,
            "the simulated rank a Kineto trace is compared with (default: the rank its "
            "distributedInfo names, else 0)"},
           {"--warmup-steps", "N", false,
            "trace steps to skip (default: the first, when there are several)"},
           {"--folds", "K", false,
            "training runs: also predict each run with a sustained clock fitted without its "
            "fold (K-fold cross-validation)"},
           {"--max-error", "P", false,
            "exit 1 when the median |error| over all cases exceeds P percent (for CI)"},
           {"--csv", "FILE", false,
            "training runs: also write one row per run as CSV (atomically; "
            "scripts/plot_validate.py draws it)"},
           {"--set", "KEY=VALUE", true,
            "override a scenario key (with a runs file: of every run's scenario)"},
           quiet_option()},
          "Files are recognised by content: Kineto traces (torch.profiler JSON), GEMM and\n"
          "attention CSVs (scripts/microbench), collective CSVs or nccl-tests output. Collective\n"
          "rows are predicted on the scenario's cluster for the row's GPU count and GPUs per node\n"
          "(the first nodes), with the tuner's choice; rows with only a bus bandwidth are\n"
          "compared through the time it implies. GEMM and attention rows are predicted with the\n"
          "profile's curves at the nominal clock. A Kineto trace is compared, per kernel class\n"
          "and for the step, with the scenario's simulated step of the same rank. The error is\n"
          "that of the time: predicted / measured - 1.\n"
          "Training runs: `validate RUNS.csv...` (every argument a runs file: id, scenario,\n"
          "overrides, tokens_per_s_per_gpu or step_time_s, memory_gib, source; docs/accuracy.md)\n"
          "simulates each run's scenario and compares tokens/s per GPU (error = predicted /\n"
          "measured - 1, positive when optimistic; a run given by its step time is measured as\n"
          "its step's tokens per GPU over that time) and peak memory, and summarises the errors\n"
          "by kind, by software stack and by job size; rows their stack's efficiency was\n"
          "fitted to (workload.stack_efficiency_fitted_to) are labelled fitted, the rest held\n"
          "out. --folds K cross-validates within each stack.\n"
          "--set applies to every run, before its own overrides: `--set stack=/abs/mine.yaml`\n"
          "checks the runs against a stack `calibrate --stack` fitted (a relative path is\n"
          "resolved against each run's scenario folder).\n"
          "On stderr: while the steps are simulated (training runs, Kineto traces) the\n"
          "percentage done and an ETA (of at most so many steps for training runs: a fit that\n"
          "stops at a bound simulates fewer), redrawn on a terminal, else a line every 5 s,\n"
          "and 'wrote FILE' for the CSV; --quiet prints none of these."};
}

int run_validate_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const int64_t min_bytes = parsed.bytes_or("--min-bytes", 0);
  const std::optional<double> max_error = read_max_error(parsed);
  if (is_training_runs_file(parsed.positionals[0])) {
    RunsValidationOptions options;
    options.max_error = max_error;
    if (parsed.has("--csv")) {
      options.csv_path = parsed.value_or("--csv", "");
      if (options.csv_path.empty()) throw UsageError("option '--csv' expects a FILE, found ''");
    }
    if (parsed.has("--folds")) {
      options.folds = static_cast<int>(parsed.positive_int_or("--folds", 5, 1000, "a fold count"));
      if (options.folds == 1)
        throw UsageError("option '--folds' expects at least 2 folds, found 1");
    }
    options.overrides = parsed.values("--set");
    options.status = status_mode(parsed, err);
    for (const std::string& f : parsed.positionals) {
      if (!is_training_runs_file(f)) {
        throw UsageError("'" + f + "': every argument after a runs file must be a runs file " +
                         "(a CSV with a scenario column and tokens_per_s_per_gpu or step_time_s)");
      }
    }
    return run_validate_runs(parsed.positionals, options, out, err);
  }
  check_not_a_csv(parsed.positionals[0]);
  for (const char* runs_only : {"--folds", "--csv"}) {
    if (parsed.has(runs_only)) {
      throw UsageError(std::string("option '") + runs_only +
                       "' applies to training runs only (validate RUNS.csv...), not to '" +
                       parsed.positionals[0] + "'");
    }
  }
  // The scenario first: a missing or bad one is the first thing to fix.
  const NetworkScenario net = load_network_scenario(parsed.positionals[0], parsed.values("--set"));
  if (parsed.positionals.size() < 2) {
    throw UsageError(
        "expected MEASUREMENTS... after the scenario, found the end of the command line");
  }
  const std::vector<std::string> files(parsed.positionals.begin() + 1, parsed.positionals.end());
  const calibration::MeasurementSet set =
      calibration::read_measurement_files(files, parsed.value_or("--op", ""));

  const std::string hardware = parsed.value_or("--hardware", net.profile.gpu.curves_fitted_to);
  const std::string kernel = parsed.value_or("--attention-kernel", "FA2");
  std::vector<GemmMeasurement> gemm;
  int other_gemm = 0;
  for (const GemmMeasurement& row : set.gemm) {
    if (row.hardware == hardware && calibration::is_16_bit_dtype(row.dtype)) {
      gemm.push_back(row);
    } else {
      ++other_gemm;
    }
  }
  std::vector<AttentionMeasurement> attention;
  int other_attention = 0;
  for (const AttentionMeasurement& row : set.attention) {
    if (row.hardware == hardware && row.kernel == kernel) {
      attention.push_back(row);
    } else {
      ++other_attention;
    }
  }
  // Rows that recorded their SM clock are compared at the clock behind the
  // profile's peak (gpu.peak_clock_mhz), as calibrate fits them.
  calibration::at_peak_clock(gemm, net.profile.gpu.peak_clock_mhz);
  calibration::at_peak_clock(attention, net.profile.gpu.peak_clock_mhz);
  calibration::check_below_peak(gemm, net.profile.gpu.peak_flops_per_s / 1e12);
  int skipped = 0;
  const std::vector<CollectiveCase> cases = calibration::collective_cases(
      set.collectives, net.cluster, collectives::read_forced_choice(net.values), min_bytes,
      &skipped);
  calibration::check_forced_choices(cases, net.profile, net.values);
  KinetoValidationOptions kineto_options;
  if (parsed.has("--rank")) kineto_options.rank = parsed.non_negative_int_or("--rank", 0, "a rank");
  if (parsed.has("--warmup-steps")) {
    kineto_options.warmup_steps =
        static_cast<int>(parsed.non_negative_int_or("--warmup-steps", 0, "a step count"));
  }
  if (gemm.empty() && attention.empty() && cases.empty() && set.kineto_traces.empty()) {
    sim::DiagnosticSink none;
    none.add(sim::SourceLocation{parsed.positionals[1], 0, 0}, "",
             "no measurement rows to compare" +
                 (min_bytes > 0 ? " at or above --min-bytes " + std::to_string(min_bytes)
                                : std::string()) +
                 (other_gemm + other_attention > 0
                      ? " (compute rows of other hardware, dtypes or kernels than " + hardware +
                            " fp16/bf16, " + kernel + " are not compared)"
                      : std::string()));
    none.throw_if_any();
  }

  out << "# clustersim validate: " << parsed.positionals[0] << " (hardware profile "
      << net.profile.name << ")\n";
  out << "# error = predicted / measured - 1 of the time (negative: the model is faster than "
         "measured)\n";
  sim::Samples errors;
  if (!gemm.empty()) {
    summarize_kind("gemm", validate_gemm(gemm, net.profile.gpu, out), errors, out);
  }
  if (!attention.empty()) {
    summarize_kind("attention", validate_attention(attention, net.profile.gpu, out), errors, out);
  }
  if (other_gemm + other_attention > 0) {
    out << "# not compared: " << other_gemm << " GEMM and " << other_attention
        << " attention row(s) of other hardware, dtypes or kernels than " << hardware
        << " fp16/bf16, " << kernel << " (--hardware, --attention-kernel)\n";
  }
  if (!cases.empty()) {
    summarize_kind("collectives", validate_collectives(cases, net, out), errors, out);
  }
  if (skipped > 0) {
    out << "# skipped " << skipped << " row(s) with neither a time nor a non-zero busbw\n";
  }
  if (!set.kineto_traces.empty()) {
    // Every trace read and checked first, then one simulation with every
    // rank they are compared with traced.
    std::vector<calibration::KinetoTrace> traces;
    std::set<int64_t> ranks;
    const int64_t world = net.cluster.gpu_count();
    for (const std::string& path : set.kineto_traces) {
      traces.push_back(calibration::read_kineto_trace(path));
      check_trace_world_size(traces.back(), world);
      ranks.insert(compared_rank(traces.back(), kineto_options));
    }
    StatusLine status(err, "clustersim validate", status_mode(parsed, err));
    EngineMeter meter(status, "step ");
    const workloads::StepResult simulated = simulate_traced_step(
        net, std::vector<int64_t>(ranks.begin(), ranks.end()), meter.callback());
    meter.finish(simulated.events);
    std::vector<double> kineto;
    for (const calibration::KinetoTrace& trace : traces) {
      const std::vector<double> e = validate_kineto_trace(simulated, trace, out, kineto_options);
      kineto.insert(kineto.end(), e.begin(), e.end());
    }
    summarize_kind("kineto", kineto, errors, out);
  }
  out << "cases=" << errors.size() << " median_abs_error=" << fixed(errors.percentile(50), 2)
      << "% max_abs_error=" << fixed(errors.percentile(100), 2) << "%\n";
  if (max_error && errors.percentile(50) > *max_error) {
    out << "FAIL: median_abs_error " << fixed(errors.percentile(50), 2) << "% exceeds --max-error "
        << fixed(*max_error, 2) << "%\n";
    return 1;
  }
  return 0;
}

}  // namespace clustersim::cli
