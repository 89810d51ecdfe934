#include "cli/campaign_command.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_schema.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "cli/work_guard.h"
#include "config/atomic_file.h"
#include "config/json_writer.h"
#include "config/text_fields.h"
#include "failures/campaign.h"
#include "failures/campaign_config.h"
#include "failures/checkpoint_interval.h"
#include "failures/failure_config.h"
#include "failures/recovery_policy.h"
#include "scenario/campaign_inputs.h"
#include "scenario/network_scenario.h"
#include "scenario/step_config.h"
#include "topology/cluster_config.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

namespace {

using failures::CampaignAccount;
using failures::CampaignResult;
using failures::CampaignSpec;
using failures::RecoveryPolicy;
using sim::SimTime;

constexpr size_t kLabel = 32;

std::string row(std::string_view label, const std::string& value) {
  return labelled_row(label, value, kLabel);
}

std::string hours_text(double seconds) {
  return seconds >= 86400 * 2 ? fixed(seconds / 86400, 2) + " d" : fixed(seconds / 3600, 2) + " h";
}

// What one recovery costs, piece by piece, in the order paid: the full
// restart, and under ft_hsdp the healthy groups' stall and the failed group's
// way back.
std::string pieces_table(const RecoveryPolicy& policy) {
  const auto block = [](std::string_view title, const std::vector<failures::CostPiece>& pieces) {
    sim::SimTime sum;
    for (const failures::CostPiece& piece : pieces) sum += piece.time;
    std::string text = row("  " + std::string(title), pad(fixed(sum.to_seconds(), 1), 12) + " s");
    for (const failures::CostPiece& piece : pieces) {
      text += row("    " + std::string(piece.name), pad(fixed(piece.time.to_seconds(), 1), 10) + " s");
    }
    return text;
  };
  std::string text = block("restart", failures::restart_pieces(policy));
  if (policy.kind == failures::RecoveryPolicyKind::kFtHsdp) {
    text += block("ft stall", failures::ft_stall_pieces(policy));
    text += block("replica back", failures::replica_recovery_pieces(policy));
  }
  return text;
}

void pieces_json(sim::JsonWriter& json, std::string_view key,
                 const std::vector<failures::CostPiece>& pieces) {
  json.key(key).begin_object();
  for (const failures::CostPiece& piece : pieces) {
    json.key(piece.name).number(piece.time.to_seconds());
  }
  json.end_object();
}

std::string summary(const CampaignInputs& in, const CampaignResult& r) {
  const CampaignSpec& spec = in.spec;
  std::string text = "# clustersim campaign: " + in.scenario_path + "\n";
  text += row("job", std::to_string(in.job_gpus) + " GPUs, " + std::to_string(in.replica_groups) +
                         " replica group" + (in.replica_groups == 1 ? "" : "s"));
  text += row("recovery policy",
              std::string(failures::recovery_policy_name(in.policy.kind)) + ", restart " +
                  fixed(failures::restart_cost(in.policy).to_seconds(), 0) + " s" +
                  (in.policy.kind == failures::RecoveryPolicyKind::kFtHsdp
                       ? ", stall " + fixed(failures::ft_stall(in.policy).to_seconds(), 0) +
                             " s, replica back after " +
                             fixed(failures::replica_recovery(in.policy).to_seconds(), 0) + " s"
                       : ""));
  text += pieces_table(in.policy);
  text += row("checkpoints", "every " + fixed(in.policy.checkpoint_interval.to_seconds() / 60, 1) +
                                 " min, blocking " +
                                 fixed(in.policy.checkpoint_save_blocking.to_seconds(), 1) + " s" +
                                 (in.policy.async_checkpoint ? " (async)" : ""));
  std::string step = fixed(spec.step_time.to_seconds(), 3) + " s";
  if (in.step_simulated) step += " (simulated)";
  if (in.live) {
    // The steps with k of R groups the trials ran with, simulated when first needed.
    for (const LiveThroughput::Simulated& k : in.live->simulated()) {
      step += "; " + (k.step_s > 0 ? fixed(k.step_s, 3) + " s" : "k/R (" + k.note + ")") +
              " with " + std::to_string(k.groups) + " groups";
    }
  }
  text += row("step", step + ", " + fixed(spec.tokens_per_step / 1e6, 2) + " M tokens");
  if (in.degraded) {
    // The steps with a fabric component down or a straggler node, simulated
    // when first needed.
    for (const DegradedSteps::Simulated& f : in.degraded->simulated()) {
      const std::string what = f.kind == failures::ComponentKind::kHost
                                   ? std::string("  with a straggler node")
                                   : "  with one " +
                                         std::string(failures::component_kind_name(f.kind)) +
                                         " down";
      text += row(what, f.step_s > 0 ? fixed(f.step_s, 3) + " s (x" +
                                           fixed(std::max(1.0, f.step_s /
                                                                   spec.step_time.to_seconds()),
                                                 4) +
                                           ")"
                                     : "not simulated (" + f.note + ")");
    }
  }
  if (in.step_cache) {
    text += row("step cache", in.step_cache->dir() + " (key " + in.step_cache->key() + "): " +
                                  std::to_string(in.step_cache->hits()) + " read, " +
                                  std::to_string(in.step_cache->writes()) +
                                  " simulated and kept");
  }
  const double rate = in.model.total_rate_per_hour();
  text +=
      row("failures", rate > 0 ? fixed(rate, 3) + " per hour (job MTBF " + fixed(60.0 / rate, 1) +
                                     " min), " + fixed(in.model.per_1000_node_days(), 2) +
                                     " per 1,000 node-days"
                               : std::string("none (no failure rate is set: failures.preset "
                                             "llama3_h100 or ft_hsdp_100k, a category's "
                                             "rate, or failures.job_mtbf)"));
  text +=
      row("trials", std::to_string(spec.trials) + " x " + hours_text(spec.duration.to_seconds()) +
                        (spec.tokens > 0 ? " at most" : ""));
  text += "\n";
  text += row("ETTR", fixed(100 * r.ettr_mean, 2) + "% (95% CI " + fixed(100 * r.ettr_ci95_low, 2) +
                          "-" + fixed(100 * r.ettr_ci95_high, 2) + "%)");
  const double full_rate = spec.tokens_per_step / spec.step_time.to_seconds();
  text +=
      row("goodput", fixed(r.goodput_tokens_per_s / 1e6, 3) + " M tokens/s (" +
                         fixed(100 * r.goodput_tokens_per_s / full_rate, 2) + "% of failure-free)");
  if (spec.tokens > 0) {
    text += row("time to train", fixed(r.time_to_train_days, 2) + " days (" +
                                     fixed(100 * r.trained_fraction, 1) + "% of trials done)");
  }
  text += row("interruptions per trial", fixed(r.interruptions_mean, 1));
  std::vector<size_t> order(r.cause_names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&r](size_t a, size_t b) {
    return r.interruptions_by_cause_mean[a] > r.interruptions_by_cause_mean[b];
  });
  for (const size_t i : order) {
    if (r.interruptions_by_cause_mean[i] <= 0) continue;
    text += row("  " + r.cause_names[i], pad(fixed(r.interruptions_by_cause_mean[i], 1), 10));
  }
  text += "\n" + row("time per trial (mean)", pad("hours", 10) + pad("% of wall", 12));
  double wall = 0;
  for (const double s : r.seconds_mean) wall += s;
  for (int a = 0; a < failures::kCampaignAccounts; ++a) {
    const double s = r.seconds_mean[static_cast<size_t>(a)];
    text +=
        row("  " + std::string(failures::campaign_account_name(static_cast<CampaignAccount>(a))),
            pad(fixed(s / 3600, 2), 10) + pad(fixed(wall > 0 ? 100 * s / wall : 0, 2) + "%", 12));
  }
  return text;
}

