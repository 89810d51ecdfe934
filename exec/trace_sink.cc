#include "exec/trace_sink.h"

#include <algorithm>
#include <utility>

namespace clustersim::workloads {

void TraceSink::span(int64_t rank, std::string_view track, std::string_view name,
                     std::string_view category, int64_t start_ns, int64_t end_ns,
                     const TaskTag& tag, int64_t bytes) {
  TraceRecord rec;
  rec.rank = rank;
  rec.track = track;
  rec.name = name;
  rec.category = category;
  rec.start = sim::SimTime::ns(start_ns);
  rec.duration = sim::SimTime::ns(end_ns - start_ns);
  rec.unit = tag.unit;
  rec.micro_batch = tag.micro_batch;
  rec.phase = tag.phase;
  rec.bytes = bytes;
  records_.push_back(rec);
}

void TraceSink::comm(int64_t rank, std::string_view track, std::string_view name,
                     std::string_view category, int64_t start_ns, int64_t end_ns,
                     const CommDetail& detail, const TaskTag& tag) {
  span(rank, track, name, category, start_ns, end_ns, tag, detail.bytes);
  TraceRecord& rec = records_.back();
  rec.group_size = detail.group_size;
  rec.wait = sim::SimTime::ns(start_ns - detail.arrival_ns);
  rec.algorithm = detail.algorithm;
  rec.protocol = detail.protocol;
}

std::vector<TraceRecord> TraceSink::take() {
  std::stable_sort(records_.begin(), records_.end(),
                   [](const TraceRecord& a, const TraceRecord& b) {
                     if (a.rank != b.rank) return a.rank < b.rank;
                     return a.start < b.start;
                   });
  return std::move(records_);
}

}  // namespace clustersim::workloads
