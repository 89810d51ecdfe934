#include "failures/failure_config.h"

#include <array>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "config/config_error.h"
#include "failures/ft_hsdp_preset.h"
#include "failures/llama3_fit.h"

namespace clustersim::failures {

namespace {

const char* const kPreset = "failures.preset";
const char* const kScale = "failures.scale";
const char* const kJobMtbf = "failures.job_mtbf";
const char* const kJobBlast = "failures.job_mtbf_blast_radius";
const char* const kStragglerRate = "failures.stragglers.rate_per_node_hour";
const char* const kStragglerSlowdown = "failures.stragglers.slowdown";
const char* const kStragglerDetection = "failures.stragglers.detection";

// The three ways to give a category's rate, in the order they are checked.
constexpr std::array<std::string_view, 3> kRateForms = {"rate_per_hour", "mtbf",
                                                        "per_1000_node_days"};

constexpr std::array<BlastRadius, 5> kBlastRadii = {BlastRadius::kProcess, BlastRadius::kNode,
                                                    BlastRadius::kLeaf,
                                                    BlastRadius::kDegradeBandwidth,
                                                    BlastRadius::kJob};

std::vector<std::string> blast_names() {
  std::vector<std::string> names;
  for (const BlastRadius b : kBlastRadii) names.emplace_back(blast_radius_name(b));
  return names;
}

BlastRadius blast_of(const std::string& name) {
  for (const BlastRadius b : kBlastRadii) {
    if (blast_radius_name(b) == name) return b;
  }
  return BlastRadius::kJob;  // unreachable: the schema checked the name
}

std::string key(std::string_view category, std::string_view name) {
  return "failures." + std::string(category) + "." + std::string(name);
}

std::string blast_doc(BlastRadius blast) {
  switch (blast) {
    case BlastRadius::kProcess:
      return "kills the process on the GPU (its replica group under HSDP, else the job)";
    case BlastRadius::kNode:
      return "takes the node out";
    case BlastRadius::kLeaf:
      return "takes out every node behind the switch";
    case BlastRadius::kDegradeBandwidth:
      return "kills nothing; degrades the fabric's bandwidth until repaired";
    case BlastRadius::kJob:
      return "stops the whole job";
  }
  return "";
}

std::string category_doc(const FailureCategory& category, const FailureFit& fit, size_t index) {
  std::string doc = "Failures of category " + std::string(category.name) + " (" +
                    std::string(category.group) + "): strike one " +
                    std::string(component_kind_name(category.component)) + " and " +
                    blast_doc(category.blast) + ". llama3_h100: ";
  if (index < fit.rows.size()) {
    const FitRow& row = fit.rows[index];
    std::array<char, 64> rate{};
    std::snprintf(rate.data(), rate.size(), "%.4g", row.rate_per_hour);
    doc += std::to_string(row.count) + " in 54 days on " + std::to_string(row.components) + " = " +
           rate.data() + " per " + std::string(component_kind_name(category.component)) + "-hour.";
  } else {
    doc += "0 (not in the Llama 3 table).";
  }
  return doc;
}

}  // namespace

void add_failure_keys(sim::ConfigSchema& schema) {
  using sim::ValueType;
  schema.add_section("failures",
                     "Failure processes of the job's components over a campaign: a preset, "
                     "per-category rates and distributions, or one job MTBF.");
  schema
      .add_key(kPreset, ValueType::kEnum,
               "none: no failures unless a category sets a rate; llama3_h100: per-category rates "
               "fitted to the 419 unexpected interruptions of Llama 3 405B on 16,384 H100 in 54 "
               "days (arXiv:2407.21783, Table 5), per GPU, node, NIC cable or job; ft_hsdp_100k: "
               "the FT-HSDP paper's eleven root causes at ~100k H100 (arXiv:2602.00277), each "
               "with its blast radius under FT-HSDP, at a job rate growing with its nodes through "
               "the paper's two points (2.3 per 1,000 node-days at 4,096 nodes, one per 18 min "
               "at 12,288; failures/ft_hsdp_preset.h).")
      .one_of({"none", "llama3_h100", "ft_hsdp_100k"})
      .default_to(std::string("none"));
  schema
      .add_key(kScale, ValueType::kFloat,
               "Multiplies every category's rate (after the preset and the per-category keys).")
      .non_negative()
      .default_to(1.0);
  schema
      .add_key(kJobMtbf, ValueType::kDuration,
               "One exponential failure process of this mean for the whole job, striking what "
               "failures.job_mtbf_blast_radius says (the whole job by default); replaces the "
               "preset, the categories and failures.scale.")
      .in_unit("h")
      .positive();
  schema
      .add_key(kJobBlast, ValueType::kEnum,
               "What each failure of failures.job_mtbf strikes: job (the whole job stops, as a "
               "user who knows only the MTBF must assume), or one node drawn uniformly: node and "
               "process take that node out (under FT-HSDP its replica group), leaf every node "
               "behind its leaf switch. The job still fails once per job_mtbf.")
      .one_of({"process", "node", "leaf", "job"})
      .default_to(std::string("job"));

  const FailureFit fit = llama3_h100_fit();
  const std::span<const FailureCategory> categories = failure_categories();
  for (size_t i = 0; i < categories.size(); ++i) {
    const FailureCategory& c = categories[i];
    const std::string component(component_kind_name(c.component));
    schema.add_section("failures." + std::string(c.name), category_doc(c, fit, i));
    schema
        .add_key(
            key(c.name, "rate_per_hour"), ValueType::kFloat,
            "Failures per " + component + "-hour (one of rate_per_hour, mtbf, per_1000_node_days).")
        .in_unit("1/h")
        .non_negative();
    schema
        .add_key(key(c.name, "mtbf"), ValueType::kDuration,
                 "Mean time between failures of one " + component +
                     " (one of rate_per_hour, mtbf, per_1000_node_days).")
        .in_unit("h")
        .positive();
    schema
        .add_key(key(c.name, "per_1000_node_days"), ValueType::kFloat,
                 "Failures of this category over the job per 1,000 of its node-days (one of "
                 "rate_per_hour, mtbf, per_1000_node_days).")
        .non_negative();
    schema
        .add_key(key(c.name, "distribution"), ValueType::kEnum,
                 "Inter-arrival times of one " + component +
                     ": exponential, or weibull (needs weibull_shape; mean kept at 1 / rate). "
                     "Default: exponential.")
        .one_of({"exponential", "weibull"});
    schema
        .add_key(key(c.name, "weibull_shape"), ValueType::kFloat,
                 "Weibull shape k (< 1: early failures, > 1: wear-out); only with distribution "
                 "weibull.")
        .positive();
    schema
        .add_key(key(c.name, "blast_radius"), ValueType::kEnum,
                 "What a failure takes out, replacing the category's own (" +
                     std::string(blast_radius_name(c.blast)) +
                     "): process or node (the " + component +
                     "'s node; under FT-HSDP its replica group), leaf (every node behind its "
                     "leaf switch), degrade_bandwidth (nothing dies, the fabric slows; spine, "
                     "core and fabric links only) or job (the whole job stops).")
        .one_of(blast_names());
  }

  schema.add_section("failures.stragglers",
                     "Slow nodes appearing during the campaign: they slow the synchronous step "
                     "until detected, then leave the job like a failed node.");
  schema.add_key(kStragglerRate, ValueType::kFloat, "Slow nodes appearing per node-hour.")
      .in_unit("1/h")
      .non_negative()
      .default_to(0.0);
  schema
      .add_key(kStragglerSlowdown, ValueType::kFloat,
               "Step time multiplier while a slow node is in the job.")
      .validated_by(
          [](const sim::ConfigValue& value) {
            return std::get<double>(value) >= 1.0 ? std::string() : std::string("a number >= 1");
          },
          ">= 1")
      .default_to(1.2);
  schema
      .add_key(kStragglerDetection, ValueType::kDuration,
               "Time from a node turning slow to its removal (no published figure; a guess).")
      .in_unit("s")
      .non_negative()
      .default_to(sim::SimTime::minutes(15));
}

FailureModel read_failure_model(const sim::ConfigValues& values, const topology::ClusterSpec& spec,
                                int64_t job_gpus) {
  const JobComponents job(spec, job_gpus);
  sim::DiagnosticSink sink;
  const std::string preset = values.get_string(kPreset);
  FailureModel model = preset == "llama3_h100"    ? llama3_h100_model(job)
                       : preset == "ft_hsdp_100k" ? ft_hsdp_100k_model(job)
                                                  : empty_failure_model(job);

  const std::span<const FailureCategory> categories = failure_categories();
  for (size_t i = 0; i < categories.size(); ++i) {
    const FailureCategory& c = categories[i];
    FailureCause& cause = model.causes[i];

    std::string first_form;
    for (std::string_view form : kRateForms) {
      const std::string path = key(c.name, form);
      if (!values.has(path)) continue;
      if (!first_form.empty()) {
        sink.add(values.where(path), path,
                 "expected one rate per category, found " + first_form + " (at " +
                     values.where(first_form).to_string() + ") as well");
        continue;
      }
      first_form = path;
      if (form == "rate_per_hour") {
        cause.rate_per_hour = values.get_float(path);
      } else if (form == "mtbf") {
        cause.rate_per_hour = rate_from_mtbf(values.get_duration(path));
      } else if (cause.components == 0) {
        sink.add(values.where(path), path,
                 "expected a category whose " + std::string(component_kind_name(c.component)) +
                     " the job has, found none on this cluster (use rate_per_hour)");
      } else {
        cause.rate_per_hour =
            rate_from_per_1000_node_days(values.get_float(path), job.nodes(), cause.components);
      }
    }

    const std::string distribution = key(c.name, "distribution");
    const std::string shape = key(c.name, "weibull_shape");
    const bool weibull = values.has(distribution) && values.get_string(distribution) == "weibull";
    if (weibull) {
      cause.distribution = InterArrival::kWeibull;
      if (values.has(shape)) {
        cause.weibull_shape = values.get_float(shape);
      } else {
        sink.add(values.where(distribution), distribution,
                 "expected " + shape + " with distribution weibull, found none");
      }
    } else if (values.has(shape)) {
      sink.add(values.where(shape), shape,
               "expected " + distribution + ": weibull for a Weibull shape, found " +
                   (values.has(distribution) ? values.get_string(distribution)
                                             : std::string("exponential (the default)")));
    } else if (values.has(distribution)) {
      cause.distribution = InterArrival::kExponential;
    }

    const std::string blast = key(c.name, "blast_radius");
    if (values.has(blast)) {
      const BlastRadius b = blast_of(values.get_string(blast));
      const std::string_view problem = blast_problem(c.component, b);
      if (problem.empty()) {
        cause.blast = b;
      } else {
        sink.add(values.where(blast), blast,
                 "expected a blast radius a " + std::string(component_kind_name(c.component)) +
                     " can have (" + std::string(problem) + "), found " + values.get_string(blast));
      }
    }
  }

  model.stragglers.rate_per_node_hour = values.get_float(kStragglerRate);
  model.stragglers.slowdown = values.get_float(kStragglerSlowdown);
  model.stragglers.detection = values.get_duration(kStragglerDetection);
  sink.throw_if_any();

  if (values.has(kJobMtbf)) {
    FailureModel replaced = job_mtbf_failure_model(job, values.get_duration(kJobMtbf),
                                                   blast_of(values.get_string(kJobBlast)));
    replaced.stragglers = model.stragglers;
    return replaced;
  }
  const double scale = values.get_float(kScale);
  for (FailureCause& cause : model.causes) cause.rate_per_hour *= scale;
  return model;
}

}  // namespace clustersim::failures
