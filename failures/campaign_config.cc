#include "failures/campaign_config.h"

namespace clustersim::failures {

void add_campaign_keys(sim::ConfigSchema& schema) {
  schema.add_section("campaign",
                     "Monte Carlo simulation of a training campaign under failures (`clustersim "
                     "campaign`).");
  schema
      .add_key("campaign.duration", sim::ValueType::kDuration,
               "Wall clock of one trial; with campaign.tokens, the most a trial may take.")
      .default_to(sim::SimTime::days(30))
      .positive()
      .in_unit("d");
  schema.add_key("campaign.trials", sim::ValueType::kInt, "Monte Carlo trials.")
      .default_to(int64_t{100})
      .positive();
  schema
      .add_key("campaign.tokens", sim::ValueType::kFloat,
               "Tokens to train: a trial ends when they are trained (time to train).")
      .positive()
      .in_unit("tokens");
  schema
      .add_key("campaign.step_time", sim::ValueType::kDuration,
               "Step time of the whole job with no failure; when omitted, `campaign` simulates "
               "the scenario's step with all replica groups and with one fewer.")
      .positive()
      .in_unit("s");
  schema
      .add_key("campaign.tokens_per_step", sim::ValueType::kFloat,
               "Tokens one step trains; default: from the workload (local_batch x seq_len x "
               "grad_accum x data-parallel ranks).")
      .positive()
      .in_unit("tokens");
}

CampaignSettings read_campaign_settings(const sim::ConfigValues& values) {
  CampaignSettings s;
  s.duration = values.get_duration("campaign.duration");
  s.trials = values.get_int("campaign.trials");
  if (values.has("campaign.tokens")) s.tokens = values.get_float("campaign.tokens");
  if (values.has("campaign.step_time")) s.step_time = values.get_duration("campaign.step_time");
  if (values.has("campaign.tokens_per_step")) {
    s.tokens_per_step = values.get_float("campaign.tokens_per_step");
  }
  return s;
}

}  // namespace clustersim::failures
