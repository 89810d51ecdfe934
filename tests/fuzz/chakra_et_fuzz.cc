// libFuzzer target: arbitrary bytes as a Chakra ET file.
//
// Built only with -DCLUSTERSIM_FUZZ=ON and clang (scripts/fuzz does both).
// Bad input must end in a sim::ConfigError, never in a crash, a sanitizer
// report or a hang. And what reads, round-trips: writing a trace that was
// read and reading that again gives the same trace bytes (a failure of that
// aborts, so that libFuzzer keeps the input).
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "workloads/chakra/chakra_trace.h"

namespace chakra = clustersim::workloads::chakra;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "chakra_et_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Protobuf logs every non-UTF-8 string it rejects; the reader reports
  // those itself, and the log would drown libFuzzer's output.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  chakra::Trace trace;
  try {
    trace = chakra::parse_trace(bytes, "fuzz.0.et");
  } catch (const clustersim::sim::ConfigError&) {
    return 0;
  }

  const std::string written = chakra::serialize_trace(trace);
  try {
    const chakra::Trace back = chakra::parse_trace(written, "written.0.et");
    if (chakra::serialize_trace(back) != written) {
      fail("writing what was read back is not the same bytes", "");
    }
  } catch (const clustersim::sim::ConfigError& e) {
    fail("a trace clustersim wrote does not read back", e.what());
  }

  // The checks, on one rank and on two (peers in range), with and without
  // communicator groups.
  const chakra::CommGroups groups = {{"dp", {0, 1}}, {"tp", {1}}};
  for (const std::vector<chakra::Trace>& ranks :
       {std::vector<chakra::Trace>{trace}, std::vector<chakra::Trace>{trace, trace}}) {
    for (const chakra::CommGroups& g : {chakra::CommGroups{}, groups}) {
      try {
        chakra::check_traces(ranks, g);
      } catch (const clustersim::sim::ConfigError&) {
      }
      try {
        (void)chakra::detect_trace_form(ranks, g);
      } catch (const clustersim::sim::ConfigError&) {
      }
    }
  }
  // The standard form's all-gather totals, for any comm_size and total.
  for (const chakra::Node& n : trace.nodes) {
    std::string problem;
    if (n.comm_size) (void)chakra::all_gather_total(n, *n.comm_size, 8, problem);
  }
  return 0;
}
