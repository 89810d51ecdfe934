#include "workloads/model/float8_kernels.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "workloads/model/model_spec.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {
namespace {

// One linear: X 64 x 32 (M x K), W 32 x 16 (K x N), output 64 x 16.
constexpr int64_t kM = 64, kK = 32, kN = 16;
constexpr double kX = kM * kK, kW = kK * kN, kG = kM * kN;

// Forward, input gradient (C = G W^T: m = M, n = K, k = N) and weight
// gradient (C = X^T G: m = K, n = N, k = M), with a norm before.
std::vector<Kernel> one_linear() {
  return {pointwise("norm", KernelClass::kNorm, 0, 100), gemm("proj", kM, kN, kK, 2),
          gemm("proj.dgrad", kM, kK, kN, 2), gemm("proj.wgrad", kK, kN, kM, 2)};
}

std::vector<std::string_view> names(const std::vector<Kernel>& ks) {
  std::vector<std::string_view> out;
  for (const Kernel& k : ks) out.push_back(k.name);
  return out;
}

double bytes_named(const std::vector<Kernel>& ks, std::string_view name) {
  double sum = 0;
  for (const Kernel& k : ks) sum += k.name == name ? k.bytes : 0;
  return sum;
}

TEST(Float8Kernels, TensorwiseCastsAsTorchaosRooflineCountsThem) {
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kTensorwise, /*fused_with_producer=*/false);
  EXPECT_EQ(names(ks),
            (std::vector<std::string_view>{
                "norm", "float8.amax_input", "float8.cast_input", "float8.amax_weight",
                "float8.cast_weight", "proj", "float8.amax_grad", "float8.cast_grad",
                "float8.amax_weight_t", "float8.cast_weight_t", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.amax_input"), 2 * kX);   // bf16 read
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input"), 4 * kX);   // + two FP8 layouts
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.amax_weight"), 2 * kW);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight"), 3 * kW);  // one layout forward
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.amax_grad"), 2 * kG);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_grad"), 4 * kG);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.amax_weight_t"), 2 * kW);  // read again backward
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight_t"), 3 * kW);  // the other layout
  // FP8 operands (1 byte), bf16 output (2).
  EXPECT_EQ(ks[5].format, GemmFormat::kFp8);
  EXPECT_DOUBLE_EQ(ks[5].bytes, kX + kW + 2 * kG);
  EXPECT_DOUBLE_EQ(ks[10].bytes, kG + kW + 2 * kX);
  EXPECT_DOUBLE_EQ(ks[11].bytes, kX + kG + 2 * kW);
  EXPECT_EQ(ks[0].format, GemmFormat::kBf16);
  EXPECT_DOUBLE_EQ(ks[5].flops, 2.0 * kM * kN * kK);  // same work
}

TEST(Float8Kernels, CompiledFusesTheFirstReadOfActivationsAndGradients) {
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kTensorwise, /*fused_with_producer=*/true);
  EXPECT_EQ(bytes_named(ks, "float8.amax_input"), 0);
  EXPECT_EQ(bytes_named(ks, "float8.amax_grad"), 0);
  EXPECT_EQ(ks.size(), 10u);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.amax_weight"), 2 * kW);  // weights never fused
}

TEST(Float8Kernels, DelayedScalingCastsWithoutAnyAmaxPass) {
  // Transformer Engine's delayed scaling takes its scales from earlier
  // steps' amax history: tensorwise's casts, byte for byte, and no amax
  // kernel, fused or not.
  for (const bool fused : {false, true}) {
    std::vector<Kernel> ks = one_linear();
    apply_float8(ks, Float8Recipe::kDelayed, fused);
    EXPECT_EQ(names(ks),
              (std::vector<std::string_view>{"norm", "float8.cast_input", "float8.cast_weight",
                                             "proj", "float8.cast_grad", "float8.cast_weight_t",
                                             "proj.dgrad", "proj.wgrad"}));
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input"), 4 * kX);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight"), 3 * kW);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_grad"), 4 * kG);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight_t"), 3 * kW);
    EXPECT_EQ(ks[3].format, GemmFormat::kFp8);
    EXPECT_DOUBLE_EQ(ks[3].bytes, kX + kW + 2 * kG);
  }
}

