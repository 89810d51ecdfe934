#include "calibration/kineto_trace.h"

#include <gtest/gtest.h>

#include <string>

#include "config/text_fields.h"
#include "tests/support/config_errors.h"
#include "tests/support/gzip_input.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::calibration {
namespace {

const std::string kFixtures = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibration/fixtures/";

std::string error_of(std::string_view text) {
  try {
    parse_kineto_trace(text, "k.json");
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_class(const KinetoStep& step, KernelClass c, int count, double duration_us) {
  EXPECT_EQ(step.totals(c).count, count) << kernel_class_name(c);
  EXPECT_DOUBLE_EQ(step.totals(c).duration_us, duration_us) << kernel_class_name(c);
}

TEST(KinetoTrace, ClassifiesKernelNames) {
  using K = KernelClass;
  EXPECT_EQ(classify_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"), K::kGemm);
  EXPECT_EQ(classify_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"), K::kGemm);
  EXPECT_EQ(classify_kernel("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>"),
            K::kGemm);
  EXPECT_EQ(classify_kernel("ampere_bf16_s16816GEMM_bf16_128x128"), K::kGemm);
  EXPECT_EQ(classify_kernel("void flash_fwd_kernel<Flash_fwd_kernel_traits<cutlass::half_t>>"),
            K::kFlashAttention);
  EXPECT_EQ(classify_kernel("fmha_cutlassB_bf16_aligned_64x64_k128_sm80"), K::kFlashAttention);
  // cuDNN's SDPA backward around its main kernel (PyTorch 2.11 on an H200).
  EXPECT_EQ(classify_kernel("void cudnn::fusion::compute_dot_do_o_specialized<true, 128>"),
            K::kFlashAttention);
  EXPECT_EQ(classify_kernel("void cudnn::fusion::convert_dq_to_16bits<true>"),
            K::kFlashAttention);
  // The embedding's backward: sort, unique and scans of the token ids.
  EXPECT_EQ(classify_kernel("void at::native::krn_partials_per_segment<long>"), K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::compute_num_of_partial_segments<long>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("cub::detail::unique_by_key::DeviceUniqueByKeySweepKernel"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("cub::detail::scan::DeviceScanKernel<long>"), K::kElementwise);
  EXPECT_EQ(classify_kernel("cub::detail::scan::DeviceCompactInitKernel"), K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::GammaBetaBackwardCUDAKernelTemplate<bf16>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"), K::kNcclAllGather);
  EXPECT_EQ(classify_kernel("ncclKernel_ReduceScatter_RING_LL_Sum_bfloat16"),
            K::kNcclReduceScatter);
  EXPECT_EQ(classify_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), K::kNcclAllReduce);
  EXPECT_EQ(classify_kernel("ncclDevKernel_SendRecv(ncclDevComm*)"), K::kNcclOther);
  // The NCCL prefix is case-sensitive: this is not an NCCL kernel.
  EXPECT_EQ(classify_kernel("ncclkernel_allgather"), K::kOther);
  EXPECT_EQ(classify_kernel("void at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor>"),
            K::kOptimizer);
  EXPECT_EQ(classify_kernel("adamw_update_kernel"), K::kOptimizer);
  EXPECT_EQ(classify_kernel("void at::native::vectorized_elementwise_kernel<4>"), K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous)::cunn_SoftMaxForward<8>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::vectorized_layer_norm_kernel<float>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("rms_norm_kernel"), K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::direct_copy_kernel_cuda"), K::kElementwise);
  EXPECT_EQ(classify_kernel("Memcpy DtoD (Device -> Device)", "gpu_memcpy"), K::kMemory);
  EXPECT_EQ(classify_kernel("Memset (Device)", "gpu_memset"), K::kMemory);
  // Inductor: fused pointwise/reduction kernels, matmul templates.
  EXPECT_EQ(classify_kernel("triton_poi_fused_mul_silu_3"), K::kElementwise);
  EXPECT_EQ(classify_kernel("triton_red_fused__to_copy_mean_mul_pow_rsqrt_0"), K::kElementwise);
  EXPECT_EQ(classify_kernel("triton_tem_fused_mm_0"), K::kGemm);
  // Embedding and loss kernels run as the simulator's elementwise class.
  EXPECT_EQ(classify_kernel("void at::native::indexSelectLargeIndex<c10::BFloat16>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("void at::native::nll_loss_forward_reduce_cuda_kernel_2d<float>"),
            K::kElementwise);
  EXPECT_EQ(classify_kernel("my_extension_kernel_0"), K::kOther);
  EXPECT_EQ(kernel_class_name(K::kNcclReduceScatter), "nccl_reduce_scatter");
  EXPECT_EQ(kernel_class_name(K::kFlashAttention), "flash_attention");
}

// The fixture, by hand (microseconds):
//  warm-up sgemm at 500 (no launch, before step 1): unattributed.
//  step 1, CPU marker [1000, 1500):
//    gemm [1100, 1300), nccl all-gather [1150, 1400) (overlaps the gemm),
//    flash [1300, 1400), elementwise [1420, 1450), Adam multi_tensor_apply
//    [1480, 1540): runs past the marker but was launched at 1450, in step 1.
//    GPU window [1100, 1540) = 440; compute busy = [1100, 1400) + 30 + 60 = 390.
//  step 2, CPU marker [1500, 2000):
//    gemm (nvjet) [1600, 1750), nccl reduce-scatter [1700, 1900),
//    reduce_kernel [1760, 1780) (no correlation: by its own start),
//    memcpy [1790, 1800), nccl all-reduce [1800, 1850), fmha [1850, 1890),
//    an extension kernel (other) [1900, 1910).
//    GPU window [1600, 1910) = 310; compute busy = 150 + 20 + 40 + 10 = 220.
TEST(KinetoTrace, ReadsStepsPerClassAndComputeBusyTime) {
  const KinetoTrace trace = read_kineto_trace(kFixtures + "kineto_two_steps.json");
  EXPECT_EQ(trace.unattributed_events, 1);
  ASSERT_EQ(trace.steps.size(), 2u);

  const KinetoStep& s1 = trace.steps[0];
  EXPECT_EQ(s1.number, 1);
  EXPECT_EQ(s1.where.to_string(), kFixtures + "kineto_two_steps.json:10:3");
  EXPECT_DOUBLE_EQ(s1.cpu_start_us, 1000);
  EXPECT_DOUBLE_EQ(s1.cpu_duration_us, 500);
  EXPECT_EQ(s1.gpu_events, 5);
  EXPECT_DOUBLE_EQ(s1.gpu_start_us, 1100);
  EXPECT_DOUBLE_EQ(s1.gpu_end_us, 1540);
  EXPECT_DOUBLE_EQ(s1.gpu_wall_us(), 440);
  EXPECT_DOUBLE_EQ(s1.compute_busy_us, 390);
  expect_class(s1, KernelClass::kGemm, 1, 200);
  expect_class(s1, KernelClass::kNcclAllGather, 1, 250);
  expect_class(s1, KernelClass::kFlashAttention, 1, 100);
  expect_class(s1, KernelClass::kElementwise, 1, 30);
  expect_class(s1, KernelClass::kOptimizer, 1, 60);
  expect_class(s1, KernelClass::kNcclReduceScatter, 0, 0);
  expect_class(s1, KernelClass::kMemory, 0, 0);
  expect_class(s1, KernelClass::kOther, 0, 0);

  const KinetoStep& s2 = trace.steps[1];
  EXPECT_EQ(s2.number, 2);
  EXPECT_DOUBLE_EQ(s2.cpu_start_us, 1500);
  EXPECT_DOUBLE_EQ(s2.cpu_duration_us, 500);
  EXPECT_EQ(s2.gpu_events, 7);
  EXPECT_DOUBLE_EQ(s2.gpu_start_us, 1600);
  EXPECT_DOUBLE_EQ(s2.gpu_end_us, 1910);
  EXPECT_DOUBLE_EQ(s2.compute_busy_us, 220);
  expect_class(s2, KernelClass::kGemm, 1, 150);
  expect_class(s2, KernelClass::kNcclReduceScatter, 1, 200);
  expect_class(s2, KernelClass::kNcclAllReduce, 1, 50);
  expect_class(s2, KernelClass::kElementwise, 1, 20);
  expect_class(s2, KernelClass::kMemory, 1, 10);
  expect_class(s2, KernelClass::kFlashAttention, 1, 40);
  expect_class(s2, KernelClass::kOther, 1, 10);
  expect_class(s2, KernelClass::kOptimizer, 0, 0);
  expect_class(s2, KernelClass::kNcclAllGather, 0, 0);
}

TEST(KinetoTrace, WithoutCorrelationAKernelBelongsToTheStepOfItsStart) {
  // The same kernel as in the fixture's step 1, without its launch: it starts
  // after marker 1 ended, so it counts in step 2.
  const KinetoTrace trace = parse_kineto_trace(
      R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#7", "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#8", "ts": 100, "dur": 100},
  {"ph": "X", "cat": "kernel", "name": "multi_tensor_apply_kernel", "ts": 90, "dur": 20},
  {"ph": "X", "cat": "kernel", "name": "multi_tensor_apply_kernel", "ts": 100, "dur": 20,
   "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 300, "dur": 5}
]})",
      "k.json");
  ASSERT_EQ(trace.steps.size(), 2u);
  EXPECT_EQ(trace.steps[0].number, 7);
  expect_class(trace.steps[0], KernelClass::kOptimizer, 1, 20);
  expect_class(trace.steps[1], KernelClass::kOptimizer, 1, 20);
  EXPECT_DOUBLE_EQ(trace.steps[1].gpu_wall_us(), 20);
  EXPECT_EQ(trace.unattributed_events, 1);
}

TEST(KinetoTrace, CopiesLaunchedInsideFsdpRangesAreFsdpCopies) {
  // FSDP2's ranges on the forward thread (pid 9, tid 725) and the autograd
  // thread ("771", written as a string), nested on 771 as in torch 2.11's
  // traces. A copy, a memcpy and an unknown kernel launched inside one are
  // fsdp_copy; an NCCL kernel and a GEMM launched there keep their class; a
  // copy launched outside, or inside a range of another thread, stays
  // elementwise. Compute busy time is as without the ranges (the copy
  // kernels count, the memcpy does not).
  const KinetoTrace trace = parse_kineto_trace(
      R"json({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, "tid": 725,
   "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::pre_forward", "pid": 9, "tid": 725,
   "ts": 100, "dur": 100},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::root_post_backward_callback",
   "pid": 9, "tid": "771", "ts": 500, "dur": 200},
  {"ph": "X", "cat": "user_annotation", "name": "FSDP::post_backward_reduce (layers.0)",
   "pid": 9, "tid": "771", "ts": 520, "dur": 50},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 725,
   "ts": 150, "dur": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 9, "tid": 725,
   "ts": 160, "dur": 1, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 725,
   "ts": 170, "dur": 1, "args": {"correlation": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 725,
   "ts": 180, "dur": 1, "args": {"correlation": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 725,
   "ts": 300, "dur": 1, "args": {"correlation": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": "771",
   "ts": 150, "dur": 1, "args": {"correlation": 6}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": "771",
   "ts": 650, "dur": 1, "args": {"correlation": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 725,
   "ts": 190, "dur": 1, "args": {"correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::bfloat16_copy_kernel_cuda", "ts": 200,
   "dur": 10, "args": {"correlation": 1}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "ts": 210,
   "dur": 7, "args": {"correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "ts": 220, "dur": 30,
   "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x256", "ts": 250, "dur": 40,
   "args": {"correlation": 4}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::direct_copy_kernel_cuda", "ts": 310,
   "dur": 5, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::direct_copy_kernel_cuda", "ts": 320,
   "dur": 3, "args": {"correlation": 6}},
  {"ph": "X", "cat": "kernel", "name": "void at::native::direct_copy_kernel_cuda", "ts": 660,
   "dur": 2, "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "some_unknown_kernel", "ts": 330, "dur": 4,
   "args": {"correlation": 8}}
]})json",
      "k.json");
  ASSERT_EQ(trace.steps.size(), 1u);
  const KinetoStep& step = trace.steps[0];
  expect_class(step, KernelClass::kFsdpCopy, 4, 10 + 7 + 2 + 4);
  expect_class(step, KernelClass::kNcclAllGather, 1, 30);
  expect_class(step, KernelClass::kGemm, 1, 40);
  expect_class(step, KernelClass::kElementwise, 2, 5 + 3);
  expect_class(step, KernelClass::kMemory, 0, 0);
  expect_class(step, KernelClass::kOther, 0, 0);
  // Kernels 200-210, 250-290, 310-315, 320-323, 330-334, 660-662.
  EXPECT_DOUBLE_EQ(step.compute_busy_us, 10 + 40 + 5 + 3 + 4 + 2);
}

TEST(KinetoTrace, AStepWithoutGpuWorkHasAnEmptyWindow) {
  const KinetoTrace trace = parse_kineto_trace(
      R"({"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0",
                          "ts": 5.5, "dur": 2.25}]})",
      "k.json");
  ASSERT_EQ(trace.steps.size(), 1u);
  EXPECT_EQ(trace.steps[0].gpu_events, 0);
  EXPECT_DOUBLE_EQ(trace.steps[0].gpu_wall_us(), 0);
  EXPECT_DOUBLE_EQ(trace.steps[0].cpu_duration_us, 2.25);
  EXPECT_DOUBLE_EQ(trace.steps[0].compute_busy_us, 0);
}

TEST(KinetoTrace, ReadsTheRankAndWorldSizeOfDistributedInfo) {
  const std::string step =
      R"("traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0",
                          "ts": 5.5, "dur": 2.25}])";
  const KinetoTrace with = parse_kineto_trace(
      "{\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 3,\n \"world_size\": 16}, " + step +
          "}",
      "k.json");
  EXPECT_EQ(with.rank, 3);
  EXPECT_EQ(with.world_size, 16);
  EXPECT_EQ(with.world_size_where.to_string(), "k.json:2:16");
  const KinetoTrace without = parse_kineto_trace("{" + step + "}", "k.json");
  EXPECT_FALSE(without.rank.has_value());
  EXPECT_FALSE(without.world_size.has_value());
  EXPECT_EQ(error_of("{\"distributedInfo\": {\"rank\": -1}, " + step + "}"),
            "k.json:1:30: error: distributedInfo.rank: expected an integer >= 0, found -1");
  EXPECT_EQ(error_of("{\"distributedInfo\": {\"world_size\": 0}, " + step + "}"),
            "k.json:1:36: error: distributedInfo.world_size: expected an integer >= 1, found 0");
  EXPECT_EQ(error_of("{\"distributedInfo\": [], " + step + "}"),
            "k.json:1:21: error: distributedInfo: expected an object (torch.profiler's rank and "
            "world_size), found an array");
}

