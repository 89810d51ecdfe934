// Where the engines record what traced ranks did (TraceRecord, for the
// Chrome/Perfetto timeline): one way to build a record of a span of work and
// of a communication, and one order for the result.
//
// Units: integer nanoseconds in, SimTime in the records. Ownership: the
// string_views must outlive the records (they point into the program or the
// traces being run). Thread safety: none; one per simulation.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "exec/step_result.h"

namespace clustersim::workloads {

// What a recorded task belongs to (FSDP schedules know; Chakra graphs do not).
struct TaskTag {
  int32_t unit = kRootUnit;
  int32_t micro_batch = 0;
  Phase phase = Phase::kForward;
};

// What a recorded communication was.
struct CommDetail {
  int64_t bytes = 0;
  int64_t group_size = 0;
  int64_t arrival_ns = 0;  // when this rank reached it (its wait ends at the start)
  std::string_view algorithm;
  std::string_view protocol;
};

class TraceSink {
 public:
  // Work of `rank` from start_ns to end_ns on `track` (a kernel, a launch, a
  // copy of `bytes`, host work).
  void span(int64_t rank, std::string_view track, std::string_view name, std::string_view category,
            int64_t start_ns, int64_t end_ns, const TaskTag& tag = {}, int64_t bytes = 0);
  // A collective or send/recv of `rank`, from its start to its end.
  void comm(int64_t rank, std::string_view track, std::string_view name, std::string_view category,
            int64_t start_ns, int64_t end_ns, const CommDetail& detail, const TaskTag& tag = {});

  // The records by rank, then start time (recording order among equals).
  std::vector<TraceRecord> take();

 private:
  std::vector<TraceRecord> records_;
};

}  // namespace clustersim::workloads