// Transformer Engine's current scaling takes each tensor's own amax:
// torchao's tensorwise kernels, byte for byte, fused or not.
TEST(Float8Kernels, CurrentScalingIsTensorwiseByteForByte) {
  for (const bool fused : {false, true}) {
    std::vector<Kernel> current = one_linear();
    std::vector<Kernel> tensorwise = one_linear();
    apply_float8(current, Float8Recipe::kCurrent, fused);
    apply_float8(tensorwise, Float8Recipe::kTensorwise, fused);
    ASSERT_EQ(names(current), names(tensorwise));
    for (size_t i = 0; i < current.size(); ++i) {
      EXPECT_DOUBLE_EQ(current[i].bytes, tensorwise[i].bytes) << current[i].name;
    }
  }
  // Its weight cache: the amax, then both layouts in one kernel.
  std::vector<Kernel> first = one_linear();
  apply_float8(first, Float8Recipe::kCurrent, /*fused_with_producer=*/true,
               /*weights_gathered_in_fp8=*/false, Float8WeightCasts::kOncePerStep);
  EXPECT_EQ(names(first),
            (std::vector<std::string_view>{"norm", "float8.cast_input", "float8.amax_weight",
                                           "float8.cast_transpose_weight", "proj",
                                           "float8.cast_grad", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(first, "float8.amax_weight"), 2 * kW);
  EXPECT_DOUBLE_EQ(bytes_named(first, "float8.cast_transpose_weight"), 4 * kW);
}

// Block scaling: an fp32 scale per 1 x 128 tile of X and G, in each of their
// two layouts, and per 128 x 128 block of W; no amax pass; the backward
// transposes the forward's FP8 weight.
TEST(Float8Kernels, BlockwiseWritesTileAndBlockScalesWithoutAnAmaxPass) {
  constexpr double kTile = 4.0 / 128;     // scale bytes per tiled element
  constexpr double kBlock = 4.0 / 16384;  // per element of a weight block
  for (const bool fused : {false, true}) {
    std::vector<Kernel> ks = one_linear();
    apply_float8(ks, Float8Recipe::kBlockwise, fused);
    EXPECT_EQ(names(ks),
              (std::vector<std::string_view>{
                  "norm", "float8.cast_input", "float8.cast_weight", "proj", "float8.cast_grad",
                  "float8.transpose_weight_fp8", "proj.dgrad", "proj.wgrad"}));
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input"), (2 + 2 * (1 + kTile)) * kX);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight"), (2 + 1 + kBlock) * kW);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_grad"), (2 + 2 * (1 + kTile)) * kG);
    EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.transpose_weight_fp8"), 2 * (1 + kBlock) * kW);
    // The GEMMs read their operands' scales: forward X tiles and W blocks;
    // input gradient G tiles and W blocks; weight gradient X and G tiles.
    EXPECT_DOUBLE_EQ(ks[3].bytes, kX + kW + 2 * kG + kTile * kX + kBlock * kW);
    EXPECT_DOUBLE_EQ(ks[6].bytes, kG + kW + 2 * kX + kTile * kG + kBlock * kW);
    EXPECT_DOUBLE_EQ(ks[7].bytes, kX + kG + 2 * kW + kTile * kX + kTile * kG);
    EXPECT_EQ(ks[7].format, GemmFormat::kFp8);
  }
  std::vector<Kernel> first = one_linear();
  apply_float8(first, Float8Recipe::kBlockwise, true, false, Float8WeightCasts::kOncePerStep);
  EXPECT_DOUBLE_EQ(bytes_named(first, "float8.cast_transpose_weight"), (2 + 2 * (1 + kBlock)) * kW);
  EXPECT_EQ(bytes_named(first, "float8.amax_weight"), 0);
}

