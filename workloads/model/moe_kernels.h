// The grouped GEMMs of a mixture-of-experts layer on one expert-parallel
// rank: its local experts' FFN matrices, each applied to the tokens routed
// to it (workloads/model/moe_routing.h), in one kernel, as Transformer
// Engine's GroupedLinear and Megatron-Core's TEGroupedMLP run them.
//
// Expert i multiplies its r_i token rows [r_i x k] by its weight [k x n].
// The kernel computes tiles of kGroupedTileRows rows, so an expert's last
// tile is computed whole: its rows are padded to p_i = ceil(r_i / tile) x
// tile (the M tile of CUTLASS's grouped GEMMs on Hopper and Blackwell, 128),
// and an expert with no tokens costs nothing. The kernel is priced by the
// compute model as one GEMM (workloads/model/compute_model.h): FLOPs
// 2 n k sum(p_i), its work the same, its shape (mean p_i) x n x k over the
// experts that have tokens. Bytes: each such expert's weight once
// (k n c_w) and its rows in and out ((k + n) r_i c). A rank's slowest
// grouped GEMM is where a skewed router shows: its time grows with the
// rank's tokens, and padding grows with the number of thinly loaded experts.
//
// Units: rows, FLOPs, bytes. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

inline constexpr int64_t kGroupedTileRows = 128;

// `name` must be a string literal (Kernel::name). rows: tokens per local
// expert (>= 0); n, k > 0; activation_bytes and weight_bytes per element.
Kernel grouped_gemm(std::string_view name, std::span<const int64_t> rows, int64_t n, int64_t k,
                    double activation_bytes, double weight_bytes,
                    GemmFormat format = GemmFormat::kBf16);

}  // namespace clustersim::workloads
