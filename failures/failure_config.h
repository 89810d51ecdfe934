// The scenario's `failures` section: which failure processes strike the job.
//
// Keys (declared once in add_failure_keys; `clustersim describe-config` shows
// them with types, units and defaults):
//  * failures.preset: none (no failures unless a category sets a rate) or
//    llama3_h100 (rates fitted to the Llama 3 54-day table, llama3_fit.h).
//  * failures.<category>.rate_per_hour | .mtbf | .per_1000_node_days: the
//    category's rate, in at most ONE of three forms, replacing the preset's:
//    failures per component-hour; the mean time between failures of one
//    component (a duration); or the category's failures over the whole job
//    per 1,000 of its node-days (converted with the job's node and component
//    counts, failure_model.h). Categories: failure_categories().
//  * failures.<category>.distribution (exponential | weibull; default: the
//    preset's, exponential) and .weibull_shape (k > 0; required with weibull,
//    an error without it). The Weibull's scale is set so that its mean is
//    1 / rate: the rate stays the long-run rate whatever the shape.
//  * failures.scale (default 1): multiplies every category's rate, after the
//    preset and the overrides (for what-if studies: 0.5 = twice as reliable).
//  * failures.<category>.blast_radius (process | node | leaf |
//    degrade_bandwidth | job): replaces the category's own; a combination
//    its component cannot have (blast_problem(), failure_model.h) is an
//    error at the key.
//  * failures.job_mtbf: one exponential process of this mean for the whole
//    job, blast radius failures.job_mtbf_blast_radius (job by default; node,
//    process or leaf: one node drawn uniformly). It REPLACES the preset, the
//    categories and the scale (their keys are still checked), for users who
//    know only that number. Stragglers are separate and stay.
//  * failures.stragglers.rate_per_node_hour (default 0), .slowdown (>= 1,
//    default 1.2), .detection (default 15min): see StragglerProcess. Not the
//    top-level `stragglers` section, which fixes slow ranks for one step.
//
// read_failure_model() builds the model for a job of `job_gpus` GPUs on the
// cluster (JobComponents) and reports, all at once and each at the
// offending key's file:line:col (sim::ConfigError), what the schema cannot
// see: two rate forms for one category, weibull_shape without weibull,
// weibull without a shape, a per-1,000-node-days rate for a kind of
// component the job does not have. Negative rates, a zero MTBF or job MTBF,
// a Weibull shape <= 0, a negative scale and a slowdown below 1 are already
// rejected by the schema when the scenario loads.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "failures/failure_model.h"
#include "topology/cluster_config.h"

namespace clustersim::failures {

// Declares section `failures`, its keys, one section per category and
// `failures.stragglers`. No key is required.
void add_failure_keys(sim::ConfigSchema& schema);

// `spec` as read_cluster_spec() returns it; 1 <= job_gpus <= the cluster's
// GPUs (InvariantError otherwise: the workload checks the job's size).
FailureModel read_failure_model(const sim::ConfigValues& values, const topology::ClusterSpec& spec,
                                int64_t job_gpus);

}  // namespace clustersim::failures
