// `clustersim kernels SCENARIO [--set KEY=VALUE]... [--csv] [-o FILE]`: the
// distinct GEMM shapes and attention configurations that one rank of the
// scenario's training step runs, each with how many times it runs per step,
// so that a microbenchmark on a real GPU (scripts/microbench/gemm.py,
// attention.py) can time exactly those shapes.
//
// Source: the scenario's workload (scenario/step_config.h) and the per-rank
// schedule of one step (workloads::build_fsdp_schedule): every kernel task
// (all micro-batches, recomputation under activation checkpointing, tensor
// parallel slices) counts once. Shapes are per rank, as the compute model
// times them (workloads/model/transformer_kernels.h). With pipeline stages
// (workload.parallelism.pp > 1) stages hold different kernels (the embedding
// on the first, the output layer on the last): by default one rank of every
// stage counts, so that every shape of the step is listed, and --stage S
// lists one rank of stage S alone.
//
// Grouping: GEMMs with the same (m, n, k) are one row whatever their names
// (qkv_proj and a dgrad of the same shape time the same); attention kernels
// with the same (pass, batch, seq, heads, kv_heads, head_dim, causal) are one
// row. A row's name lists its kernels' distinct names joined by '+', in
// order of first use; counts are summed. Rows are in order of first use in
// the step (host issue order): forward, then backward.
//
// Output (stdout, or FILE with -o, written atomically):
//  * default: a readable table per class, with FLOPs per call and the row's
//    share of the step's kernel FLOPs (all kernels, not only these);
//  * --csv: one comment line naming the scenario, then the header
//      kind,name,dtype,m,n,k,batch,seq,heads,kv_heads,head_dim,causal,pass,
//      count_per_step,flops
//    kind gemm | attention; columns that do not apply to the kind are empty;
//    causal true | false; pass fwd | bwd (attention only: ".bwd" names are
//    backward); flops of ONE call (2*m*n*k for a GEMM; for attention the
//    FlashAttention convention of transformer_kernels.h, backward 2.5x).
//    Names contain no commas.
//
// Errors: bad scenario input -> sim::ConfigError (exit 1); an unwritable -o
// path -> sim::OutputError (exit 1); bad flags -> UsageError (exit 2).
// Thread safety: no shared state.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "workloads/schedules/fsdp_schedule.h"

namespace clustersim::cli {

// One distinct GEMM shape or attention configuration of a step.
struct KernelShape {
  // The first kernel of the shape (cls kGemm: m, n, k; kAttention: batch,
  // seq, per-rank heads, kv_heads, head_dim, causal; flops of one run).
  workloads::Kernel kernel;
  std::string name;            // distinct kernel names joined by '+'
  bool backward = false;       // attention: a backward kernel
  int64_t count_per_step = 0;  // runs per rank and step
};

// The GEMM and attention rows of `schedules` (one rank's, or with pipeline
// stages one rank of each stage), grouped as described above: a shape is one
// row whichever schedules run it, its counts summed.
std::vector<KernelShape> distinct_kernel_shapes(std::span<const workloads::FsdpSchedule> schedules);
inline std::vector<KernelShape> distinct_kernel_shapes(const workloads::FsdpSchedule& schedule) {
  return distinct_kernel_shapes(std::span(&schedule, 1));
}

// The --csv text (the comment line names `scenario` and says whose kernels
// the counts are, `counted`; `dtype` as workloads::dtype_name gives it).
std::string kernel_shapes_csv(std::span<const KernelShape> shapes, const std::string& scenario,
                              const std::string& dtype,
                              const std::string& counted = "per rank and step");

CommandSpec kernels_command_spec();
// With -o, names the file written on `err` (cli/progress.h).
int run_kernels_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
