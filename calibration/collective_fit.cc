#include "calibration/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "config/text_fields.h"
#include "sim/check.h"

namespace clustersim::calibration {

namespace {

using collectives::Algorithm;
using collectives::CollectiveOp;
using collectives::GroupGeometry;
using collectives::HardwareProfile;
using collectives::Protocol;

CollectiveOp op_of(const std::string& name) {
  if (name == "all_gather") return CollectiveOp::kAllGather;
  if (name == "reduce_scatter") return CollectiveOp::kReduceScatter;
  if (name == "broadcast") return CollectiveOp::kBroadcast;
  return CollectiveOp::kAllReduce;
}

std::string number(double v, const char* format = "%.4g") {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

int ceil_log2(int64_t x) {
  int d = 0;
  while ((int64_t{1} << d) < x) ++d;
  return d;
}

// The raw (unidirectional, per GPU) rate of the group's bottleneck scope, bytes/s.
double raw_rate(const GroupGeometry& g, Algorithm algorithm) {
  if (algorithm == Algorithm::kNvls) return g.nvlink_Bps_per_gpu;
  double rate = std::numeric_limits<double>::infinity();
  if (g.ranks_per_node > 1) rate = g.nvlink_Bps_per_gpu;
  if (g.nodes > 1) rate = std::min(rate, static_cast<double>(g.ranks_per_node) * g.net_Bps_per_gpu);
  return rate;
}

// Whether the network, not NVLink, is the raw bottleneck.
bool network_bound(const GroupGeometry& g) {
  return g.nodes > 1 &&
         (g.ranks_per_node == 1 ||
          static_cast<double>(g.ranks_per_node) * g.net_Bps_per_gpu < g.nvlink_Bps_per_gpu);
}

// How transfer bytes turn into bus bytes: tree all_reduce moves 2 x the
// buffer over its busbw (NCCL's ratio), the others the nccl-tests factor.
double bus_factor(CollectiveOp op, Algorithm algorithm, int ranks) {
  return algorithm == Algorithm::kTree ? 2.0 : collectives::busbw_factor(op, ranks);
}

struct Choice {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  bool operator==(const Choice&) const = default;
};

struct GroupKey {
  CollectiveOp op;
  Algorithm algorithm;
  Protocol protocol;
  bool network;
  auto tie() const {
    return std::tuple(static_cast<int>(op), static_cast<int>(algorithm), static_cast<int>(protocol),
                      network);
  }
  bool operator<(const GroupKey& o) const { return tie() < o.tie(); }
};

// What one group's fit says, in the profile's terms.
struct GroupFit {
  GroupKey key;
  int cases = 0;
  double efficiency = 0;  // busbw / raw bottleneck rate (includes the protocol's fraction)
  bool efficiency_fitted = false;
  double full_bytes = 0;  // the ramp
  bool full_bytes_fitted = false;
  int cases_below_ramp = 0;
  // Latency terms, microseconds (nvls: base_us is its latency).
  double base_us = 0, nvlink_hop_us = 0, network_hop_us = 0;
  bool base_fitted = false, nvlink_hop_fitted = false, network_hop_fitted = false;
  double raw_Bps = 0;          // the raw bottleneck rate of its (first) case
  bool network_bound = false;  // the network, not NVLink, is that bottleneck
  FitGroupReport report;
};

const collectives::HopLatency& hops_of(const HardwareProfile& p, Algorithm a, Protocol q) {
  return a == Algorithm::kTree ? p.protocol(q).tree : p.protocol(q).ring;
}

// Fit of one group at a given ramp F.
struct Attempt {
  LinearProblem problem;
  LinearFit fit;
  double cost = 0;
};

Attempt fit_group_at(const std::vector<const CollectiveCase*>& cases, const GroupKey& key,
                     const HardwareProfile& base, double full_bytes,
                     const RobustFitOptions& options) {
  const bool nvls = key.algorithm == Algorithm::kNvls;
  std::vector<std::string> names = {"inverse_efficiency", "base_us"};
  if (!nvls) names.insert(names.end(), {"network_hop_us", "nvlink_hop_us"});
  Attempt a{LinearProblem(static_cast<Eigen::Index>(cases.size()), names), {}, 0};
  LinearProblem& p = a.problem;
  const collectives::ProtocolParams& pp = base.protocol(key.protocol);
  double max_efficiency = nvls ? std::numeric_limits<double>::infinity() : pp.efficiency;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CollectiveCase& c = *cases[i];
    const GroupGeometry& g = c.geometry;
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    const double t = c.measured_s;
    const double bytes = std::max(static_cast<double>(c.row.bytes), full_bytes);
    p.design(r, 0) =
        bytes * bus_factor(c.op, key.algorithm, g.ranks) / raw_rate(g, key.algorithm) / t;
    p.design(r, 1) = 1e-6 / t;
    if (!nvls) {
      const bool ar = c.op == CollectiveOp::kAllReduce;
      double nvlink_steps = 0, network_steps = 0;
      if (key.algorithm == Algorithm::kTree) {
        nvlink_steps = 2.0 * (g.ranks_per_node - 1);
        network_steps = 2.0 * ceil_log2(g.nodes);
      } else {
        const int steps = ar ? 2 * (g.ranks - 1) : g.ranks - 1;
        const int inter = g.nodes == 1 ? 0 : (ar ? 2 * (g.nodes - 1) : g.nodes - 1);
        nvlink_steps = steps - inter;
        network_steps = inter;
      }
      p.design(r, 2) = network_steps * 1e-6 / t;
      p.design(r, 3) = nvlink_steps * 1e-6 / t;
    } else {
      // NVLS all_reduce: each GPU sends and receives the buffer once.
      max_efficiency = std::min(max_efficiency, 2.0 * (g.ranks - 1) / g.ranks);
    }
    p.target[r] = 1.0 - base.launch_overhead_us * 1e-6 / t;
  }
  // Bounds and the base profile's values for what the cases cannot identify.
  const GroupGeometry& g0 = cases.front()->geometry;
  double base_efficiency = 0;
  if (nvls) {
    base_efficiency = base.nvls_busbw_efficiency;
    p.fallback[1] = base.nvls_latency_us;
  } else {
    const collectives::CostBreakdown cost = collectives::collective_cost(
        base, g0, cases.front()->op, 0, {key.algorithm, key.protocol, base.max_channels});
    base_efficiency = cost.busbw_Bps / raw_rate(g0, key.algorithm);
    const collectives::HopLatency& h = hops_of(base, key.algorithm, key.protocol);
    p.fallback[1] = h.base_us;
    p.fallback[2] = h.network_hop_us;
    p.fallback[3] = h.nvlink_hop_us;
  }
  p.lower[0] = 1.0 / max_efficiency;
  p.fallback[0] = 1.0 / std::min(base_efficiency, max_efficiency);
  for (Eigen::Index j = 1; j < p.parameters(); ++j) p.lower[j] = 0;
  // A term worth under 2% of every case's time (at the base value, latencies
  // at least 1 us) is left at the base: the fit would only trade it against
  // noise (a latency fitted to 16 GiB transfers).
  for (Eigen::Index j = 0; j < p.parameters(); ++j) {
    const double value = j == 0 ? p.fallback[j] : std::max(p.fallback[j], 1.0);
    double share = 0;
    for (Eigen::Index i = 0; i < p.design.rows(); ++i) {
      share = std::max(share, std::fabs(p.design(i, j)) * value);
    }
    p.fixed[static_cast<size_t>(j)] = share < 0.02;
  }
  a.fit = fit_linear(p, options);
  // Trimmed squared relative error: compares ramps without letting an
  // outlier decide.
  for (Eigen::Index i = 0; i < a.fit.residuals.size(); ++i) {
    a.cost += std::min(a.fit.residuals[i] * a.fit.residuals[i], 0.01);
  }
  return a;
}

GroupFit fit_group(const std::vector<const CollectiveCase*>& cases, const GroupKey& key,
                   const HardwareProfile& base, const RobustFitOptions& options) {
  const bool nvls = key.algorithm == Algorithm::kNvls;
  const double base_full = static_cast<double>(
      nvls ? base.nvls_full_bandwidth_bytes : base.protocol(key.protocol).full_bandwidth_bytes);
  double min_bytes = std::numeric_limits<double>::infinity(), max_bytes = 0;
  for (const CollectiveCase* c : cases) {
    min_bytes = std::min(min_bytes, static_cast<double>(c->row.bytes));
    max_bytes = std::max(max_bytes, static_cast<double>(c->row.bytes));
  }
  // Ramp candidates: 0 and 2^(k/4) from 4 KiB up to the largest message.
  std::vector<double> ramps = {0.0};
  for (int k = 48; std::pow(2.0, k / 4.0) <= max_bytes; ++k)
    ramps.push_back(std::pow(2.0, k / 4.0));
  std::optional<Attempt> best;
  double best_ramp = 0;
  const auto consider = [&](double ramp) {
    Attempt a = fit_group_at(cases, key, base, ramp, options);
    if (!best || a.cost < best->cost * (1 - 1e-12)) {
      best = std::move(a);
      best_ramp = ramp;
    }
  };
  for (double ramp : ramps) consider(ramp);
  // Refine between the grid's neighbours (golden section on log2 F).
  if (best_ramp > 0) {
    double lo = std::log2(best_ramp) - 0.25, hi = std::log2(best_ramp) + 0.25;
    const double phi = (std::sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 40; ++it) {
      const double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
      const double ca = fit_group_at(cases, key, base, std::exp2(a), options).cost;
      const double cb = fit_group_at(cases, key, base, std::exp2(b), options).cost;
      (ca <= cb ? hi : lo) = ca <= cb ? b : a;
    }
    consider(std::round(std::exp2((lo + hi) / 2)));
  }
  // No case below the fitted ramp, and none below the base's: the data
  // cannot see the ramp; keep the base's (refit with it).
  if (best_ramp <= min_bytes && base_full <= min_bytes) {
    best = fit_group_at(cases, key, base, base_full, options);
    best_ramp = base_full;
  }

  GroupFit out;
  out.key = key;
  out.cases = static_cast<int>(cases.size());
  out.full_bytes = best_ramp;
  out.raw_Bps = raw_rate(cases.front()->geometry, key.algorithm);
  out.network_bound = network_bound(cases.front()->geometry);
  for (const CollectiveCase* c : cases) {
    out.cases_below_ramp += static_cast<double>(c->row.bytes) < best_ramp ? 1 : 0;
  }
  out.full_bytes_fitted = out.cases_below_ramp > 0 || best_ramp != base_full;
  const LinearFit& fit = best->fit;
  out.efficiency = 1.0 / fit.x[0];
  out.efficiency_fitted = !fit.unidentified[0];
  out.base_us = fit.x[1];
  out.base_fitted = !fit.unidentified[1];
  if (!nvls) {
    out.network_hop_us = fit.x[2];
    out.network_hop_fitted = !fit.unidentified[2];
    out.nvlink_hop_us = fit.x[3];
    out.nvlink_hop_fitted = !fit.unidentified[3];
  }

  FitGroupReport& report = out.report;
  report.name = std::string(collectives::to_string(key.op)) + " " +
                collectives::to_string(key.algorithm) + " " + collectives::to_string(key.protocol) +
                " " + (key.network ? "network" : "nvlink");
  report.cases = out.cases;
  const std::vector<std::string>& names = best->problem.names;
  for (size_t j = 0; j < names.size(); ++j) {
    if (fit.bound_hit[j] == BoundHit::kLower) {
      report.notes.push_back(j == 0 ? "bus bandwidth hit its bound (the link rate x the "
                                      "protocol's data fraction)"
                                    : names[j] + " hit its bound 0");
    }
  }
  double sum = 0;
  int inliers = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Eigen::Index r = static_cast<Eigen::Index>(i);
    if (fit.weights[r] == 0) {
      report.outliers.push_back(cases[i]->row.where);
      report.notes.push_back("outlier (weight 0, residual " + number(fit.residuals[r] * 100) +
                             "%): " + cases[i]->row.where.to_string());
    } else {
      sum += fit.residuals[r] * fit.residuals[r];
      ++inliers;
    }
  }
  report.rms_relative_error = inliers > 0 ? std::sqrt(sum / inliers) : 0;
  report.notes.push_back(
      "busbw " + number(out.efficiency * raw_rate(cases.front()->geometry, key.algorithm) / 1e9) +
      " GB/s (efficiency " + number(out.efficiency) + " of the raw rate), latency base " +
      number(out.base_us) + " us" +
      (nvls ? std::string()
            : ", nvlink hop " + number(out.nvlink_hop_us) + " us" +
                  (out.nvlink_hop_fitted ? "" : " (kept)") + ", network hop " +
                  number(out.network_hop_us) + " us" + (out.network_hop_fitted ? "" : " (kept)")) +
      ", full bandwidth from " + number(out.full_bytes, "%.0f") + " B" +
      (out.full_bytes_fitted ? "" : " (kept)"));
  return out;
}

// Case-weighted mean of the values the groups identified.
struct Mean {
  double sum = 0;
  double weight = 0;
  std::vector<std::string> from;
  void add(double value, int cases, const std::string& group) {
    sum += value * cases;
    weight += cases;
    from.push_back(group);
  }
  bool any() const { return weight > 0; }
  double value() const { return sum / weight; }
  std::string source() const {
    std::string s = "fitted to ";
    for (size_t i = 0; i < from.size(); ++i) s += (i ? "; " : "") + from[i];
    return s + " (" + number(weight, "%.0f") + " cases)";
  }
};

std::string protocol_key(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "protocols.ll";
    case Protocol::kLL128:
      return "protocols.ll128";
    case Protocol::kSimple:
      return "protocols.simple";
  }
  return "";
}

