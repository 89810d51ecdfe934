// What a campaign simulation runs, read from a scenario's values: the job
// (its GPUs, replica groups, tokens per step), the failure model, the
// recovery policy and the campaign spec, with the step time given
// (`campaign.step_time`) or simulated. Shared by `campaign` and `sweep
// --campaign`.
//
// The step, when simulated, is simulated with every replica group; for
// ft_hsdp the job with k of R groups is simulated when a trial first runs
// with k (scenario/live_throughput.h, spec.throughput_of_live), and the job
// with a spine, core switch or switch-to-switch cable down when a trial first
// sees such a fault, or a straggler (scenario/degraded_steps.h). A given step
// time leaves the throughput linear in k / R, fabric faults without effect
// and stragglers at their own slowdown.
// Errors: sim::ConfigError naming the scenario's key (and `path`).
// Thread safety: a pure function of its arguments (and of what
// `platform` returns); may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/config_values.h"
#include "failures/campaign.h"
#include "failures/failure_model.h"
#include "failures/recovery_policy.h"
#include "hardware/hardware_profile.h"
#include "scenario/degraded_steps.h"
#include "scenario/live_throughput.h"
#include "scenario/step_cache.h"
#include "scenario/work_limits.h"
#include "topology/cluster.h"
#include "workloads/schedules/step_simulator.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::cli {

struct CampaignInputs {
  std::string scenario_path;
  int64_t job_gpus = 0;
  int64_t replica_groups = 1;
  bool step_simulated = false;
  // ft_hsdp with a simulated step: the steps with k of R groups, as asked for.
  std::shared_ptr<LiveThroughput> live;
  // A simulated step: the steps with one fabric component down or one
  // straggler node, as asked for.
  std::shared_ptr<DegradedSteps> degraded;
  std::shared_ptr<const StepCache> step_cache;  // null: none
  failures::FailureModel model;
  failures::RecoveryPolicy policy;
  failures::CampaignSpec spec;
};

// The cluster and profile the step is simulated on; asked for only when the
// step has to be simulated (they outlive the call).
struct StepPlatform {
  const topology::Cluster& cluster;
  const collectives::HardwareProfile& profile;
};
using StepPlatformOf = std::function<StepPlatform()>;

// `simulated`: the step with every group, already simulated on `platform`
// (a sweep's point); when given, it is the step whatever campaign.step_time
// says.
// `step_cache`: where simulated steps are kept between runs (null: none;
// scenario/step_cache.h).
// What a command is told of the full step while it is simulated (for its
// progress lines; the degraded steps, which the campaign may simulate on
// several threads, are not watched). Each may be empty.
struct StepWatch {
  // Its estimated work, just before it is simulated (not when cached).
  std::function<void(const workloads::StepWork&)> starting;
  workloads::EngineProgressFn progress;  // EngineOptions::progress
  // After it was simulated, with its events.
  std::function<void(uint64_t events)> finished;
};

// A step to simulate is first checked against `limits` (scenario/work_limits.h).
CampaignInputs read_campaign_inputs(const std::string& path, const sim::ConfigValues& values,
                                    const StepPlatformOf& platform,
                                    const workloads::StepResult* simulated = nullptr,
                                    std::shared_ptr<const StepCache> step_cache = nullptr,
                                    const WorkLimits& limits = {}, const StepWatch& watch = {});

}  // namespace clustersim::cli
