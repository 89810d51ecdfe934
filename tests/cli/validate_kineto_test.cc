// validate_kineto_trace: the measured fixture trace of
// tests/calibration/fixtures/kineto_small_scenario.yaml against its
// simulated step, and its errors.
#include "cli/validate_kineto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/kineto_comparison.h"
#include "calibration/kineto_trace.h"
#include "config/config_error.h"
#include "config/file_text.h"
#include "tests/support/gzip_input.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

const std::string kFixtures = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibration/fixtures/";
const std::string kScenario = kFixtures + "kineto_small_scenario.yaml";
const std::string kTrace = kFixtures + "kineto_small_trace.json";

const NetworkScenario& small_scenario() {
  static const NetworkScenario net = load_network_scenario(kScenario, {});
  return net;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; in >> field;) fields.push_back(field);
  return fields;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// The measured columns are the fixture's means (tests/calibration/
// kineto_comparison_test.cc derives them by hand); the simulated ones are
// whatever the model says today, checked against the simulated step itself.
TEST(ValidateKineto, PrintsOneRowPerClassAndReturnsTheCountedErrors) {
  const workloads::StepResult simulated = simulate_traced_step(small_scenario());
  std::ostringstream out;
  const std::vector<double> errors = validate_kineto_trace(small_scenario(), kTrace, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 13u) << out.str();
  EXPECT_EQ(lines[0], "# kineto trace " + kTrace +
                          " against simulated rank 0: mean of ProfilerStep#2-3 (2 step(s), 1 "
                          "warm-up skipped)");
  EXPECT_EQ(lines[1],
            "#              class  measured-us  simulated-us    error  measured-count  "
            "simulated-count");
  // class, measured-us, measured count, simulated count
  const std::vector<std::vector<std::string>> expected = {
      {"gemm", "5430.00", "15", "15"},
      {"flash_attention", "611.50", "4", "2"},
      {"nccl_all_gather", "965.00", "2", "3"},
      {"nccl_reduce_scatter", "945.00", "2", "2"},
      {"optimizer", "221.00", "1", "1"},
      {"elementwise", "2513.50", "51", "45"},
      // FSDP2's 3 copy-outs and 2 copy-ins; the fixture has no FSDP::... ranges.
      {"fsdp_copy", "0.00", "0", "5"},
      {"memory", "2.00", "1", "0"},
      {"step", "10585.00", "-", "-"},
      {"compute_busy", "8766.00", "-", "-"},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::vector<std::string> f = fields_of(lines[2 + i]);
    ASSERT_EQ(f.size(), 6u) << lines[2 + i];
    EXPECT_EQ(f[0], expected[i][0]);
    EXPECT_EQ(f[1], expected[i][1]) << f[0];
    EXPECT_EQ(f[4], expected[i][2]) << f[0];
    EXPECT_EQ(f[5], expected[i][3]) << f[0];
  }
  EXPECT_EQ(lines[12],
            "# step = ProfilerStep marker (iteration period); measured GPU window 10559.00 us; "
            "cases: classes with measured time, and the step");

  // Seven classes with measured time and the step; the class only the
  // trace has ("memory": the loss's device-to-host copy) counts as -100%.
  ASSERT_EQ(errors.size(), 8u);
  EXPECT_DOUBLE_EQ(errors[6], -1.0);
  const double step_us = simulated.step_time_s * 1e6;
  EXPECT_NEAR(errors[7], (step_us - 10585) / 10585, 1e-12);
  const calibration::StepSummary s = calibration::simulated_step_summary(simulated, 0);
  EXPECT_NEAR(errors[0], (s.totals(calibration::KernelClass::kGemm).duration_us - 5430) / 5430,
              1e-12);
  // The printed error of the step is the returned one, in percent.
  const std::vector<std::string> step_row = fields_of(lines[10]);
  char percent[32];
  std::snprintf(percent, sizeof percent, "%.1f%%", errors[7] * 100);
  EXPECT_EQ(step_row[3], percent);
}

TEST(ValidateKineto, ASimulatedResultIsReusedForAnotherRankAndWarmUp) {
  const workloads::StepResult rank3 = simulate_traced_step(small_scenario(), {3});
  std::ostringstream out;
  KinetoValidationOptions options;
  options.rank = 3;
  options.warmup_steps = 0;
  const std::vector<double> errors =
      validate_kineto_trace(rank3, calibration::read_kineto_trace(kTrace), out, options);
  EXPECT_EQ(errors.size(), 8u);
  // The fixture's distributedInfo says rank 0: the heading says so.
  EXPECT_NE(out.str().find("against simulated rank 3: mean of ProfilerStep#1-3 (3 step(s), 0 "
                           "warm-up skipped); the trace is rank 0's"),
            std::string::npos)
      << out.str();
}

