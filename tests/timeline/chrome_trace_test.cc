#include "timeline/chrome_trace.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace clustersim::workloads {
namespace {

using sim::SimTime;

std::string trace_of(const std::vector<TraceRecord>& records) {
  std::ostringstream out;
  write_chrome_trace(records, out);
  return out.str();
}

// A kernel of rank 0 and an all-gather of rank 8.
std::vector<TraceRecord> two_records() {
  TraceRecord kernel;
  kernel.rank = 0;
  kernel.track = "compute";
  kernel.name = "attention";
  kernel.category = "kernel";
  kernel.start = SimTime::ns(12345);
  kernel.duration = SimTime::ns(1500);
  kernel.unit = 3;
  kernel.micro_batch = 0;
  kernel.phase = Phase::kForward;

  TraceRecord gather;
  gather.rank = 8;
  gather.track = "comm";
  gather.name = "all_gather";
  gather.category = "all_gather";
  gather.start = SimTime::ms(1);
  gather.duration = SimTime::ns(250001);
  gather.unit = kRootUnit;
  gather.micro_batch = 1;
  gather.phase = Phase::kBackward;
  gather.bytes = 1048576;
  gather.group_size = 8;
  gather.wait = SimTime::ns(1200);
  gather.algorithm = "ring";
  gather.protocol = "Simple";
  return {kernel, gather};
}

TEST(ChromeTrace, TwoRecordsExactly) {
  EXPECT_EQ(
      trace_of(two_records()),
      "{\n"
      "\"traceEvents\":[\n"
      R"({"ph":"M","pid":0,"name":"process_name","args":{"name":"rank 0"}},)"
      "\n"
      R"({"ph":"M","pid":0,"name":"process_sort_index","args":{"sort_index":0}},)"
      "\n"
      R"({"ph":"M","pid":0,"tid":1,"name":"thread_name","args":{"name":"compute"}},)"
      "\n"
      R"({"ph":"M","pid":0,"tid":1,"name":"thread_sort_index","args":{"sort_index":1}},)"
      "\n"
      R"({"ph":"M","pid":8,"name":"process_name","args":{"name":"rank 8"}},)"
      "\n"
      R"({"ph":"M","pid":8,"name":"process_sort_index","args":{"sort_index":8}},)"
      "\n"
      R"({"ph":"M","pid":8,"tid":2,"name":"thread_name","args":{"name":"comm"}},)"
      "\n"
      R"({"ph":"M","pid":8,"tid":2,"name":"thread_sort_index","args":{"sort_index":2}},)"
      "\n"
      R"({"ph":"X","pid":0,"tid":1,"ts":12.345,"dur":1.5,"name":"attention","cat":"kernel",)"
      R"("args":{"phase":"forward","unit":"block 3","micro_batch":0}},)"
      "\n"
      R"({"ph":"X","pid":8,"tid":2,"ts":1000,"dur":250.001,"name":"all_gather",)"
      R"("cat":"all_gather","args":{"phase":"backward","unit":"root","micro_batch":1,)"
      R"("bytes":1048576,"group_size":8,"wait_us":1.2,"algorithm":"ring","protocol":"Simple"}})"
      "\n"
      "],\n"
      "\"displayTimeUnit\":\"ns\"\n"
      "}\n");
}

TEST(ChromeTrace, EmptyInputIsAValidEmptyTrace) {
  EXPECT_EQ(trace_of({}), "{\n\"traceEvents\":[],\n\"displayTimeUnit\":\"ns\"\n}\n");
}

TEST(ChromeTrace, TrackIdsAreFixedAndMetadataSorted) {
  std::vector<TraceRecord> records(4);
  const char* tracks[] = {"pcie", "host", "custom", "compute"};
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].rank = 5 - static_cast<int64_t>(i % 2) * 5;  // 5, 0, 5, 0
    records[i].track = tracks[i];
    records[i].name = "k";
    records[i].category = "kernel";
    records[i].unit = kWholeModel;
  }
  const std::string text = trace_of(records);
  // Ranks ascending, tracks by id; an unknown track gets 6.
  const std::vector<std::string> in_order = {R"("pid":0,"name":"process_name")",
                                             R"("pid":0,"tid":0,"name":"thread_name")",
                                             R"("pid":0,"tid":1,"name":"thread_name")",
                                             R"("pid":5,"name":"process_name")",
                                             R"("pid":5,"tid":5,"name":"thread_name")",
                                             R"("pid":5,"tid":6,"name":"thread_name")",
                                             R"("name":"custom")",
                                             R"("ph":"X","pid":5,"tid":5)",
                                             R"("ph":"X","pid":0,"tid":0)",
                                             R"("ph":"X","pid":5,"tid":6)",
                                             R"("ph":"X","pid":0,"tid":1)",
                                             R"("unit":"optimizer")"};
  size_t at = 0;
  for (const std::string& piece : in_order) {
    const size_t found = text.find(piece, at);
    ASSERT_NE(found, std::string::npos) << piece << " after offset " << at << " in\n" << text;
    at = found;
  }
}

TEST(ChromeTrace, IdenticalInputGivesIdenticalBytes) {
  EXPECT_EQ(trace_of(two_records()), trace_of(two_records()));
}

}  // namespace
}  // namespace clustersim::workloads