HardwareProfile assemble(const HardwareProfile& base, const std::vector<GroupFit>& groups,
                         std::map<std::string, std::string>& notes) {
  HardwareProfile out = base;
  notes.clear();
  const auto groups_where = [&](auto&& predicate) {
    std::vector<const GroupFit*> found;
    for (const GroupFit& g : groups) {
      if (predicate(g)) found.push_back(&g);
    }
    return found;
  };

  // NVLink ring efficiency: from the protocol least likely to be capped.
  for (Protocol p : {Protocol::kSimple, Protocol::kLL128, Protocol::kLL}) {
    Mean mean;
    for (const GroupFit* g : groups_where([&](const GroupFit& f) {
           return f.key.algorithm == Algorithm::kRing && !f.key.network && f.key.protocol == p &&
                  f.efficiency_fitted;
         })) {
      mean.add(g->efficiency / base.protocol(p).efficiency, g->cases, g->report.name);
    }
    if (mean.any()) {
      out.nvlink_ring_efficiency = std::min(mean.value(), 1.0);
      notes["nvlink.ring_efficiency"] = mean.source();
      break;
    }
  }
  // Network efficiency: network-bound ring groups.
  for (Protocol p : {Protocol::kSimple, Protocol::kLL128, Protocol::kLL}) {
    Mean mean;
    for (const GroupFit* g : groups_where([&](const GroupFit& f) {
           return f.key.algorithm == Algorithm::kRing && f.network_bound && f.key.protocol == p &&
                  f.efficiency_fitted;
         })) {
      mean.add(g->efficiency / base.protocol(p).efficiency, g->cases, g->report.name);
    }
    if (mean.any()) {
      out.network_efficiency = std::min(mean.value(), 1.0);
      notes["network.efficiency"] = mean.source();
      break;
    }
  }
  // Protocol caps: a protocol whose cases run below ring x its data fraction
  // is capped there (NCCL's per-protocol ceilings); one whose cases beat the
  // base's cap raises it.
  for (Protocol p : collectives::kAllProtocols) {
    Mean capped;
    double highest = 0;
    for (const GroupFit* g : groups_where([&](const GroupFit& f) {
           return f.key.algorithm == Algorithm::kRing && !f.key.network && f.key.protocol == p &&
                  f.efficiency_fitted;
         })) {
      const double busbw = g->efficiency * g->raw_Bps;
      const double uncapped = out.nvlink_ring_efficiency * base.protocol(p).efficiency * g->raw_Bps;
      if (busbw < 0.99 * uncapped) capped.add(busbw, g->cases, g->report.name);
      highest = std::max(highest, busbw);
    }
    const std::string key = protocol_key(p) + ".max_busbw";
    if (capped.any()) {
      out.protocol(p).max_busbw_Bps = capped.value();
      notes[key] = "below ring x data fraction: " + capped.source();
    } else if (highest > base.protocol(p).max_busbw_Bps) {
      out.protocol(p).max_busbw_Bps = highest;
      notes[key] = "raised to the highest measured busbw of its ring cases";
    }
  }
  // Tree: relative to the ring busbw of the same scope.
  {
    Mean mean;
    for (const GroupFit* g : groups_where([](const GroupFit& f) {
           return f.key.algorithm == Algorithm::kTree && f.efficiency_fitted;
         })) {
      const double ring = g->network_bound ? out.network_efficiency : out.nvlink_ring_efficiency;
      mean.add(g->efficiency / (base.protocol(g->key.protocol).efficiency * ring), g->cases,
               g->report.name);
    }
    if (mean.any()) {
      out.tree_efficiency = std::min(mean.value(), 1.0);
      notes["tree.efficiency"] = mean.source();
    }
  }
  // NVLS.
  {
    Mean efficiency, latency, log_full;
    for (const GroupFit* g :
         groups_where([](const GroupFit& f) { return f.key.algorithm == Algorithm::kNvls; })) {
      if (g->efficiency_fitted) efficiency.add(g->efficiency, g->cases, g->report.name);
      if (g->base_fitted) latency.add(g->base_us, g->cases, g->report.name);
      if (g->full_bytes_fitted && g->full_bytes > 0) {
        log_full.add(std::log(g->full_bytes), g->cases, g->report.name);
      }
    }
    if (efficiency.any()) {
      out.nvls_busbw_efficiency = efficiency.value();
      notes["nvls.busbw_efficiency"] = efficiency.source();
    }
    if (latency.any()) {
      out.nvls_latency_us = latency.value();
      notes["nvls.latency"] = latency.source();
    }
    if (log_full.any()) {
      out.nvls_full_bandwidth_bytes = std::llround(std::exp(log_full.value()));
      notes["nvls.full_bandwidth_size"] = log_full.source();
    }
  }
  // Latencies and ramps per protocol.
  for (Protocol p : collectives::kAllProtocols) {
    for (Algorithm a : {Algorithm::kRing, Algorithm::kTree}) {
      Mean base_us, nvlink_hop, network_hop;
      for (const GroupFit* g : groups_where(
               [&](const GroupFit& f) { return f.key.algorithm == a && f.key.protocol == p; })) {
        if (g->base_fitted) base_us.add(g->base_us, g->cases, g->report.name);
        if (g->nvlink_hop_fitted) nvlink_hop.add(g->nvlink_hop_us, g->cases, g->report.name);
        if (g->network_hop_fitted) network_hop.add(g->network_hop_us, g->cases, g->report.name);
      }
      collectives::HopLatency& h =
          a == Algorithm::kTree ? out.protocol(p).tree : out.protocol(p).ring;
      std::string note;
      if (base_us.any()) {
        h.base_us = base_us.value();
        note += "base " + base_us.source();
      }
      if (nvlink_hop.any()) {
        h.nvlink_hop_us = nvlink_hop.value();
        note += std::string(note.empty() ? "" : "\n") + "nvlink_hop " + nvlink_hop.source();
      }
      if (network_hop.any()) {
        h.network_hop_us = network_hop.value();
        note += std::string(note.empty() ? "" : "\n") + "network_hop " + network_hop.source();
      }
      if (!note.empty()) {
        notes[protocol_key(p) + (a == Algorithm::kTree ? ".tree" : ".ring")] = note;
      }
    }
    Mean log_full;
    for (const GroupFit* g : groups_where([&](const GroupFit& f) {
           return f.key.algorithm != Algorithm::kNvls && f.key.protocol == p &&
                  f.full_bytes_fitted && f.full_bytes > 0;
         })) {
      log_full.add(std::log(g->full_bytes), g->cases, g->report.name);
    }
    if (log_full.any()) {
      out.protocol(p).full_bandwidth_bytes = std::llround(std::exp(log_full.value()));
      notes[protocol_key(p) + ".full_bandwidth_size"] = log_full.source();
    }
  }
  return out;
}

}  // namespace

