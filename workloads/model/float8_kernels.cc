#include "workloads/model/float8_kernels.h"

#include <cstdint>

namespace clustersim::workloads {

namespace {

constexpr double kBf16 = 2;
constexpr double kFp8 = 1;
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

// Recipes whose scale is the tensor's own amax, found by a pass of its own.
bool amax_pass(Float8Recipe recipe) {
  return recipe == Float8Recipe::kTensorwise || recipe == Float8Recipe::kCurrent;
}

double dbl(int64_t x) { return static_cast<double>(x); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Kernel amax(std::string_view name, double n) {
  return pointwise(name, kCls, kAmaxFlops * n, kBf16 * n);
}

// Reads `read` bf16 bytes per element, writes `written` bytes per element.
Kernel cast(std::string_view name, double n, double read, double written) {
  return pointwise(name, kCls, kCastFlops * n, (read + written) * n);
}

// X (forward input) or G (output gradient): the operand produced by the
// previous kernel, whose first read torch.compile can fuse into it.
void activation_casts(std::vector<Kernel>& out, Float8Recipe recipe, bool fused, double n,
                      bool gradient) {
  if (recipe == Float8Recipe::kBlockwise) {
    // Each layout quantized in 1 x 128 tiles from the bf16 tensor, the
    // tiles' scales written beside it; no amax pass.
    out.push_back(cast(gradient ? "float8.cast_grad" : "float8.cast_input", n, kBf16,
                       2 * (kFp8 + kTileScale)));
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

// Bytes per element a weight's FP8 layout takes with its scales.
double weight_fp8_bytes(Float8Recipe recipe) {
  return kFp8 + (recipe == Float8Recipe::kBlockwise ? kBlockScale : 0);
}

// The FP8 weight (and its block scales), re-laid column-major for the input
// gradient's GEMM.
Kernel transpose_weight_fp8(Float8Recipe recipe, double n) {
  return pointwise("float8.transpose_weight_fp8", kCls, 0, 2 * weight_fp8_bytes(recipe) * n);
}

void weight_casts_forward(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered, double n) {
  if (gathered) return;  // all-gathered in FP8 already
  if (amax_pass(recipe)) out.push_back(amax("float8.amax_weight", n));
  out.push_back(cast("float8.cast_weight", n, kBf16, weight_fp8_bytes(recipe)));
}

void weight_casts_backward(std::vector<Kernel>& out, Float8Recipe recipe, bool gathered, double n) {
  // 128 x 128 blocks are square: the forward's FP8 weight and scales,
  // transposed, are the other layout's.
  if (gathered || recipe == Float8Recipe::kBlockwise) {
    out.push_back(transpose_weight_fp8(recipe, n));
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
  if (amax_pass(recipe)) out.push_back(amax("float8.amax_weight", n));
  out.push_back(cast("float8.cast_transpose_weight", n, kBf16, 2 * weight_fp8_bytes(recipe)));
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

// C = A B in FP8: A an activation or gradient; B the weight (its 128 x 128
// blocks' scales under block scaling) except in the weight gradient, whose B
// is a gradient (1 x 128 tiles).
Kernel fp8_gemm(Kernel g, Float8Recipe recipe, bool weight_gradient) {
  g.fp8 = true;
  const double a = dbl(g.m) * dbl(g.k);
  const double b = dbl(g.k) * dbl(g.n);
  g.bytes = kFp8 * (a + b) + kBf16 * dbl(g.m) * dbl(g.n);
  if (recipe == Float8Recipe::kBlockwise) {
    g.bytes += kTileScale * a + (weight_gradient ? kTileScale : kBlockScale) * b;
  }
  return g;
}

}  // namespace

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
