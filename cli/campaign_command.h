// `clustersim campaign SCENARIO`: Monte Carlo trials of a training campaign
// under the scenario's failures and recovery policy (failures/campaign.h).
//
// Inputs: the scenario's cluster, hardware profile, workload (the job's size,
// its replica groups and its tokens per step), `failures`, `recovery` and
// `campaign` sections; `--set KEY=VALUE` overrides any key. The step time is
// `campaign.step_time` when given; otherwise the command simulates the step
// (workloads/schedules/step_simulator.h) with every replica group and, for ft_hsdp,
// with one fewer, and runs the job at k of R groups at (k / (R - 1)) x that
// reduced throughput (one simulated point, scaled by the live groups).
//
// Output (stdout): the inputs (job, policy, step, failure rate), the mean
// ETTR with its 95% confidence interval, goodput, time to train (with
// campaign.tokens), interruptions per trial by category, and the time
// breakdown (mean seconds per trial and % of the wall clock), then the wall
// time on a line of its own (--no-wall-time leaves it out).
// --json FILE: ettr_mean, ettr_ci95_low, ettr_ci95_high, interruptions_mean,
// goodput (tokens/s), goodput_fraction, time_to_train_days (with tokens),
// breakdown{...}, interruptions_by_category{...}, step_time_s, trials, wall_s.
// --csv FILE: one row per trial. Both written atomically.
// --threads N: trials in parallel (default: every core); results are the
// same for any N. --optimize-checkpoint-interval: also scans the checkpoint
// interval and prints the best one next to Young's and Daly's.
// stderr besides errors and warnings (cli/progress.h, docs/progress.md): a
// simulated step's estimated work when large, the step's then the trials'
// progress with a percentage and ETA, and "wrote FILE" for each file; none
// of it with --quiet.
// Exit codes: 0 ok, 1 bad scenario or unwritable output, 2 usage errors.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec campaign_command_spec();
int run_campaign_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