TEST(KinetoTrace, RefusesADocumentWithoutTraceEvents) {
  EXPECT_EQ(error_of("[]"),
            "k.json:1:1: error: expected a JSON object with a \"traceEvents\" array "
            "(torch.profiler's Chrome trace), found an array");
  EXPECT_EQ(error_of("\n  {\"schemaVersion\": 1}"),
            "k.json:2:3: error: expected a member \"traceEvents\" (the array of trace events) in "
            "the top-level object, found none");
  EXPECT_EQ(error_of("{\"traceEvents\": {}}"),
            "k.json:1:17: error: traceEvents: expected an array of trace events, found an object");
}

TEST(KinetoTrace, RefusesATraceWithoutSteps) {
  EXPECT_EQ(error_of("{\"traceEvents\": [\n"
                     "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 1, "
                     "\"dur\": 2}]}"),
            "k.json:1:17: error: traceEvents: expected at least one ProfilerStep#N event (a "
            "torch.profiler step marker, cat user_annotation or cpu_op), found none");
}

TEST(KinetoTrace, ReportsEveryBadEventWithPositionAndPath) {
  const std::string message = error_of(
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"dur\": 2},\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 1, \"dur\": \"2\"},\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"ts\": 1, \"dur\": -2.5},\n"
      "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#x\", \"ts\": 1, \"dur\": "
      "2},\n"
      "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#\", \"ts\": 1, \"dur\": "
      "2},\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": 3, \"ts\": 1, \"dur\": 2},\n"
      "  {\"ph\": \"X\", \"name\": \"k\", \"ts\": 1, \"dur\": 2, \"args\": {\"correlation\": "
      "1.5}},\n"
      "  {\"name\": \"k\"},\n"
      "  7\n"
      "]}");
  EXPECT_EQ(message,
            "k.json:2:3: error: traceEvents[0]: expected a member \"ts\" (start time in "
            "microseconds), found none\n"
            "k.json:3:64: error: traceEvents[1].dur: expected a number (duration in "
            "microseconds), found \"2\"\n"
            "k.json:4:64: error: traceEvents[2].dur: expected a non-negative number of "
            "microseconds, found -2.5\n"
            "k.json:5:40: error: traceEvents[3].name: expected a step marker named "
            "ProfilerStep#<n> with a non-negative integer n, found \"ProfilerStep#x\"\n"
            "k.json:6:40: error: traceEvents[4].name: expected a step marker named "
            "ProfilerStep#<n> with a non-negative integer n, found \"ProfilerStep#\"\n"
            "k.json:7:40: error: traceEvents[5].name: expected a string, found 3\n"
            "k.json:8:71: error: traceEvents[6].args.correlation: expected an integer "
            "correlation id, found 1.5\n"
            "k.json:9:3: error: traceEvents[7]: expected a member \"ph\" (the event phase, \"X\" "
            "for complete events), found none\n"
            "k.json:10:3: error: traceEvents[8]: expected an event object, found 7");
}

