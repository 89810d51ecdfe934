// The grid of a `clustersim sweep`: axes (a scenario key and the values it
// takes) from the scenario's `sweep.axes` and from `--grid` flags, expanded
// into points (one KEY=VALUE override per axis).
//
// Axis syntax: KEY=ITEM,ITEM,... where an ITEM is
//   * a literal value, passed to the scenario loader as `--set KEY=ITEM`
//     would be (so it is validated exactly like the file: "80GiB", "true");
//   * an integer range A..B:xF, the geometric series A, A*F, A*F^2, ... <= B
//     (F >= 2), e.g. 8..1024:x2;
//   * an integer range A..B:+S, the arithmetic series A, A+S, ... <= B (S >= 1);
//   * `divisors` (the only item of its axis): every divisor of the point's
//     data-parallel size, ascending. That size is world GPUs / tp computed
//     for each point from its own values (cluster.nodes x GPUs per node and
//     workload.parallelism.tp after the other axes, --set and the file), so
//     sweeping tp or the cluster next to a `divisors` axis gives each point
//     the divisors of its own dp size: meant for
//     workload.parallelism.shard_group_size and replica_group_size.
// `sweep.axes` holds several axes separated by ';', e.g.
//   "workload.parallelism.shard_group_size=8..64:x2; workload.local_batch=1,2".
//
// Points are the cartesian product, ordered lexicographically by the index
// of each axis's value, axes in order (the first axis slowest). A
// `divisors` axis has as many values as the point's dp size has divisors and
// is ordered by the divisor itself, so that points with the same divisor
// stay together even when dp sizes differ (tp swept).
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_schema.h"
#include "config/units.h"

namespace clustersim::cli {

struct SweepAxis {
  std::string key;                  // a scenario key, e.g. "workload.parallelism.tp"
  std::vector<std::string> values;  // expanded items; empty when `divisors`
  bool divisors = false;
};

// One axis "KEY=ITEM,...". On failure the error says what was expected and
// found (the caller adds where: the flag or the scenario key).
sim::Parsed<SweepAxis> parse_sweep_axis(std::string_view text);

// Several axes separated by ';' (blank pieces ignored); a key given twice is
// an error.
sim::Parsed<std::vector<SweepAxis>> parse_sweep_axes(std::string_view text);

// Divisors of n > 0, ascending.
std::vector<int64_t> divisors_of(int64_t n);

struct SweepPoint {
  std::vector<std::string> values;  // one per axis, in axis order
  // Non-empty when the point cannot be run whatever the simulation says
  // (its dp size could not be computed for a `divisors` axis): the reason.
  std::string invalid_reason;
};

// The data-parallel size of a point given its other overrides (KEY=VALUE
// of every non-`divisors` axis): dp > 0, or an error message.
struct DpSize {
  int64_t dp = 0;
  std::string error;
};
using DpSizeOf = std::function<DpSize(const std::vector<std::string>& overrides)>;

// The points of the grid, in grid order (see the top of this file).
// `dp_size_of` is called once per combination of the other axes, and only
// when some axis is `divisors`.
std::vector<SweepPoint> expand_sweep_grid(const std::vector<SweepAxis>& axes,
                                          const DpSizeOf& dp_size_of);

// "KEY=VALUE" for each axis of a point (an empty value, left by an invalid
// `divisors` point, gives no override).
std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point);

// Declares section `sweep` with `sweep.axes` (string, syntax above).
void add_sweep_keys(sim::ConfigSchema& schema);

}  // namespace clustersim::cli
