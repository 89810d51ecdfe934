#include "cli/collective_command.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/progress.h"
#include "cli/table_text.h"
#include "collectives/group_collectives.h"
#include "config/atomic_file.h"
#include "config/config_error.h"
#include "config/suggest.h"
#include "config/text_fields.h"
#include "config/units.h"
#include "scenario/network_scenario.h"

namespace clustersim::cli {

namespace {

using collectives::Algorithm;
using collectives::CollectiveOp;
using collectives::Protocol;

template <class Enum>
Enum pick(const std::string& flag, const std::string& value,
          std::initializer_list<std::pair<const char*, Enum>> choices) {
  std::vector<std::string> names;
  for (const auto& [name, e] : choices) {
    if (sim::ascii_lower(value) == sim::ascii_lower(name)) return e;
    names.emplace_back(name);
  }
  std::string message = "option '" + flag + "' expects one of";
  for (const std::string& n : names) message += " " + n;
  message += ", found '" + value + "'";
  if (auto guess = sim::suggest(value, names)) message += " (did you mean '" + *guess + "'?)";
  throw UsageError(message);
}

CollectiveOp parse_op(const std::string& value) {
  return pick<CollectiveOp>("--op", value,
                            {{"all_reduce", CollectiveOp::kAllReduce},
                             {"all_gather", CollectiveOp::kAllGather},
                             {"reduce_scatter", CollectiveOp::kReduceScatter},
                             {"broadcast", CollectiveOp::kBroadcast},
                             {"all_to_all", CollectiveOp::kAllToAll}});
}

int64_t positive_int(const std::string& flag, const std::string& value) {
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || ptr != value.data() + value.size() || n <= 0) {
    throw UsageError("option '" + flag + "' expects a positive integer, found '" + value + "'");
  }
  return n;
}

// Group j of `count` groups of `gpus` members `stride` apart: blocks of
// `stride` interleaved groups, like HSDP's replica groups.
std::vector<std::vector<int64_t>> place_groups(int64_t gpus, int64_t stride, int64_t count) {
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j) {
    const int64_t start = (j / stride) * gpus * stride + j % stride;
    for (int64_t i = 0; i < gpus; ++i) groups[static_cast<size_t>(j)].push_back(start + i * stride);
  }
  return groups;
}

// nccl-tests' count column: elements of float per rank buffer.
int64_t element_count(CollectiveOp op, int64_t bytes, int64_t ranks) {
  const int64_t elements = bytes / 4;
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter ? elements / ranks
                                                                              : elements;
}

// nccl-tests prints times with 2 decimals under 10 ms and fewer beyond.
std::string time_text(double us) { return fixed(us, us < 1e4 ? 2 : (us < 1e6 ? 1 : 0)); }

}  // namespace

CommandSpec collective_command_spec() {
  return {"collective",
          "Predict a collective's time and bandwidth over a range of sizes (nccl-tests layout).",
          {"SCENARIO"},
          {{"--op", "OP", false,
            "all_reduce (default), all_gather, reduce_scatter, broadcast, all_to_all"},
           {"--gpus", "N", false, "GPUs in the group (default: one node)"},
           {"--stride", "S", false, "members are S GPUs apart (default 1)"},
           {"--concurrent", "K", false, "K such groups run at once and share links (default 1)"},
           {"--min-bytes", "SIZE", false, "smallest size (default 8)"},
           {"--max-bytes", "SIZE", false, "largest size (default 8GiB)"},
           {"--step-factor", "F", false, "multiply the size by F each row (default 2)"},
           {"--algo", "ALGO", false, "force ring, tree or nvls"},
           {"--proto", "PROTO", false, "force LL, LL128 or Simple"},
           {"--csv", "FILE", false, "also write the table as CSV (atomically)"},
           {"--set", "KEY=VALUE", true, "override a scenario key"},
           quiet_option()},
          "Sizes follow nccl-tests: all_reduce and broadcast count the buffer, all_gather the\n"
          "total output, reduce_scatter the total input, all_to_all what each rank sends\n"
          "(1/n of it to each rank); busbw = algbw x 2(n-1)/n for all_reduce, x (n-1)/n\n"
          "for all_gather, reduce_scatter and all_to_all, x 1 for broadcast. all_to_all\n"
          "runs as NCCL's grouped sends and receives: algo p2p.\n"
          "With --concurrent, the time shown is the slowest group's. With --csv, 'wrote FILE'\n"
          "on stderr (not with --quiet)."};
}

