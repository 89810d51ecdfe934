#include "collectives/collective_cost.h"

#include <algorithm>
#include <limits>

#include "sim/check.h"

namespace clustersim::collectives {

namespace {

int ceil_log2(int x) {
  int d = 0;
  while ((1 << d) < x) ++d;
  return d;
}

void check_geometry(const GroupGeometry& g) {
  CLUSTERSIM_CHECK(g.ranks >= 1 && g.nodes >= 1 && g.ranks_per_node >= 1 &&
                       g.ranks == g.nodes * g.ranks_per_node,
                   "group geometry: ranks == nodes x ranks_per_node, all >= 1");
}

// Bus bandwidth of ring/tree over all channels, before protocol effects.
double ring_scope_busbw(const HardwareProfile& p, const GroupGeometry& g) {
  double bw = std::numeric_limits<double>::infinity();
  if (g.ranks_per_node > 1) bw = p.nvlink_ring_efficiency * g.nvlink_Bps_per_gpu;
  if (g.nodes > 1) {
    bw = std::min(bw, g.ranks_per_node * p.network_efficiency * g.net_Bps_per_gpu);
  }
  return bw;
}

// All-to-all's bus bandwidth (the header): NVLink and NIC in parallel, each
// carrying its share of the peers.
double all_to_all_busbw(const HardwareProfile& p, const GroupGeometry& g) {
  const double n = g.ranks;
  const double r = g.ranks_per_node;
  double seconds_per_byte = 0;  // per byte of buffer, on the slower of the two
  if (g.ranks_per_node > 1) {
    seconds_per_byte = (r - 1) / n / (p.nvlink_ring_efficiency * g.nvlink_Bps_per_gpu);
  }
  if (g.nodes > 1) {
    seconds_per_byte =
        std::max(seconds_per_byte, (n - r) / n / (p.network_efficiency * g.net_Bps_per_gpu));
  }
  return (n - 1) / n / seconds_per_byte;
}

double latency_us(const HardwareProfile& p, const GroupGeometry& g, CollectiveOp op,
                  const CollectiveChoice& c) {
  const ProtocolParams& pp = p.protocol(c.protocol);
  const bool ar = op == CollectiveOp::kAllReduce;
  switch (c.algorithm) {
    case Algorithm::kRing: {
      const int steps = ar ? 2 * (g.ranks - 1) : g.ranks - 1;
      const int inter = g.nodes == 1 ? 0 : (ar ? 2 * (g.nodes - 1) : g.nodes - 1);
      return pp.ring.base_us + (steps - inter) * pp.ring.nvlink_hop_us +
             inter * pp.ring.network_hop_us;
    }
    case Algorithm::kTree:
      return pp.tree.base_us + 2.0 * ((g.ranks_per_node - 1) * pp.tree.nvlink_hop_us +
                                      ceil_log2(g.nodes) * pp.tree.network_hop_us);
    case Algorithm::kNvls:
      return p.nvls_latency_us;
  }
  return 0;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kBroadcast:
      return "broadcast";
    case CollectiveOp::kAllToAll:
      return "all_to_all";
  }
  return "?";
}

double busbw_factor(CollectiveOp op, int ranks) {
  CLUSTERSIM_CHECK(ranks >= 1, "busbw_factor: ranks >= 1");
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

double algbw_Bps(int64_t bytes, double seconds) {
  CLUSTERSIM_CHECK(seconds > 0, "algbw: time > 0");
  return static_cast<double>(bytes) / seconds;
}

double busbw_Bps(CollectiveOp op, int ranks, int64_t bytes, double seconds) {
  return algbw_Bps(bytes, seconds) * busbw_factor(op, ranks);
}

double ring_bytes_sent_per_rank(CollectiveOp op, int ranks, int64_t bytes) {
  return busbw_factor(op, ranks) * static_cast<double>(bytes);
}

std::string why_invalid(const HardwareProfile& p, const GroupGeometry& g, CollectiveOp op,
                        const CollectiveChoice& c) {
  check_geometry(g);
  if (c.channels < 1 || c.channels > p.max_channels) {
    return "channels must be in 1.." + std::to_string(p.max_channels) + " (found " +
           std::to_string(c.channels) + ")";
  }
  if (g.ranks > 1) {
    if (g.ranks_per_node > 1 && !(g.nvlink_Bps_per_gpu > 0)) return "NVLink bandwidth must be > 0";
    if (g.nodes > 1 && !(g.net_Bps_per_gpu > 0)) return "network bandwidth must be > 0";
  }
  switch (c.algorithm) {
    case Algorithm::kRing:
      return "";
    case Algorithm::kTree:
      if (op != CollectiveOp::kAllReduce) {
        return std::string("tree runs only all_reduce (not ") + to_string(op) + ")";
      }
      return "";
    case Algorithm::kNvls:
      if (!p.nvls_supported) return "nvls is not supported by hardware profile '" + p.name + "'";
      if (!g.nvls_available) return "nvls is not available on this group's NVSwitch";
      if (g.nodes != 1) {
        return "nvls needs one node (group spans " + std::to_string(g.nodes) + ")";
      }
      if (op != CollectiveOp::kAllReduce) {
        return std::string("nvls is modelled only for all_reduce (not ") + to_string(op) + ")";
      }
      if (c.protocol != Protocol::kSimple) {
        return std::string("nvls runs only the Simple protocol (not ") + to_string(c.protocol) +
               ")";
      }
      return "";
  }
  return "unknown algorithm";
}

CostBreakdown collective_cost(const HardwareProfile& p, const GroupGeometry& g, CollectiveOp op,
                              int64_t bytes, const CollectiveChoice& c) {
  const std::string why = why_invalid(p, g, op, c);
  CLUSTERSIM_CHECK(why.empty(), "collective_cost: valid choice: " + why);
  CLUSTERSIM_CHECK(bytes >= 0, "collective_cost: bytes >= 0");
  CostBreakdown out;
  if (g.ranks == 1) {
    out.latency_s = p.launch_overhead_us * 1e-6;  // a local copy at most; no communication
    return out;
  }
  out.latency_s = (p.launch_overhead_us + latency_us(p, g, op, c)) * 1e-6;

  const ProtocolParams& pp = p.protocol(c.protocol);
  double busbw = 0;
  int64_t full_bytes = pp.full_bandwidth_bytes;
  switch (c.algorithm) {
    case Algorithm::kRing:
      busbw = op == CollectiveOp::kAllToAll ? all_to_all_busbw(p, g) : ring_scope_busbw(p, g);
      break;
    case Algorithm::kTree:
      busbw = ring_scope_busbw(p, g) * p.tree_efficiency;
      break;
    case Algorithm::kNvls:
      busbw = p.nvls_busbw_efficiency * g.nvlink_Bps_per_gpu;
      full_bytes = p.nvls_full_bandwidth_bytes;
      break;
  }
  busbw = std::min(busbw * pp.efficiency, pp.max_busbw_Bps);
  const double share = static_cast<double>(c.channels) / p.max_channels;
  busbw *= share;
  out.busbw_Bps = busbw;

  const double algbw =
      c.algorithm == Algorithm::kTree ? busbw / 2.0 : busbw / busbw_factor(op, g.ranks);
  const double floor_bytes = static_cast<double>(full_bytes) * share;
  out.transfer_s = std::max(static_cast<double>(bytes), floor_bytes) / algbw;
  return out;
}

}  // namespace clustersim::collectives