TEST(KinetoTrace, RefusesARepeatedStepNumber) {
  EXPECT_EQ(error_of("{\"traceEvents\": [\n"
                     "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#3\", \"ts\": "
                     "1, \"dur\": 2},\n"
                     "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ProfilerStep#3\", \"ts\": "
                     "5, \"dur\": 2}]}"),
            "k.json:3:3: error: traceEvents[1]: expected each step number once, found "
            "ProfilerStep#3 again (first at 2:3)");
}

TEST(KinetoTrace, PassesJsonSyntaxErrorsThrough) {
  EXPECT_EQ(error_of("{\"traceEvents\": [\n  {\"ph\": \"X\" \"name\": \"a\"}]}"),
            "k.json:2:14: error: expected ',' or '}' after an object member, found '\"'");
}

// Everything read from a trace but its file name.
void expect_same_trace(const KinetoTrace& a, const KinetoTrace& b) {
  EXPECT_EQ(a.unattributed_events, b.unattributed_events);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const KinetoStep& x = a.steps[i];
    const KinetoStep& y = b.steps[i];
    EXPECT_EQ(x.number, y.number);
    EXPECT_EQ(x.cpu_start_us, y.cpu_start_us);
    EXPECT_EQ(x.cpu_duration_us, y.cpu_duration_us);
    EXPECT_EQ(x.gpu_events, y.gpu_events);
    EXPECT_EQ(x.gpu_start_us, y.gpu_start_us);
    EXPECT_EQ(x.gpu_end_us, y.gpu_end_us);
    EXPECT_EQ(x.compute_busy_us, y.compute_busy_us);
    for (size_t c = 0; c < kKernelClassCount; ++c) {
      EXPECT_EQ(x.by_class[c].count, y.by_class[c].count) << "step " << x.number << " class " << c;
      EXPECT_EQ(x.by_class[c].duration_us, y.by_class[c].duration_us)
          << "step " << x.number << " class " << c;
    }
    EXPECT_EQ(x.where.line, y.where.line);
    EXPECT_EQ(x.where.column, y.where.column);
  }
}