std::string report_json(const CampaignInputs& in, const CampaignResult& r, double wall_s) {
  std::ostringstream text;
  sim::JsonWriter json(text, 2);
  json.begin_object();
  write_schema_version(json);
  json.key("ettr_mean").number(r.ettr_mean);
  json.key("ettr_ci95_low").number(r.ettr_ci95_low);
  json.key("ettr_ci95_high").number(r.ettr_ci95_high);
  json.key("interruptions_mean").number(r.interruptions_mean);
  json.key("goodput").number(r.goodput_tokens_per_s);
  const double full_rate = in.spec.tokens_per_step / in.spec.step_time.to_seconds();
  json.key("goodput_fraction").number(r.goodput_tokens_per_s / full_rate);
  if (in.spec.tokens > 0) {
    json.key("time_to_train_days").number(r.time_to_train_days);
    json.key("trained_fraction").number(r.trained_fraction);
  }
  json.key("breakdown").begin_object();
  for (int a = 0; a < failures::kCampaignAccounts; ++a) {
    json.key(std::string(failures::campaign_account_name(static_cast<CampaignAccount>(a))) + "_s")
        .number(r.seconds_mean[static_cast<size_t>(a)]);
  }
  json.end_object();
  json.key("interruptions_by_category").begin_object();
  for (size_t i = 0; i < r.cause_names.size(); ++i) {
    json.key(r.cause_names[i]).number(r.interruptions_by_cause_mean[i]);
  }
  json.end_object();
  json.key("policy").str(failures::recovery_policy_name(in.policy.kind));
  // Seconds per recovery, by piece (the summary's table).
  pieces_json(json, "restart_pieces_s", failures::restart_pieces(in.policy));
  if (in.policy.kind == failures::RecoveryPolicyKind::kFtHsdp) {
    pieces_json(json, "ft_stall_pieces_s", failures::ft_stall_pieces(in.policy));
    pieces_json(json, "replica_recovery_pieces_s", failures::replica_recovery_pieces(in.policy));
  }
  json.key("step_time_s").number(in.spec.step_time.to_seconds());
  json.key("tokens_per_step").number(in.spec.tokens_per_step);
  json.key("job_gpus").int64(in.job_gpus);
  json.key("replica_groups").int64(in.replica_groups);
  json.key("trials").int64(in.spec.trials);
  json.key("duration_days").number(in.spec.duration.to_seconds() / 86400);
  json.key("failures_per_hour").number(in.model.total_rate_per_hour());
  json.key("wall_s").number(wall_s);
  json.end_object();
  json.finish();
  return text.str() + "\n";
}