std::vector<CollectiveCase> collective_cases(std::span<const CollectiveMeasurement> rows,
                                             const topology::Cluster& cluster,
                                             const collectives::ForcedChoice& forced,
                                             int64_t min_bytes, int* skipped) {
  sim::DiagnosticSink sink;
  std::vector<CollectiveCase> cases;
  int left_out = 0;
  for (const CollectiveMeasurement& row : rows) {
    if (row.gpus > cluster.gpu_count()) {
      sink.add(row.where, "gpus",
               "expected at most the scenario's " + std::to_string(cluster.gpu_count()) +
                   " GPUs, found " + std::to_string(row.gpus));
      continue;
    }
    if (row.gpus % row.gpus_per_node != 0 || row.gpus_per_node > cluster.gpus_per_node()) {
      sink.add(row.where, "gpus_per_node",
               "expected a divisor of gpus and at most the scenario's " +
                   std::to_string(cluster.gpus_per_node()) + " GPUs per node, found " +
                   std::to_string(row.gpus_per_node));
      continue;
    }
    CollectiveCase c;
    c.row = row;
    c.op = op_of(row.op);
    c.forced = forced;
    const std::string algo = sim::ascii_lower(row.algo);
    if (algo == "ring") {
      c.forced.algorithm = Algorithm::kRing;
    } else if (algo == "tree") {
      c.forced.algorithm = Algorithm::kTree;
    } else if (algo == "nvls") {
      c.forced.algorithm = Algorithm::kNvls;
    } else if (!algo.empty()) {
      sink.add(row.where, "algo", "expected Ring, Tree or NVLS, found '" + row.algo + "'");
      continue;
    }
    if (row.bytes < min_bytes) continue;
    if (row.time_us) {
      c.measured_s = *row.time_us * 1e-6;
    } else if (row.busbw_GBps && *row.busbw_GBps > 0) {
      c.measured_s = static_cast<double>(row.bytes) * collectives::busbw_factor(c.op, row.gpus) /
                     (*row.busbw_GBps * 1e9);
    }
    if (!(c.measured_s > 0)) {
      ++left_out;  // a bandwidth rounded to 0.00 says nothing about the time
      continue;
    }
    for (int i = 0; i < row.gpus; ++i) {
      c.gpus.push_back(cluster.first_gpu_of_node(i / row.gpus_per_node) + i % row.gpus_per_node);
    }
    c.geometry = collectives::geometry_of(cluster, c.gpus);
    cases.push_back(std::move(c));
  }
  sink.throw_if_any();
  if (skipped != nullptr) *skipped = left_out;
  return cases;
}