TEST(KinetoTrace, AGzippedTraceReadsTheSameAsThePlainOne) {
  const test_support::ScratchDir dir;
  for (const char* fixture : {"kineto_two_steps.json", "kineto_small_trace.json"}) {
    const std::string plain = kFixtures + fixture;
    const std::string gz = dir.write(std::string(fixture) + ".gz",
                                     test_support::gzip_bytes(test_support::read_all(plain)));
    const KinetoTrace expected = read_kineto_trace(plain);
    const KinetoTrace trace = read_kineto_trace(gz);
    ASSERT_FALSE(expected.steps.empty()) << fixture;
    EXPECT_EQ(trace.file, gz);
    EXPECT_EQ(trace.steps[0].where.file, gz);
    expect_same_trace(trace, expected);
  }
}

TEST(KinetoTrace, ATruncatedGzippedTraceIsAnErrorNamingTheFile) {
  const test_support::ScratchDir dir;
  const std::string gz =
      test_support::gzip_bytes(test_support::read_all(kFixtures + "kineto_two_steps.json"));
  const std::string path = dir.write("trace.json.gz", gz.substr(0, gz.size() - 20));
  EXPECT_EQ(test_support::config_error([&] { read_kineto_trace(path); }),
            path +
                ": error: expected a gzip stream, found a truncated one "
                "(the file ends after " +
                sim::with_separators(static_cast<int64_t>(gz.size() - 20)) + " bytes)");
}

TEST(KinetoTrace, AGzippedTraceOverTheInputLimitIsRefused) {
  const test_support::ScratchDir dir;
  const std::string text = test_support::read_all(kFixtures + "kineto_two_steps.json");
  ASSERT_GT(text.size(), 4096u);
  const std::string path = dir.write("trace.json.gz", test_support::gzip_bytes(text));
  const test_support::InputLimit limit("4KiB");  // the compressed file is smaller
  EXPECT_EQ(test_support::config_error([&] { read_kineto_trace(path); }),
            path +
                ": error: cannot read the file: decompresses to more than the 4KiB limit on "
                "input files (set CLUSTERSIM_MAX_INPUT_BYTES to read larger ones)");
}

TEST(KinetoTrace, JsonErrorsInAGzippedTraceArePlacedInItsText) {
  const test_support::ScratchDir dir;
  const std::string path = dir.write(
      "bad.json.gz",
      test_support::gzip_bytes("{\"traceEvents\": [\n  {\"ph\": \"X\" \"name\": \"a\"}]}"));
  EXPECT_EQ(test_support::config_error([&] { read_kineto_trace(path); }),
            path + ":2:14: error: expected ',' or '}' after an object member, found '\"'");
}

}  // namespace
}  // namespace clustersim::calibration
