// The scenario's `campaign` section: how long and how many trials to
// simulate, and (optionally) the step the campaign assumes instead of
// simulating it. Keys (these names are fixed by issue 5): campaign.duration,
// campaign.trials, campaign.tokens, campaign.step_time; plus
// campaign.tokens_per_step for scenarios without a workload.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "sim/sim_time.h"

namespace clustersim::failures {

struct CampaignSettings {
  sim::SimTime duration;
  int64_t trials = 0;
  std::optional<double> tokens;
  std::optional<sim::SimTime> step_time;
  std::optional<double> tokens_per_step;
};

void add_campaign_keys(sim::ConfigSchema& schema);
CampaignSettings read_campaign_settings(const sim::ConfigValues& values);

}  // namespace clustersim::failures
