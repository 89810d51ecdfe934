// `clustersim sweep SCENARIO`: the scenario's step simulated at every point
// of a grid (scenario/sweep_grid.h), in parallel, ranked. The sweep itself,
// its points, rows and resume journal are the runner's
// (sweep/sweep_runner.h); this command reads the options, runs it under
// mpirun's ranks or alone, and prints.
//
// Inputs: the scenario (its `sweep.axes`), `--grid KEY=ITEM,...` (repeatable;
// replaces the scenario's axis of the same key, or adds one after them),
// `--set KEY=VALUE` (applied to every point; a swept key cannot also be set).
// With HYBRID_SHARD, when only one of shard_group_size / replica_group_size
// is swept and the other is not `--set`, the file's value of the other is
// dropped so that it is derived; when both are swept (or one swept and the
// other set), points whose sizes do not multiply to the dp size are skipped.
// --threads N: points in parallel (default every core).
//
// Output: -o FILE, a CSV in grid order, written atomically; columns: the
// swept keys, status, reason, step_time_s, tokens_per_s_per_gpu,
// tflops_per_gpu, mfu, peak_memory_bytes, fits_in_memory (true/false),
// exposed_comm_s (empty for skipped points); with --campaign also ettr_mean
// and time_to_train_days (empty without campaign.tokens). Numbers are the shortest text
// that reads back to the same double, so the file is the same bytes for any
// thread count. While running, FILE.partial is the journal of finished rows;
// --resume continues from it (the final CSV is the same bytes as an
// uninterrupted run). Without --resume an old FILE.partial is started afresh.
// --campaign: each simulated point also runs the campaign of its own step
// with --trials N trials (default 20, or --set campaign.trials).
// stdout: the counts of points, the skipped and the failed ones with their
// reasons (the first 10 of each), and the best --top N (default 10) by tokens/s per GPU (times
// ETTR with --campaign), points that fit in memory first (cli/sweep_report.h).
// stderr (cli/progress.h): the points to simulate with their estimated work
// when large, progress (points done, percentage of the estimated work, ETA),
// and the CSV written; nothing of it with --quiet.
// Under mpirun (cli/mpi_context.h): every rank runs the sweep with its own
// --threads; rank 0 alone keeps the journal, writes FILE and prints: the
// same bytes as one process. A rank that fails outside its points aborts the
// whole job.
// Exit codes: 0 ok (even with skipped or failed points), 1 bad scenario,
// grid or partial file, 2 usage errors.
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec sweep_command_spec();
int run_sweep_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
