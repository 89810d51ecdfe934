// libFuzzer target: the measurement files `calibrate` and `validate` read:
// GEMM and attention CSV (calibration/compute_measurements.h), collective CSV
// and nccl-tests stdout (calibration/collective_measurements.h), the first
// byte choosing which. Properties: fuzz_support.h (a ConfigError pointing
// inside the input).
#include <string>
#include <string_view>

#include "calibration/collective_measurements.h"
#include "calibration/compute_measurements.h"
#include "tests/fuzz/fuzz_support.h"

namespace fz = clustersim::fuzz;
namespace cal = clustersim::calibration;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fz::bytes(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      fz::parses([&] { cal::parse_gemm_csv(text, "fuzz.csv"); }, "fuzz.csv", text);
      break;
    case 1:
      fz::parses([&] { cal::parse_attention_csv(text, "fuzz.csv"); }, "fuzz.csv", text);
      break;
    case 2:
      fz::parses([&] { cal::parse_collective_csv(text, "fuzz.csv"); }, "fuzz.csv", text);
      break;
    case 3:
      fz::parses([&] { cal::parse_nccl_tests_output(text, "fuzz.txt", "all_reduce"); }, "fuzz.txt",
                 text);
      break;
    case 4:
      // Without a hint the collective comes from the file name.
      fz::parses([&] { cal::parse_collective_measurements(text, "all_gather_perf.txt"); },
                 "all_gather_perf.txt", text);
      break;
    default:
      fz::parses([&] { cal::parse_collective_measurements(text, "fuzz.txt", "reduce_scatter"); },
                 "fuzz.txt", text);
      break;
  }
  return 0;
}
