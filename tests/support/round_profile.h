// A hardware profile with round numbers for the collective cost tests, so
// that expectations can be computed by hand: no launch overhead, 4 channels,
// every protocol at full efficiency with no cap and no ramp, hop latencies
// base 10 us, NVLink hop 1 us, network hop 5 us.
#pragma once

#include "hardware/hardware_profile.h"

namespace clustersim::collectives {

inline HardwareProfile round_profile(double nvlink_efficiency = 1.0,
                                     double network_efficiency = 1.0) {
  HardwareProfile p;
  p.name = "round";
  p.launch_overhead_us = 0;
  p.max_channels = 4;
  p.nvlink_ring_efficiency = nvlink_efficiency;
  p.network_efficiency = network_efficiency;
  p.tree_efficiency = 1.0;
  for (Protocol proto : kAllProtocols) {
    ProtocolParams& pp = p.protocol(proto);
    pp.ring = HopLatency{10, 1, 5};
    pp.tree = HopLatency{10, 1, 5};
    pp.efficiency = 1.0;
    pp.max_busbw_Bps = 1e15;
    pp.full_bandwidth_bytes = 0;
  }
  return p;
}

}  // namespace clustersim::collectives
