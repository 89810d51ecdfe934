// `clustersim replay SCENARIO --trace PREFIX`: Chakra ET traces, one per
// rank (PREFIX.<rank>.et, as `clustersim export-chakra` or PyTorch's
// converter write them), replayed on the scenario's cluster with its
// hardware profile (workloads/chakra/chakra_replay.h), optionally scaled from the
// traced k ranks to N (--scale-to, workloads/chakra/chakra_scale.h).
//
// Inputs: the scenario's cluster, hardware profile (collective model,
// compute figures for --recompute-compute and MFU, host PCIe efficiency) and
// `collectives` section (forcing, routing); its workload section is not
// used. Rank files: --ranks K reads PREFIX.0.et .. PREFIX.<K-1>.et; without
// it, every PREFIX.<r>.et present, which must be 0 .. K-1 without a gap.
// Process groups: --comm-groups FILE, else PREFIX.comm_groups.json when it
// exists, else none (every process group is the whole world). The traces are
// checked (workloads/chakra/chakra_trace.h check_traces) before replaying. Both
// trace forms are read -- Chakra's standard one and clustersim's older
// named one (chakra_trace.h TraceForm, docs/chakra-traces.md).
//
// Output (stdout): the scenario, cluster, traces (files, ranks, nodes,
// groups, the trace form and the rule that decided it, scaling, compute
// source), step time, tokens/s per GPU (with
// --tokens-per-gpu), TFLOP/s per GPU and MFU from the traced num_ops, the
// time breakdown (mean per rank, as `run`), the events simulated, then the
// wall time on a line of its own (left out by --no-wall-time; everything
// else is deterministic).
// --json FILE: step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu,
// compute_s, exposed_comm_s, breakdown{...} (as `run`), events,
// collectives, ranks, slowest_rank, nodes_per_rank, wall_s, and the inputs:
// scenario{...}, cluster{...} (as `run`), traces{prefix, traced_ranks,
// ranks, comm_groups, groups, form ("standard" / "named"), scaled,
// recompute_compute}.
// --trace-out FILE: a Chrome/Perfetto trace of the ranks of --trace-ranks
// (default "0"; ranks of the replayed job).
//
// stderr besides errors and warnings (cli/progress.h, docs/progress.md): the
// nodes x ranks to replay when large, progress with a percentage and ETA while
// it runs, and "wrote FILE" for each file; none of it with --quiet.
//
// Exit codes: 0 ok; 1 missing rank files ("expected PREFIX.3.et: no such
// file", with the files found), bad traces or groups, more ranks than the
// cluster's GPUs, --scale-to not a multiple of the traced ranks, deadlocks,
// unwritable outputs; 2 usage errors (no --trace, malformed numbers or rank
// lists, --trace-ranks without --trace-out).
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec replay_command_spec();
int run_replay_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
