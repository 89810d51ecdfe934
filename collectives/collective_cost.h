// Cost of one collective on an idle group, following the structure of NCCL's
// tuning model (src/graph/tuning.cc): time = launch overhead + latency +
// bytes / bandwidth for a given (algorithm, protocol, channels).
//
// Units: sizes in bytes, following nccl-tests: all_reduce and broadcast size =
// the buffer, all_gather = total output, reduce_scatter = total input,
// all_to_all = what each rank sends in all (bytes / n to each rank, itself
// included).
// Bandwidths in bytes per second; times as double seconds in CostBreakdown
// (use time() for SimTime, rounded to the nanosecond).
//
// Model:
//  * latency (us): ring = base + (steps - inter) x nvlink_hop + inter x
//    network_hop, steps = 2(n-1) for all_reduce, n-1 otherwise, inter =
//    2(nodes-1) for all_reduce, nodes-1 otherwise; tree (all_reduce only) =
//    base + 2 x ((ranks_per_node-1) x nvlink_hop + ceil(log2 nodes) x
//    network_hop); nvls = nvls latency.
//  * bus bandwidth of the bottleneck scope: ring/tree = min(NVLink ring
//    busbw, ranks_per_node x NIC effective bandwidth) (one ring/tree per rail,
//    each leaving the node through its own NIC); tree x tree efficiency;
//    nvls = nvls_busbw_efficiency x NVLink. Then x protocol efficiency,
//    capped at the protocol's max_busbw, x channels / max_channels.
//  * algbw = busbw / busbw_factor (tree all_reduce: busbw / 2, NCCL's ratio).
//  * ramp: NCCL runs fewer channels for small messages; with c channels the
//    transfer takes max(bytes, c x full_bandwidth_bytes / max_channels) /
//    algbw, so the time is flat until the channels fill.
//  * all_to_all is NCCL's grouped sends and receives (ncclGroupStart, a
//    send and a receive per peer: nccl-tests' alltoall), which run on the
//    ring algorithm's slot here (its latency: n - 1 steps, NCCL's p2p
//    schedule visits the peers in n - 1 rounds). Each rank sends
//    (r - 1) / n of the buffer over NVLink and (n - r) / n over its NIC
//    (r = ranks per node), both at once, so the bus bandwidth (x (n-1)/n) is
//    (n - 1) / max((r - 1) / (NVLink x nvlink_ring_efficiency),
//                  (n - r) / (NIC x network_efficiency)):
//    the NVLink rate inside a node, (n - 1) / (n - r) x the NIC's across
//    nodes. Then x protocol efficiency, capped, x channels as above. NCCL's
//    PXN (a peer on another rail reached through the NVLink peer on that
//    rail) is left out.
// Contention (max-min sharing of links) is applied elsewhere; this is the
// time on idle links.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "hardware/hardware_profile.h"
#include "sim/sim_time.h"

namespace clustersim::collectives {

enum class CollectiveOp { kAllGather, kReduceScatter, kAllReduce, kBroadcast, kAllToAll };
const char* to_string(CollectiveOp op);

// The group as the topology sees it. Invariant: ranks == nodes *
// ranks_per_node, all >= 1. Link rates are raw, unidirectional, per GPU
// (H100 SXM: NVLink 450e9; 400 Gb/s NIC per GPU: 50e9).
struct GroupGeometry {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  double nvlink_Bps_per_gpu = 0;
  double net_Bps_per_gpu = 0;
  bool nvls_available = false;  // the node's NVSwitch offers NVLS
};

struct CollectiveChoice {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int channels = 1;
};

struct CostBreakdown {
  double latency_s = 0;   // launch overhead + NCCL latency
  double transfer_s = 0;  // bytes (or the ramp floor) over algbw
  double busbw_Bps = 0;   // bus bandwidth of the chosen channels, before the ramp
  double seconds() const { return latency_s + transfer_s; }
  sim::SimTime time() const { return sim::SimTime::from_seconds_rounded(seconds()); }
};

// nccl-tests busbw factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter,
// all_to_all (n-1)/n; broadcast 1. n >= 1.
double busbw_factor(CollectiveOp op, int ranks);
// bytes / seconds.
double algbw_Bps(int64_t bytes, double seconds);
// algbw x busbw_factor.
double busbw_Bps(CollectiveOp op, int ranks, int64_t bytes, double seconds);
// Bytes each rank sends in a ring: all_reduce 2(n-1)/n x size, all_gather and
// reduce_scatter (n-1)/n x size, broadcast size (every rank but the last
// forwards the buffer); all_to_all (n-1)/n x size to its peers.
double ring_bytes_sent_per_rank(CollectiveOp op, int ranks, int64_t bytes);

// "" when `choice` can run `op` on `geometry` with `profile`; otherwise why
// not (e.g. "nvls needs one node (group spans 2)").
std::string why_invalid(const HardwareProfile& profile, const GroupGeometry& geometry,
                        CollectiveOp op, const CollectiveChoice& choice);

// Precondition: why_invalid(...) is "" and bytes >= 0 (checked: InvariantError).
CostBreakdown collective_cost(const HardwareProfile& profile, const GroupGeometry& geometry,
                              CollectiveOp op, int64_t bytes, const CollectiveChoice& choice);

}  // namespace clustersim::collectives
