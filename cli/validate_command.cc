#include "cli/validate_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "calibration/collective_measurements.h"
#include "cli/network_scenario.h"
#include "cli/table_text.h"
#include "collectives/group_collectives.h"
#include "sim/config_error.h"
#include "sim/statistics.h"
#include "sim/units.h"

namespace clustersim::cli {

namespace {

using collectives::CollectiveOp;

CollectiveOp op_of(const std::string& name) {
  if (name == "all_gather") return CollectiveOp::kAllGather;
  if (name == "reduce_scatter") return CollectiveOp::kReduceScatter;
  if (name == "broadcast") return CollectiveOp::kBroadcast;
  return CollectiveOp::kAllReduce;
}

// The first `gpus` GPUs, `per_node` on each node, as a test launched on
// whole nodes places them.
std::vector<int64_t> measured_group(const topology::Cluster& cluster, int gpus, int per_node) {
  std::vector<int64_t> group;
  for (int i = 0; i < gpus; ++i) {
    group.push_back(cluster.first_gpu_of_node(i / per_node) + i % per_node);
  }
  return group;
}

}  // namespace

CommandSpec validate_command_spec() {
  return {"validate",
          "Compare predicted collective times with measurements (our CSV or nccl-tests output).",
          {"SCENARIO", "MEASUREMENTS..."},
          {{"--min-bytes", "SIZE", false, "ignore rows smaller than SIZE (e.g. 65536 or 64KiB)"},
           {"--op", "OP", false, "the collective of nccl-tests files whose name does not say"},
           {"--set", "KEY=VALUE", true, "override a scenario key"}},
          "Each row is predicted on the scenario's cluster for the row's GPU count and GPUs\n"
          "per node (the first nodes of the cluster), with the tuner's choice. Rows with only a\n"
          "bus bandwidth are compared through the time it implies."};
}

int run_validate_command(const ParsedCommand& parsed, std::ostream& out) {
  int64_t min_bytes = 0;
  if (parsed.has("--min-bytes")) {
    const std::string text = parsed.value_or("--min-bytes", "");
    const sim::Parsed<int64_t> bytes = sim::parse_bytes(text, "B");
    if (!bytes || *bytes < 0) {
      throw UsageError("option '--min-bytes' expects a size such as 65536 or 64KiB, found '" +
                       text + "'" + (bytes.error.empty() ? "" : ": " + bytes.error));
    }
    min_bytes = *bytes;
  }
  const NetworkScenario net = load_network_scenario(parsed.positionals[0], parsed.values("--set"));

  std::vector<calibration::CollectiveMeasurement> rows;
  for (size_t i = 1; i < parsed.positionals.size(); ++i) {
    std::vector<calibration::CollectiveMeasurement> file_rows =
        calibration::read_collective_measurements(parsed.positionals[i],
                                                  parsed.value_or("--op", ""));
    rows.insert(rows.end(), std::make_move_iterator(file_rows.begin()),
                std::make_move_iterator(file_rows.end()));
  }
  sim::DiagnosticSink sink;
  for (const calibration::CollectiveMeasurement& row : rows) {
    if (row.gpus > net.cluster.gpu_count()) {
      sink.add(row.where, "gpus",
               "expected at most the scenario's " + std::to_string(net.cluster.gpu_count()) +
                   " GPUs, found " + std::to_string(row.gpus));
    } else if (row.gpus % row.gpus_per_node != 0 ||
               row.gpus_per_node > net.cluster.gpus_per_node()) {
      sink.add(row.where, "gpus_per_node",
               "expected a divisor of gpus and at most the scenario's " +
                   std::to_string(net.cluster.gpus_per_node()) + " GPUs per node, found " +
                   std::to_string(row.gpus_per_node));
    }
  }
  sink.throw_if_any();

  out << "# clustersim validate: " << parsed.positionals[0] << " (hardware profile "
      << net.profile.name << ")\n"
      << "#            op  gpus  per-node         bytes  measured-us  predicted-us   error   algo  "
         "proto  source\n";
  const collectives::ForcedChoice forced = collectives::read_forced_choice(net.values);
  sim::Samples errors;
  int skipped = 0;
  for (const calibration::CollectiveMeasurement& row : rows) {
    if (row.bytes < min_bytes) continue;
    const CollectiveOp op = op_of(row.op);
    double measured_us = 0;
    if (row.time_us) {
      measured_us = *row.time_us;
    } else if (row.busbw_GBps && *row.busbw_GBps > 0) {
      measured_us = static_cast<double>(row.bytes) * collectives::busbw_factor(op, row.gpus) /
                    (*row.busbw_GBps * 1e9) * 1e6;
    } else {
      ++skipped;  // a bandwidth rounded to 0.00 says nothing about the time
      continue;
    }
    const std::vector<std::vector<int64_t>> group{
        measured_group(net.cluster, row.gpus, row.gpus_per_node)};
    collectives::GroupPrediction prediction;
    try {
      prediction =
          collectives::predict_concurrent(net.profile, net.cluster, group, op, row.bytes, forced)
              .front();
    } catch (const std::invalid_argument& e) {
      sim::DiagnosticSink invalid;
      invalid.add(net.values.where("collectives.algorithm"), "collectives",
                  std::string(e.what()) + " (for the row at " + row.where.to_string() + ")");
      invalid.throw_if_any();
    }
    const double predicted_us = prediction.seconds * 1e6;
    const double error = (predicted_us - measured_us) / measured_us;
    errors.add(std::fabs(error) * 100.0);
    out << pad(row.op, 15) << pad(std::to_string(row.gpus), 6)
        << pad(std::to_string(row.gpus_per_node), 10) << pad(std::to_string(row.bytes), 14)
        << pad(fixed(measured_us, 2), 13) << pad(fixed(predicted_us, 2), 14)
        << pad(fixed(error * 100.0, 1) + "%", 8)
        << pad(collectives::to_string(prediction.tuned.choice.algorithm), 7)
        << pad(collectives::to_string(prediction.tuned.choice.protocol), 7) << "  "
        << row.where.to_string() << "\n";
  }
  if (errors.size() == 0) {
    sim::DiagnosticSink none;
    none.add(sim::SourceLocation{parsed.positionals[1], 0, 0}, "",
             "no measurement rows to compare" +
                 (min_bytes > 0 ? " at or above --min-bytes " + std::to_string(min_bytes)
                                : std::string()));
    none.throw_if_any();
  }
  if (skipped > 0) {
    out << "# skipped " << skipped << " row(s) with neither a time nor a non-zero busbw\n";
  }
  out << "cases=" << errors.size() << " median_abs_error=" << fixed(errors.percentile(50), 2)
      << "% max_abs_error=" << fixed(errors.percentile(100), 2) << "%\n";
  return 0;
}

}  // namespace clustersim::cli
