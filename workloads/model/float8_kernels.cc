#include "workloads/model/float8_kernels.h"

#include <cstdint>

namespace clustersim::workloads {

namespace {

constexpr double kBf16 = 2;
constexpr double kFp8 = 1;
constexpr double kFp4 = 0.5;
// FLOPs per element: abs and max for an amax; scale and saturate for a cast.
constexpr double kAmaxFlops = 2;
constexpr double kCastFlops = 2;
constexpr KernelClass kCls = KernelClass::kElementwise;
// Block scaling's fp32 scales (Transformer Engine's Float8BlockScaling): one
// per 1 x 128 tile of an activation or gradient, in each layout, and one per
// 128 x 128 block of a weight, shared by both layouts.
constexpr double kScaleBytes = 4;
constexpr double kTileScale = kScaleBytes / 128;
constexpr double kBlockScale = kScaleBytes / (128.0 * 128.0);
// MXFP8 (OCP Microscaling Formats v1.0): one E8M0 byte per 32 elements.
constexpr double kMxScale = 1.0 / 32;
// NVFP4: one E4M3 byte per 16 elements (the per-tensor fp32 scale is
// negligible), in 1 x 16 blocks for activations and gradients and 16 x 16
// for weights: the same bytes per element either way.
constexpr double kNvScale = 1.0 / 16;
// The 16-point random Hadamard transform NVFP4 applies to the weight
// gradient's operands before they are quantized: a 16 x 16 matrix times each
// 16-element vector, 16 multiply-adds per element.
constexpr double kHadamardFlops = 32;

// Bytes per element of one layout of a quantized activation or gradient
// (`weight` false) or weight, with its scales.
double layout_bytes(Float8Recipe recipe, bool weight) {
  switch (recipe) {
    case Float8Recipe::kBlockwise:
      return kFp8 + (weight ? kBlockScale : kTileScale);
    case Float8Recipe::kMxfp8:
      return kFp8 + kMxScale;
    case Float8Recipe::kNvfp4:
      return kFp4 + kNvScale;
    default:
      return kFp8;
  }
}

// Recipes whose scales are found per block by the cast, each layout
// quantized from the bf16 tensor on its own.
bool block_scaled(Float8Recipe recipe) {
  return recipe == Float8Recipe::kBlockwise || recipe == Float8Recipe::kMxfp8 ||
         recipe == Float8Recipe::kNvfp4;
}

// Recipes whose scale is the tensor's own amax, found by a pass of its own
// (NVFP4's per-tensor scale, the second level of its two).
bool amax_pass(Float8Recipe recipe) {
  return recipe == Float8Recipe::kTensorwise || recipe == Float8Recipe::kCurrent ||
         recipe == Float8Recipe::kNvfp4;
}

bool nvfp4(Float8Recipe recipe) { return recipe == Float8Recipe::kNvfp4; }

double dbl(int64_t x) { return static_cast<double>(x); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Kernel amax(std::string_view name, double n) {
  return pointwise(name, kCls, kAmaxFlops * n, kBf16 * n);
}

// Reads `read` bf16 bytes per element, writes `written` bytes per element.
Kernel cast(std::string_view name, double n, double read, double written, double extra_flops = 0) {
  return pointwise(name, kCls, (kCastFlops + extra_flops) * n, (read + written) * n);
}

// X (forward input) or G (output gradient): the operand produced by the
// previous kernel, whose first read torch.compile can fuse into it.
void activation_casts(std::vector<Kernel>& out, Float8Recipe recipe, bool fused, double n,
                      bool gradient) {
  if (block_scaled(recipe)) {
    // Each layout quantized in blocks along its own reduction dimension from
    // the bf16 tensor, the blocks' scales written beside it, both in one
    // kernel. NVFP4's per-tensor scale needs the tensor's amax first, and its
    // column-major layout (the weight gradient's operand) is Hadamard-
    // transformed in the cast.
    if (nvfp4(recipe)) {
      if (!fused) out.push_back(amax(gradient ? "nvfp4.amax_grad" : "nvfp4.amax_input", n));
      out.push_back(cast(gradient ? "nvfp4.cast_grad" : "nvfp4.cast_input", n, kBf16,
                         2 * layout_bytes(recipe, false), kHadamardFlops / 2));
      return;
    }
    out.push_back(cast(gradient ? "float8.cast_grad" : "float8.cast_input", n, kBf16,
                       2 * layout_bytes(recipe, false)));
    return;
  }
  if (recipe != Float8Recipe::kRowwise) {
    if (!fused && amax_pass(recipe)) {
      out.push_back(amax(gradient ? "float8.amax_grad" : "float8.amax_input", n));
    }
    out.push_back(
        cast(gradient ? "float8.cast_grad" : "float8.cast_input", n, kBf16, 2 * kFp8));
    return;
  }
  // Rowwise: FP8 row-major and a bf16 transpose, then the transpose cast.
  out.push_back(cast(gradient ? "float8.cast_grad" : "float8.cast_input", n, fused ? 0 : kBf16,
                     kFp8 + kBf16));
  out.push_back(cast(gradient ? "float8.cast_grad_t" : "float8.cast_input_t", n, kBf16, kFp8));
}

// The quantized weight (and its block scales), re-laid column-major for the
// input gradient's GEMM.
Kernel transpose_weight_fp8(Float8Recipe recipe, double n) {
  return pointwise(nvfp4(recipe) ? "nvfp4.transpose_weight" : "float8.transpose_weight_fp8", kCls,
                   0, 2 * layout_bytes(recipe, true) * n);
}

void weight_casts_forward(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered, double n) {
  if (gathered) return;  // all-gathered in FP8 already
  if (amax_pass(recipe))
    out.push_back(amax(nvfp4(recipe) ? "nvfp4.amax_weight" : "float8.amax_weight", n));
  out.push_back(cast(nvfp4(recipe) ? "nvfp4.cast_weight" : "float8.cast_weight", n, kBf16,
                     layout_bytes(recipe, true)));
}

void weight_casts_backward(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered, double n) {
  // 128 x 128 and NVFP4's 16 x 16 blocks are square: the forward's
  // quantized weight and scales, transposed, are the other layout's. MXFP8's
  // 1 x 32 blocks run along the reduction dimension, which the input
  // gradient's GEMM swaps: its layout is quantized from bf16 again.
  if (gathered || recipe == Float8Recipe::kBlockwise || nvfp4(recipe)) {
    out.push_back(transpose_weight_fp8(recipe, n));
    return;
  }
  if (recipe == Float8Recipe::kMxfp8) {
    out.push_back(cast("float8.cast_weight_t", n, kBf16, layout_bytes(recipe, true)));
    return;
  }
  if (recipe == Float8Recipe::kRowwise) {
    out.push_back(pointwise("float8.transpose_weight", kCls, 0, 2 * kBf16 * n));
  } else if (amax_pass(recipe)) {
    out.push_back(amax("float8.amax_weight_t", n));
  }
  out.push_back(cast("float8.cast_weight_t", n, kBf16, kFp8));
}

// An input TP all-gathers in FP8 (Transformer Engine's userbuffers, fp8_buf):
// the rank's 1/tp shard cast (bf16 read, one FP8 layout written) before the
// gather, the gathered tensor transposed whole for the weight gradient.
// Under current scaling the shard's amax pass comes first (unless fused into
// its producer).
void gathered_casts(std::vector<Kernel>& out, Float8Recipe recipe, bool fused, double n, int64_t tp,
                    bool gradient) {
  const double shard = n / static_cast<double>(tp);
  if (!fused && amax_pass(recipe)) {
    out.push_back(amax(gradient ? "float8.amax_grad" : "float8.amax_input", shard));
  }
  out.push_back(cast(gradient ? "float8.cast_grad" : "float8.cast_input", shard, kBf16, kFp8));
  out.push_back(pointwise(gradient ? "float8.transpose_grad" : "float8.transpose_input", kCls, 0,
                          2 * kFp8 * n));
}

// Transformer Engine's cast of a weight kept for the step: the bf16 weight
// read once and written in FP8 in both layouts (fp8_cast_transpose_fused), or
// the FP8 weight the optimizer gathered only transposed.
void weight_casts_once(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered, double n) {
  if (gathered) {
    out.push_back(transpose_weight_fp8(recipe, n));
    return;
  }
  if (amax_pass(recipe))
    out.push_back(amax(nvfp4(recipe) ? "nvfp4.amax_weight" : "float8.amax_weight", n));
  out.push_back(cast(nvfp4(recipe) ? "nvfp4.cast_transpose_weight" : "float8.cast_transpose_weight",
                     n, kBf16, 2 * layout_bytes(recipe, true)));
}

// The weight's kernels before a forward (or input-gradient) GEMM: every
// pass's casts, the step's one kept cast in its first forward, or none.
void weight_casts(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered,
                  Float8WeightCasts casts, bool gradient, double n) {
  if (casts == Float8WeightCasts::kEveryPass) {
    if (gradient) {
      weight_casts_backward(out, recipe, gathered, n);
    } else {
      weight_casts_forward(out, recipe, gathered, n);
    }
  } else if (casts == Float8WeightCasts::kOncePerStep && !gradient) {
    weight_casts_once(out, recipe, gathered, n);
  }
}

// C = A B in low precision: A an activation or gradient; B the weight (its
// blocks' scales under block scaling) except in the weight gradient, whose B
// is a gradient. Each operand is read with its scales, C written in bf16.
Kernel fp8_gemm(Kernel g, Float8Recipe recipe, bool weight_gradient) {
  g.format = gemm_format_of(recipe);
  const double a = dbl(g.m) * dbl(g.k);
  const double b = dbl(g.k) * dbl(g.n);
  g.bytes = layout_bytes(recipe, false) * a + layout_bytes(recipe, !weight_gradient) * b +
            kBf16 * dbl(g.m) * dbl(g.n);
  return g;
}

}  // namespace

std::string_view gemm_format_name(GemmFormat format) {
  switch (format) {
    case GemmFormat::kBf16:
      return "bf16";
    case GemmFormat::kFp8:
      return "fp8";
    case GemmFormat::kMxfp8:
      return "mxfp8";
    case GemmFormat::kNvfp4:
      return "nvfp4";
  }
  return "?";
}

GemmFormat gemm_format_of(Float8Recipe recipe) {
  switch (recipe) {
    case Float8Recipe::kNone:
      return GemmFormat::kBf16;
    case Float8Recipe::kMxfp8:
      return GemmFormat::kMxfp8;
    case Float8Recipe::kNvfp4:
      return GemmFormat::kNvfp4;
    default:
      return GemmFormat::kFp8;
  }
}

double kept_weight_cast_bytes(Float8Recipe recipe) {
  return recipe == Float8Recipe::kNone ? 0 : 2 * layout_bytes(recipe, true);
}

double saved_input_cast_bytes(Float8Recipe recipe) {
  return recipe == Float8Recipe::kNone ? 0 : layout_bytes(recipe, false);
}

void apply_float8(std::vector<Kernel>& kernels, Float8Recipe recipe, bool fused_with_producer,
                  bool weights_gathered_in_fp8, Float8WeightCasts casts, int64_t fp8_tp_gather) {
  if (recipe == Float8Recipe::kNone) return;
  std::vector<Kernel> out;
  out.reserve(kernels.size() * 2);
  for (const Kernel& k : kernels) {
    if (k.cls != KernelClass::kGemm) {
      out.push_back(k);
      continue;
    }
    // C[m x n] = A[m x k] B[k x n]: forward A = X, B = W; input gradient
    // A = G, B = W transposed; weight gradient A = X^T, B = G (cast already).
    const double a = dbl(k.m) * dbl(k.k);
    const double b = dbl(k.k) * dbl(k.n);
    const bool gradient = ends_with(k.name, ".dgrad");
    const bool weight_gradient = ends_with(k.name, ".wgrad");
    if (!weight_gradient) {
      if (fp8_tp_gather > 1 && tp_gathers_input(k.name)) {
        gathered_casts(out, recipe, fused_with_producer, a, fp8_tp_gather, gradient);
      } else {
        activation_casts(out, recipe, fused_with_producer, a, gradient);
      }
      weight_casts(out, recipe, weights_gathered_in_fp8, casts, gradient, b);
    }
    out.push_back(fp8_gemm(k, recipe, weight_gradient));
  }
  kernels = std::move(out);
}

}  // namespace clustersim::workloads