// MXFP8 (OCP Microscaling v1.0, Transformer Engine's MXFP8BlockScaling): one
// E8M0 byte per 32 elements along the reduction dimension, so both layouts of
// every tensor are quantized from bf16, the weight's included (its 1 x 32
// blocks do not survive a transpose); no amax pass.
TEST(Float8Kernels, Mxfp8QuantizesEveryTensorBothWaysWithOneScaleBytePer32) {
  constexpr double kLayout = 1 + 1.0 / 32;  // FP8 byte and its share of the scale
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kMxfp8, /*fused_with_producer=*/false);
  EXPECT_EQ(names(ks),
            (std::vector<std::string_view>{"norm", "float8.cast_input", "float8.cast_weight",
                                           "proj", "float8.cast_grad", "float8.cast_weight_t",
                                           "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input"), (2 + 2 * kLayout) * kX);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight"), (2 + kLayout) * kW);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_grad"), (2 + 2 * kLayout) * kG);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight_t"), (2 + kLayout) * kW);
  for (const size_t gemm : {3u, 6u, 7u}) EXPECT_EQ(ks[gemm].format, GemmFormat::kMxfp8);
  EXPECT_DOUBLE_EQ(ks[3].bytes, kLayout * (kX + kW) + 2 * kG);
  EXPECT_DOUBLE_EQ(ks[7].bytes, kLayout * (kX + kG) + 2 * kW);
  // Transformer Engine's weight cache: both layouts once, kept for the step.
  std::vector<Kernel> first = one_linear();
  apply_float8(first, Float8Recipe::kMxfp8, true, false, Float8WeightCasts::kOncePerStep);
  EXPECT_DOUBLE_EQ(bytes_named(first, "float8.cast_transpose_weight"), (2 + 2 * kLayout) * kW);
  EXPECT_DOUBLE_EQ(kept_weight_cast_bytes(Float8Recipe::kMxfp8), 2 * kLayout);
}

// NVFP4 (Transformer Engine's NVFP4BlockScaling; NVIDIA, "Pretraining Large
// Language Models with NVFP4", arXiv:2509.25149, sec. 4): E2M1 values (half a
// byte) with an E4M3 scale per 16 elements, over a per-tensor scale from the
// tensor's amax; 16 x 16 weight blocks, so the backward transposes the
// forward's FP4 weight; the weight gradient's operands are Hadamard-
// transformed in the cast (16 multiply-adds per element of that layout).
TEST(Float8Kernels, Nvfp4HalvesTheOperandBytesAndAddsAPerTensorAmax) {
  constexpr double kLayout = 0.5 + 1.0 / 16;
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kNvfp4, /*fused_with_producer=*/false);
  EXPECT_EQ(names(ks), (std::vector<std::string_view>{
                           "norm", "nvfp4.amax_input", "nvfp4.cast_input", "nvfp4.amax_weight",
                           "nvfp4.cast_weight", "proj", "nvfp4.amax_grad", "nvfp4.cast_grad",
                           "nvfp4.transpose_weight", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(ks, "nvfp4.amax_input"), 2 * kX);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "nvfp4.cast_input"), (2 + 2 * kLayout) * kX);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "nvfp4.cast_weight"), (2 + kLayout) * kW);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "nvfp4.transpose_weight"), 2 * kLayout * kW);
  EXPECT_DOUBLE_EQ(ks[2].flops, (2 + 16) * kX);  // scale and saturate, and the transform
  for (const size_t gemm : {5u, 9u, 10u}) EXPECT_EQ(ks[gemm].format, GemmFormat::kNvfp4);
  EXPECT_DOUBLE_EQ(ks[5].bytes, kLayout * (kX + kW) + 2 * kG);
  // Fused with their producers, the activations' amax passes go.
  std::vector<Kernel> fused = one_linear();
  apply_float8(fused, Float8Recipe::kNvfp4, /*fused_with_producer=*/true);
  EXPECT_EQ(bytes_named(fused, "nvfp4.amax_input"), 0);
  EXPECT_EQ(bytes_named(fused, "nvfp4.amax_grad"), 0);
  EXPECT_DOUBLE_EQ(bytes_named(fused, "nvfp4.amax_weight"), 2 * kW);
  EXPECT_DOUBLE_EQ(kept_weight_cast_bytes(Float8Recipe::kNvfp4), 2 * kLayout);
}