int run_collective_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  const CollectiveOp op = parse_op(parsed.value_or("--op", "all_reduce"));
  const int64_t stride = positive_int("--stride", parsed.value_or("--stride", "1"));
  const int64_t concurrent = positive_int("--concurrent", parsed.value_or("--concurrent", "1"));
  const int64_t min_bytes = parsed.bytes_or("--min-bytes", 8, 1);
  const int64_t max_bytes = parsed.bytes_or("--max-bytes", int64_t{8} << 30, 1);
  const int64_t factor = positive_int("--step-factor", parsed.value_or("--step-factor", "2"));
  if (factor < 2) throw UsageError("option '--step-factor' expects at least 2, found 1");
  if (min_bytes > max_bytes) {
    throw UsageError("option '--min-bytes' (" + std::to_string(min_bytes) +
                     ") is larger than '--max-bytes' (" + std::to_string(max_bytes) + ")");
  }
  const std::string scenario_path = parsed.positionals[0];
  const NetworkScenario net = load_network_scenario(scenario_path, parsed.values("--set"));
  // The scenario's `collectives` section, then the flags over it.
  collectives::ForcedChoice forced = collectives::read_forced_choice(net.values);
  sim::SourceLocation forced_where = net.values.where(
      forced.algorithm || !forced.protocol ? "collectives.algorithm" : "collectives.protocol");
  if (parsed.has("--algo")) {
    forced.algorithm = pick<Algorithm>(
        "--algo", parsed.value_or("--algo", ""),
        {{"ring", Algorithm::kRing}, {"tree", Algorithm::kTree}, {"nvls", Algorithm::kNvls}});
    forced_where = sim::SourceLocation{"--algo/--proto", 0, 0};
  }
  if (parsed.has("--proto")) {
    forced.protocol = pick<Protocol>(
        "--proto", parsed.value_or("--proto", ""),
        {{"LL", Protocol::kLL}, {"LL128", Protocol::kLL128}, {"Simple", Protocol::kSimple}});
    forced_where = sim::SourceLocation{"--algo/--proto", 0, 0};
  }
  const int64_t gpus = parsed.has("--gpus") ? positive_int("--gpus", parsed.value_or("--gpus", ""))
                                            : net.cluster.gpus_per_node();
  const auto input_error = [&](const std::string& message) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{"--gpus " + std::to_string(gpus), 0, 0}, "", message);
    sink.throw_if_any();
  };
  const int64_t last_gpu =
      ((concurrent - 1) / stride) * gpus * stride + (concurrent - 1) % stride + (gpus - 1) * stride;
  if (last_gpu >= net.cluster.gpu_count()) {
    input_error("the groups need GPU " + std::to_string(last_gpu) + " but the cluster of '" +
                scenario_path + "' has " + std::to_string(net.cluster.gpu_count()) +
                " GPUs; expected --gpus x --stride x ceil(--concurrent / --stride) <= " +
                std::to_string(net.cluster.gpu_count()));
  }
  const std::vector<std::vector<int64_t>> groups = place_groups(gpus, stride, concurrent);
  const int64_t per_node = collectives::uniform_ranks_per_node(net.cluster, groups[0]);
  if (per_node == 0) {
    input_error("expected the same number of group members on every node (" +
                std::to_string(net.cluster.gpus_per_node()) +
                " GPUs per node), found an uneven split; choose --gpus as a multiple or a "
                "divisor of the GPUs per node");
  }
  // An invalid forced choice (nvls across nodes, on A100) is an input error.
  const collectives::GroupGeometry geometry = collectives::geometry_of(net.cluster, groups[0]);

  const int64_t align =
      (op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter) ? 4 * gpus : 4;
  std::ostringstream table;
  std::ostringstream csv;
  csv << "bytes,elements,type,time_us,algbw_GBps,busbw_GBps,algo,proto,channels\n";
  table << "# clustersim collective: " << collectives::to_string(op) << " on " << gpus << " GPUs ("
        << geometry.nodes << " node(s) x " << geometry.ranks_per_node << "), stride " << stride
        << ", " << concurrent << " concurrent group(s)\n"
        << "# scenario " << scenario_path << " (" << net.cluster.gpu_count() << " GPUs, "
        << net.cluster.spec().node.preset << "), hardware profile " << net.profile.name << "\n#\n"
        << "#       size         count      type     time   algbw   busbw   algo  proto  channels\n"
        << "#        (B)    (elements)               (us)  (GB/s)  (GB/s)\n";
  double busbw_sum = 0;
  int rows = 0;
  int64_t previous_bytes = 0;
  for (int64_t size = min_bytes; size <= max_bytes; size *= factor) {
    const int64_t bytes = std::max(align, size / align * align);
    // Sizes below one element per rank round up to the same buffer: one row.
    if (bytes == previous_bytes) {
      if (size > max_bytes / factor) break;
      continue;
    }
    previous_bytes = bytes;
    std::vector<collectives::GroupPrediction> predictions;
    try {
      predictions =
          collectives::predict_concurrent(net.profile, net.cluster, groups, op, bytes, forced);
    } catch (const std::invalid_argument& e) {
      sim::DiagnosticSink sink;
      sink.add(forced_where, "", e.what());
      sink.throw_if_any();
    }
    size_t slowest_index = 0;
    for (size_t i = 1; i < predictions.size(); ++i) {
      if (predictions[i].seconds > predictions[slowest_index].seconds) slowest_index = i;
    }
    const collectives::GroupPrediction& slowest = predictions[slowest_index];
    const double us = slowest.seconds * 1e6;
    // One GPU and no launch overhead: nothing moves, 0 s (not an infinite rate).
    const double algbw =
        slowest.seconds > 0 ? static_cast<double>(bytes) / slowest.seconds / 1e9 : 0.0;
    const double busbw = slowest.busbw_Bps / 1e9;
    const collectives::CollectiveChoice& choice = slowest.tuned.choice;
    // An all-to-all is NCCL's grouped point-to-point, on the ring's slot here.
    const std::string algo_name =
        op == CollectiveOp::kAllToAll ? "p2p" : collectives::to_string(choice.algorithm);
    table << pad(std::to_string(bytes), 12)
          << pad(std::to_string(element_count(op, bytes, gpus)), 14) << pad("float", 10)
          << pad(time_text(us), 9) << pad(fixed(algbw, 2), 8) << pad(fixed(busbw, 2), 8)
          << pad(algo_name, 7) << pad(collectives::to_string(choice.protocol), 7)
          << pad(std::to_string(choice.channels), 10) << "\n";
    csv << bytes << ',' << element_count(op, bytes, gpus) << ",float," << fixed(us, 3) << ','
        << fixed(algbw, 4) << ',' << fixed(busbw, 4) << ',' << algo_name << ','
        << collectives::to_string(choice.protocol) << ',' << choice.channels << '\n';
    busbw_sum += busbw;
    ++rows;
    if (size > max_bytes / factor) break;
  }
  table << "# Avg bus bandwidth    : " << fixed(busbw_sum / rows, 3) << "\n";
  if (parsed.has("--csv")) {
    const std::string path = parsed.value_or("--csv", "");
    sim::write_file_atomically(path, csv.str());
    StatusLine(err, "clustersim collective", status_mode(parsed, err)).note("wrote " + path);
  }
  out << table.str();
  return 0;
}

}  // namespace clustersim::cli
