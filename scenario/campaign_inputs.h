// What a campaign simulation runs, read from a scenario's values: the job
// (its GPUs, replica groups, tokens per step), the failure model, the
// recovery policy and the campaign spec, with the step time given
// (`campaign.step_time`) or simulated. Shared by `campaign` and `sweep
// --campaign`.
//
// The step, when simulated, is simulated with every replica group and, for
// ft_hsdp, once more with one group fewer; the job at k of R groups runs at
// (k / (R - 1)) x that reduced throughput (spec.throughput_by_live).
// Errors: sim::ConfigError naming the scenario's key (and `path`).
// Thread safety: a pure function of its arguments (and of what
// `platform` returns); may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "config/config_values.h"
#include "failures/campaign.h"
#include "failures/failure_model.h"
#include "failures/recovery_policy.h"
#include "hardware/hardware_profile.h"
#include "schedules/step_simulator.h"
#include "topology/cluster.h"

namespace clustersim::cli {

struct CampaignInputs {
  std::string scenario_path;
  int64_t job_gpus = 0;
  int64_t replica_groups = 1;
  bool step_simulated = false;
  double reduced_step_s = 0;  // with one replica group fewer (ft_hsdp, simulated)
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
CampaignInputs read_campaign_inputs(const std::string& path, const sim::ConfigValues& values,
                                    const StepPlatformOf& platform,
                                    const workloads::StepResult* simulated = nullptr);

}  // namespace clustersim::cli
