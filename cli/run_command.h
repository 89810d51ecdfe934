// `clustersim run SCENARIO`: one training step of the scenario's workload
// replayed on every rank of its cluster (workloads/schedules/step_simulator.h), with a
// summary table on stdout, and optionally a JSON report and a Chrome trace.
//
// Inputs: the scenario's cluster, hardware profile (collective model, `gpu`
// compute figures and memory, `host` launch costs and PCIe efficiency),
// `workload`, `collectives` and `stragglers` sections; `--set KEY=VALUE`
// overrides any key.
//
// Output (stdout): the scenario and configuration, step time, tokens/s,
// TFLOP/s and MFU per GPU, the time breakdown (mean per rank, seconds and %
// of the step), peak memory per GPU by part against the GPU's capacity,
// the events simulated, and last, on a line of its own, the wall time
// ("wall time: 0.123 s", from loading the scenario to the end of the
// simulation). Everything but that line is deterministic: the same scenario
// gives the same bytes; --no-wall-time leaves the line out (golden tests).
//
// Out of memory: when the per-GPU peak exceeds the profile's gpu.memory the
// memory breakdown and "out of memory: needs X, has Y" go to stderr and the
// command exits 1 without simulating; with --allow-oom it warns on stderr
// and simulates anyway.
//
// --json FILE writes (atomically) an object with the summary's figures:
// step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu, compute_s,
// exposed_comm_s, breakdown{...}, peak_memory_bytes, memory_capacity_bytes,
// headroom_bytes, fits_in_memory, memory{...}, events, collectives, ranks,
// slowest_rank, tasks_per_rank, wall_s, and the inputs: scenario{...},
// cluster{...}, workload{...}, stragglers{...}. Only wall_s differs
// between runs of the same scenario.
// --trace FILE writes (atomically) a Chrome/Perfetto trace of the ranks of
// --trace-ranks (default "0"; ranks below the world size, e.g. "0,8-15").
//
// stderr besides errors and warnings (cli/progress.h, docs/progress.md): the
// step's estimated work when large, progress with a percentage and ETA while
// it runs, and "wrote FILE" for each file; none of it with --quiet.
// Exit codes: 0 ok, 1 bad scenario, ranks beyond the world size, out of
// memory, unwritable output; 2 usage errors (unknown flag, malformed rank
// list, --trace-ranks without --trace).
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec run_command_spec();
int run_run_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