std::string trials_csv(const CampaignResult& r) {
  std::string text = "trial,wall_s,ettr,tokens,interruptions,failures,full_restarts,trained";
  for (int a = 0; a < failures::kCampaignAccounts; ++a) {
    text +=
        std::string(",") + failures::campaign_account_name(static_cast<CampaignAccount>(a)) + "_s";
  }
  text += "\n";
  for (size_t t = 0; t < r.trials.size(); ++t) {
    const failures::TrialResult& x = r.trials[t];
    text += std::to_string(t) + "," + fixed(x.wall_s, 3) + "," + fixed(x.ettr(), 6) + "," +
            fixed(x.tokens, 0) + "," + std::to_string(x.interruptions) + "," +
            std::to_string(x.failures) + "," + std::to_string(x.full_restarts) + "," +
            (x.trained ? "1" : "0");
    for (const double s : x.seconds) text += "," + fixed(s, 3);
    text += "\n";
  }
  return text;
}

SimTime job_mtbf(const CampaignInputs& in) {
  return SimTime::from_seconds_rounded(3600.0 / in.model.total_rate_per_hour());
}

// The checkpoint intervals --optimize-checkpoint-interval scans: around
// Daly's, a factor 2^(1/3) apart (none without failures).
std::vector<SimTime> scanned_intervals(const CampaignInputs& in) {
  if (in.model.total_rate_per_hour() <= 0) return {};
  const SimTime daly = failures::daly_interval(in.policy.checkpoint_save_blocking, job_mtbf(in));
  std::vector<SimTime> intervals;
  for (int i = -6; i <= 6; ++i) {
    const SimTime t = SimTime::from_seconds_rounded(daly.to_seconds() * std::pow(2.0, i / 3.0));
    if (t > SimTime::zero()) intervals.push_back(t);
  }
  return intervals;
}