TEST(Float8Kernels, RowwiseTransposesInBf16) {
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kRowwise, /*fused_with_producer=*/false);
  EXPECT_EQ(names(ks), (std::vector<std::string_view>{
                           "norm", "float8.cast_input", "float8.cast_input_t",
                           "float8.cast_weight", "proj", "float8.cast_grad", "float8.cast_grad_t",
                           "float8.transpose_weight", "float8.cast_weight_t", "proj.dgrad",
                           "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input"), 5 * kX);  // FP8 + bf16 transpose
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_input_t"), 3 * kX);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight"), 3 * kW);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.transpose_weight"), 4 * kW);
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.cast_weight_t"), 3 * kW);
  std::vector<Kernel> fused = one_linear();
  apply_float8(fused, Float8Recipe::kRowwise, /*fused_with_producer=*/true);
  EXPECT_DOUBLE_EQ(bytes_named(fused, "float8.cast_input"), 3 * kX);
  EXPECT_DOUBLE_EQ(bytes_named(fused, "float8.cast_grad"), 3 * kG);
}

// FSDP's float8 all-gather delivers FP8 weights: no forward weight casts;
// backward copies the FP8 weight column-major (1 byte read, 1 written).
TEST(Float8Kernels, WeightsGatheredInFp8NeedOnlyATransposeBackward) {
  std::vector<Kernel> ks = one_linear();
  apply_float8(ks, Float8Recipe::kTensorwise, /*fused_with_producer=*/true,
               /*weights_gathered_in_fp8=*/true);
  EXPECT_EQ(names(ks), (std::vector<std::string_view>{
                           "norm", "float8.cast_input", "proj", "float8.cast_grad",
                           "float8.transpose_weight_fp8", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(ks, "float8.transpose_weight_fp8"), 2 * kW);
}

// Transformer Engine's weight cache: the step's first forward casts W once,
// both FP8 layouts written in one kernel (2 bytes read, 2 written per
// element); later forwards and every backward read the kept casts.
TEST(Float8Kernels, WeightsCastOncePerStepAreReadFromTheCacheAfterwards) {
  std::vector<Kernel> first = one_linear();
  apply_float8(first, Float8Recipe::kDelayed, /*fused_with_producer=*/true,
               /*weights_gathered_in_fp8=*/false, Float8WeightCasts::kOncePerStep);
  EXPECT_EQ(names(first), (std::vector<std::string_view>{
                              "norm", "float8.cast_input", "float8.cast_transpose_weight", "proj",
                              "float8.cast_grad", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(first, "float8.cast_transpose_weight"), 4 * kW);
  std::vector<Kernel> later = one_linear();
  apply_float8(later, Float8Recipe::kDelayed, true, false, Float8WeightCasts::kCached);
  EXPECT_EQ(names(later),
            (std::vector<std::string_view>{"norm", "float8.cast_input", "proj", "float8.cast_grad",
                                           "proj.dgrad", "proj.wgrad"}));
  // Per step of 4 micro-batches: 4 kW of weight casts, where casting in
  // every pass moves 4 x (3 + 3) kW.
  std::vector<Kernel> every = one_linear();
  apply_float8(every, Float8Recipe::kDelayed, true);
  const double every_pass =
      4 * (bytes_named(every, "float8.cast_weight") + bytes_named(every, "float8.cast_weight_t"));
  EXPECT_DOUBLE_EQ(every_pass, 24 * kW);
  // FP8 weights from the optimizer's all-gather (--fp8-param-gather): the
  // kept cast is their transpose alone.
  std::vector<Kernel> gathered = one_linear();
  apply_float8(gathered, Float8Recipe::kDelayed, true, true, Float8WeightCasts::kOncePerStep);
  EXPECT_EQ(names(gathered), (std::vector<std::string_view>{
                                 "norm", "float8.cast_input", "float8.transpose_weight_fp8", "proj",
                                 "float8.cast_grad", "proj.dgrad", "proj.wgrad"}));
  EXPECT_DOUBLE_EQ(bytes_named(gathered, "float8.transpose_weight_fp8"), 2 * kW);
}

// Transformer Engine's FP8 all-gather under sequence parallelism (tp 4): the
// gathered input's shard cast (3 bytes per element of a quarter), the
// gathered tensor transposed whole (2 bytes per element); the GEMMs whose
// input is not gathered (proj here) cast as before.
TEST(Float8Kernels, InputsGatheredInFp8AreCastOnTheShardAndTransposedWhole) {
  std::vector<Kernel> ks = {gemm("qkv_proj", kM, kN, kK, 2), gemm("out_proj.dgrad", kM, kK, kN, 2),
                            gemm("proj", kM, kN, kK, 2)};
  apply_float8(ks, Float8Recipe::kDelayed, /*fused_with_producer=*/true,
               /*weights_gathered_in_fp8=*/false, Float8WeightCasts::kCached, /*fp8_tp_gather=*/4);
  EXPECT_EQ(names(ks),
            (std::vector<std::string_view>{"float8.cast_input", "float8.transpose_input",
                                           "qkv_proj", "float8.cast_grad", "float8.transpose_grad",
                                           "out_proj.dgrad", "float8.cast_input", "proj"}));
  EXPECT_DOUBLE_EQ(ks[0].bytes, 3 * kX / 4);
  EXPECT_DOUBLE_EQ(ks[1].bytes, 2 * kX);
  EXPECT_DOUBLE_EQ(ks[3].bytes, 3 * kG / 4);  // dgrad's A is G, M x N
  EXPECT_DOUBLE_EQ(ks[4].bytes, 2 * kG);
  EXPECT_DOUBLE_EQ(ks[6].bytes, 4 * kX);  // not gathered: both layouts from bf16
}

TEST(Float8Kernels, BlocksConvertTheirLinearsAndTheHeadStaysBf16) {
  const ModelSpec m = *model_preset("llama3-8b");
  KernelConfig c;
  c.seq_len = 1024;
  c.float8 = Float8Recipe::kTensorwise;
  int fp8 = 0, bf16 = 0;
  for (const auto& pass : {block_forward(m, c), block_backward(m, c),
                           block_recompute(m, c, Recompute::kSelectiveOp)}) {
    for (const Kernel& k : pass) {
      if (k.cls != KernelClass::kGemm) continue;
      (k.format != GemmFormat::kBf16 ? fp8 : bf16) += 1;
    }
  }
  // qkv, out, gate_up, down forward; 8 backward GEMMs; 3 recomputed (wk, wo, w3).
  EXPECT_EQ(fp8, 4 + 8 + 3);
  EXPECT_EQ(bf16, 0);
  for (const Kernel& k : head_forward(m, c)) EXPECT_EQ(k.format, GemmFormat::kBf16) << k.name;
  // The qkv casts read its one input once: T x hidden.
  const std::vector<Kernel> fwd = block_forward(m, c);
  EXPECT_DOUBLE_EQ(fwd[1].bytes, 4.0 * 1024 * 4096);
  EXPECT_EQ(fwd[1].name, "float8.cast_input");
  // Without float8 nothing changes.
  c.float8 = Float8Recipe::kNone;
  EXPECT_EQ(block_forward(m, c).size(), fwd.size() - 4 * 3);  // cast_input, amax/cast_weight
}

}  // namespace
}  // namespace clustersim::workloads