// torch.profiler writes the traced process's rank and the job's world size
// (distributedInfo): the rank compared with is the trace's unless --rank
// says otherwise, and a trace of another job size is an error at its value.
TEST(ValidateKineto, TheTracesDistributedInfoGivesItsRankAndChecksTheWorldSize) {
  test_support::ScratchDir dir;
  const std::string fixture = sim::read_file_text(kTrace);
  const std::string from = "\"rank\": 0, \"world_size\": 8";
  ASSERT_NE(fixture.find(from), std::string::npos);
  std::string rank5 = fixture;
  rank5.replace(rank5.find(from), from.size(), "\"rank\": 5, \"world_size\": 8");
  const std::string path5 = dir.write("rank5.json", rank5);
  const test_support::Outcome r = test_support::run({"validate", kScenario, path5});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("against simulated rank 5: mean of"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("the trace is rank"), std::string::npos) << r.out;
  // Two traces of two ranks, one simulation: each against its own rank.
  const test_support::Outcome both = test_support::run({"validate", kScenario, kTrace, path5});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_NE(both.out.find(kTrace + " against simulated rank 0:"), std::string::npos);
  EXPECT_NE(both.out.find(path5 + " against simulated rank 5:"), std::string::npos);

  std::string world16 = fixture;
  world16.replace(world16.find(from), from.size(), "\"rank\": 0, \"world_size\": 16");
  const std::string path16 = dir.write("world16.json", world16);
  const test_support::Outcome w = test_support::run({"validate", kScenario, path16});
  EXPECT_EQ(w.code, 1);
  EXPECT_NE(w.err.find(path16 + ":"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("error: distributedInfo.world_size: expected the scenario's world size 8 "
                       "(a trace of one rank of the job the scenario describes), found 16"),
            std::string::npos)
      << w.err;
}

TEST(ValidateKineto, ErrorsNameTheFileAndLine) {
  test_support::ScratchDir dir;
  const std::string bad = dir.write("bad.json",
                                    "{\"traceEvents\": [\n"
                                    "  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                                    "\"ProfilerStep#1\", \"ts\": 0, \"dur\": 10},\n"
                                    "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", "
                                    "\"ts\": 1, \"dur\": -3}\n"
                                    "]}\n");
  std::ostringstream out;
  EXPECT_EQ(error_of([&] { validate_kineto_trace(small_scenario(), bad, out); }),
            bad +
                ":3:64: error: traceEvents[1].dur: expected a non-negative number of "
                "microseconds, found -3");
  EXPECT_EQ(out.str(), "");  // nothing printed before the error

  EXPECT_EQ(error_of([&] {
              validate_kineto_trace(small_scenario(), dir.file("none.json"), out);
            }).rfind(dir.file("none.json") + ": error: ", 0),
            0u);

  KinetoValidationOptions rank8;
  rank8.rank = 8;
  EXPECT_EQ(error_of([&] { validate_kineto_trace(small_scenario(), kTrace, out, rank8); }),
            "--rank 8: error: expected a rank below the scenario's world size 8, found 8");

  KinetoValidationOptions skip_all;
  skip_all.warmup_steps = 3;
  EXPECT_EQ(error_of([&] { validate_kineto_trace(small_scenario(), kTrace, out, skip_all); }),
            kTrace +
                ":178:3: error: traceEvents: expected more than the 3 warm-up step(s) to skip, "
                "found 3 ProfilerStep#N step(s): none left to compare");
}

// torch.profiler's tensorboard_trace_handler(use_gzip=True) writes
// trace.json.gz: `validate` prints the same for it as for the plain trace,
// but for the file name.
TEST(ValidateKineto, AGzippedTracePrintsWhatThePlainOneDoes) {
  const test_support::ScratchDir dir;
  const std::string gz =
      dir.write("trace.json.gz", test_support::gzip_bytes(test_support::read_all(kTrace)));
  const test_support::Outcome plain = test_support::run({"validate", kScenario, kTrace});
  const test_support::Outcome gzipped = test_support::run({"validate", kScenario, gz});
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(gzipped.code, 0) << gzipped.err;
  std::string expected = plain.out;
  ASSERT_NE(expected.find(kTrace), std::string::npos) << expected;
  expected.replace(expected.find(kTrace), kTrace.size(), gz);
  EXPECT_EQ(gzipped.out, expected);
  EXPECT_EQ(gzipped.err, plain.err);
}

}  // namespace
}  // namespace clustersim::cli