// Scans the checkpoint intervals and reports the best, with Young's and
// Daly's (job MTBF, the restart cost, the blocking save).
std::string optimize_interval(const CampaignInputs& in, int threads,
                              const failures::TrialsDone& trials_done) {
  if (in.model.total_rate_per_hour() <= 0) {
    return "checkpoint interval: no failures, nothing to optimise\n";
  }
  const SimTime mtbf = job_mtbf(in);
  const SimTime save = in.policy.checkpoint_save_blocking;
  const SimTime young = failures::young_interval(save, mtbf);
  const SimTime daly = failures::daly_interval(save, mtbf);
  std::string text = "\ncheckpoint interval scan (" + std::to_string(in.spec.trials) +
                     " trials each)\n" + row("  interval (min)", pad("ETTR", 10));
  double best_ettr = -1;
  SimTime best;
  for (const SimTime interval : scanned_intervals(in)) {
    RecoveryPolicy p = in.policy;
    p.checkpoint_interval = interval;
    const CampaignResult r = failures::run_campaign(in.model, p, in.spec, threads, trials_done);
    text += row("  " + fixed(p.checkpoint_interval.to_seconds() / 60, 1),
                pad(fixed(100 * r.ettr_mean, 2) + "%", 10));
    if (r.ettr_mean > best_ettr) {
      best_ettr = r.ettr_mean;
      best = p.checkpoint_interval;
    }
  }
  text += row("best",
              fixed(best.to_seconds() / 60, 1) + " min, ETTR " + fixed(100 * best_ettr, 2) + "%");
  text += row("Young", fixed(young.to_seconds() / 60, 1) + " min (sqrt(2 x save x MTBF))");
  text += row("Daly", fixed(daly.to_seconds() / 60, 1) + " min (MTBF " +
                          fixed(mtbf.to_seconds() / 60, 1) + " min, save " +
                          fixed(save.to_seconds(), 1) + " s)");
  return text;
}

// Every problem of the file that can be known before simulating, in one
// pass: the keys, the campaign's settings, the failure model on the cluster
// and, when the campaign simulates its step (no campaign.step_time), the
// hardware profile and the workload. The recovery policy is read later, with
// the step's time. The scenario when the step is simulated; nothing when a
// step time is given (the cluster graph and profile are then not needed).
std::optional<NetworkScenario> load_campaign_scenario(const std::string& path,
                                                      const std::vector<std::string>& overrides) {
  ScenarioProblems problems;
  NetworkParts parts{load_scenario_values_keeping_going(path, overrides, problems), std::nullopt,
                     std::nullopt};
  const sim::ConfigValues& values = parts.values;
  const auto settings = problems.attempt([&] { return failures::read_campaign_settings(values); });
  const bool simulates_step = !settings || !settings->step_time;
  if (const auto spec = problems.attempt([&] { return topology::read_cluster_spec(values); })) {
    problems.check([&] {
      failures::read_failure_model(values, *spec, spec->nodes * spec->node.gpus_per_node);
    });
  }
  if (simulates_step && values.has("workload.model")) {
    add_network_parts(path, parts, problems);
    if (parts.cluster && parts.profile) {
      step_config_parts(values, *parts.cluster, *parts.profile, problems);
    }
  }
  problems.throw_if_any();
  if (!parts.cluster || !parts.profile) return std::nullopt;
  return NetworkScenario{std::move(parts.values), std::move(*parts.cluster),
                         std::move(*parts.profile)};
}

}  // namespace

