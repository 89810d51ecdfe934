// Chrome Trace Event Format (JSON) for the tasks the step simulator recorded
// on traced ranks; opens in Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// Layout: {"traceEvents": [...], "displayTimeUnit": "ns"}, one event per
// line. Each rank is a process (pid = rank, named "rank N") and each stream
// a thread with a fixed id, so that tracks line up across ranks:
//   host 0, compute 1, comm 2, reduce 3, tp 4, pcie 5
// (a track name outside this list gets 6, 7, ... in order of first
// appearance). Metadata events come first (process_name and
// process_sort_index per rank, thread_name and thread_sort_index per track
// used on that rank; ranks ascending, tracks by id), then one complete
// event ("ph": "X") per record, in the input's order, with:
//   ts, dur   microseconds, written exactly to the nanosecond ("12.345")
//   name, cat the record's name and category
//   args      phase ("forward", ...), unit ("block 3", "root", "optimizer"),
//             micro_batch; for collectives (group_size > 0) also bytes,
//             group_size, wait_us (this rank's wait for the last member),
//             and algorithm and protocol when known; for copies (bytes > 0,
//             no group) bytes.
//
// Determinism: the output depends only on the records (byte-identical for
// identical input). Units: SimTime in, microseconds out.
// Thread safety: a pure function of its input; writes only to `out`.
#pragma once

#include <ostream>
#include <span>

#include "exec/step_result.h"

namespace clustersim::workloads {

void write_chrome_trace(std::span<const TraceRecord> records, std::ostream& out);

}  // namespace clustersim::workloads