namespace {

// The tuner's reason why `forced` cannot run case `c`; "" when it can.
std::string why_forced_fails(const HardwareProfile& profile, const CollectiveCase& c,
                             const collectives::ForcedChoice& forced) {
  try {
    collectives::tune_collective(profile, c.geometry, c.op, c.row.bytes, forced);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

void check_forced_choices(std::span<const CollectiveCase> cases, const HardwareProfile& profile,
                          const sim::ConfigValues& scenario) {
  sim::DiagnosticSink sink;
  bool scenario_blamed = false;
  for (const CollectiveCase& c : cases) {
    const std::string problem = why_forced_fails(profile, c, c.forced);
    if (problem.empty()) continue;
    const collectives::ForcedChoice algorithm_only{c.forced.algorithm, std::nullopt,
                                                   c.forced.channels};
    const bool algorithm_fails =
        c.forced.algorithm &&
        (!c.forced.protocol || !why_forced_fails(profile, c, algorithm_only).empty());
    if (algorithm_fails && !c.row.algo.empty()) {
      sink.add(c.row.where, "algo", problem);
    } else if (!scenario_blamed) {
      // The same scenario key would fail on many rows: once is enough.
      scenario_blamed = true;
      const char* key = algorithm_fails ? "collectives.algorithm" : "collectives.protocol";
      sink.add(scenario.where(key), key,
               problem + " (for the row at " + c.row.where.to_string() + ")");
    }
  }
  sink.throw_if_any();
}

collectives::GroupPrediction predict_case(const HardwareProfile& profile,
                                          const topology::Cluster& cluster,
                                          const CollectiveCase& c) {
  const std::vector<std::vector<int64_t>> group{c.gpus};
  return collectives::predict_concurrent(profile, cluster, group, c.op, c.row.bytes, c.forced)
      .front();
}

CollectiveFit fit_collectives(std::span<const CollectiveCase> cases,
                              const topology::Cluster& cluster, const HardwareProfile& base,
                              const RobustFitOptions& options) {
  CLUSTERSIM_CHECK(!cases.empty(), "fit_collectives: at least one case");
  CollectiveFit out;
  HardwareProfile current = base;
  std::vector<Choice> assignment;
  double best_score = std::numeric_limits<double>::infinity();
  for (int round = 1; round <= 8; ++round) {
    std::vector<Choice> next;
    for (const CollectiveCase& c : cases) {
      const collectives::TunedCollective tuned =
          collectives::tune_collective(current, c.geometry, c.op, c.row.bytes, c.forced);
      next.push_back({tuned.choice.algorithm, tuned.choice.protocol});
    }
    if (next == assignment) break;
    assignment = std::move(next);
    std::map<GroupKey, std::vector<const CollectiveCase*>> groups;
    for (size_t i = 0; i < cases.size(); ++i) {
      const CollectiveCase& c = cases[i];
      groups[{c.op, assignment[i].algorithm, assignment[i].protocol, c.geometry.nodes > 1}]
          .push_back(&c);
    }
    std::vector<GroupFit> fits;
    for (const auto& [key, members] : groups)
      fits.push_back(fit_group(members, key, base, options));
    std::map<std::string, std::string> notes;
    current = assemble(base, fits, notes);
    // Hard assignments can cycle; keep the round whose profile predicts the
    // cases best (trimmed squared relative error, as the ramp search).
    double score = 0;
    for (const CollectiveCase& c : cases) {
      const double e = predict_case(current, cluster, c).seconds / c.measured_s - 1;
      score += std::min(e * e, 0.01);
    }
    if (score < best_score * (1 - 1e-12)) {
      best_score = score;
      out.profile = current;
      out.key_notes = std::move(notes);
      out.groups.clear();
      for (const GroupFit& f : fits) out.groups.push_back(f.report);
      out.rounds = round;
    }
  }
  return out;
}

}  // namespace clustersim::calibration