CommandSpec campaign_command_spec() {
  CommandSpec spec{"campaign",
          "Simulate a training campaign under failures (Monte Carlo trials) and report ETTR.",
          {"SCENARIO"},
          {{"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
           {"--json", "FILE", false, "also write the results as JSON (atomically)"},
           {"--csv", "FILE", false, "also write one row per trial as CSV (atomically)"},
           {"--threads", "N", false, "trials in parallel (default: every core; same results)"},
           {"--optimize-checkpoint-interval", "", false,
            "also scan the checkpoint interval; print the best next to Young's and Daly's"},
           {"--step-cache", "DIR", false,
            "keep simulated steps in DIR and reuse them in later runs of the same steps"},
           {"--no-wall-time", "", false, "leave out the last line (wall time)"}},
          "ETTR (effective training time ratio) is the mean over trials of productive time over\n"
          "wall time, with a 95% confidence interval. JSON keys: ettr_mean, ettr_ci95_low,\n"
          "ettr_ci95_high, interruptions_mean, goodput, goodput_fraction, time_to_train_days\n"
          "(with campaign.tokens), breakdown, interruptions_by_category, restart_pieces_s (with\n"
          "ft_hsdp also ft_stall_pieces_s, replica_recovery_pieces_s), step_time_s, wall_s.\n"
          "A step to simulate over the work limits below is refused at the key that drives\n"
          "it. On stderr: the step's estimated work when it is 20 M tasks or more, the step's\n"
          "then the trials' percentage done and ETA while they run (redrawn on a terminal, else\n"
          "a line every 5 s, none for what ends sooner), and 'wrote FILE' for each file\n"
          "written; --quiet prints none of these."};
  for (OptionSpec& o : work_limit_options()) spec.options.push_back(std::move(o));
  spec.options.push_back(quiet_option());
  return spec;
}

int run_campaign_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const auto started = std::chrono::steady_clock::now();
  const int threads = parsed.positive_int_or("--threads", 0, 1024, "a number of threads");
  // The cluster graph and the profile are built only when the step has to
  // be simulated (campaign.step_time not given).
  const std::string& path = parsed.positionals[0];
  const std::vector<std::string> overrides = parsed.values("--set");
  std::optional<NetworkScenario> net = load_campaign_scenario(path, overrides);
  const sim::ConfigValues values = net ? net->values : load_scenario_values(path, overrides);
  std::shared_ptr<const StepCache> cache;
  if (parsed.has("--step-cache")) {
    const std::string dir = parsed.value_or("--step-cache", "");
    if (dir.empty()) throw UsageError("option '--step-cache' expects a directory, found ''");
    cache = std::make_shared<StepCache>(dir, step_cache_key(path, values));
  }
  StatusLine status(err, "clustersim campaign", status_mode(parsed, err));
  EngineMeter step_meter(status, "step ");
  StepWatch watch;
  watch.starting = [&](const workloads::StepWork& work) {
    if (work.task_timelines() >= kLargeTaskTimelines) {
      status.note(step_work_text(work) + ", then the trials");
    }
  };
  watch.progress = step_meter.callback();
  watch.finished = [&](uint64_t events) { step_meter.finish(events); };
  const CampaignInputs in = read_campaign_inputs(
      path, values,
      [&]() -> StepPlatform {
        if (!net) net.emplace(load_network_scenario(path, overrides));
        return {net->cluster, net->profile};
      },
      nullptr, cache, work_limits_from(parsed), watch);

  // Every campaign's trials, the scan's too, on one progress line.
  const bool scan = parsed.has("--optimize-checkpoint-interval");
  const int64_t campaigns = 1 + (scan ? static_cast<int64_t>(scanned_intervals(in).size()) : 0);
  CountMeter trial_meter(status, in.spec.trials * campaigns, "trials");
  int64_t trials_finished = 0;  // of every campaign
  failures::TrialsDone trial_done;
  if (!status.quiet()) trial_done = [&](int64_t) { trial_meter.update(++trials_finished); };
  const CampaignResult result =
      failures::run_campaign(in.model, in.policy, in.spec, threads, trial_done);
  std::string text = summary(in, result);
  if (scan) text += optimize_interval(in, threads, trial_done);
  trial_meter.finish(in.spec.trials * campaigns);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (parsed.has("--json")) {
    const std::string json = parsed.value_or("--json", "");
    sim::write_file_atomically(json, report_json(in, result, wall_s));
    status.note("wrote " + json);
  }
  if (parsed.has("--csv")) {
    const std::string csv = parsed.value_or("--csv", "");
    sim::write_file_atomically(csv, trials_csv(result));
    status.note("wrote " + csv);
  }
  out << text;
  if (!parsed.has("--no-wall-time")) out << row("wall time", fixed(wall_s, 3) + " s");
  return kExitOk;
}

}  // namespace clustersim::cli
