// `clustersim sweep SCENARIO`: the scenario's step simulated at every point
// of a grid (scenario/sweep_grid.h), in parallel, ranked.
//
// Inputs: the scenario (its `sweep.axes`), `--grid KEY=ITEM,...` (repeatable;
// replaces the scenario's axis of the same key, or adds one after them),
// `--set KEY=VALUE` (applied to every point; a swept key cannot also be set).
// A point is the scenario loaded with its axes' values as overrides, so it is
// validated exactly like the file. With HYBRID_SHARD, when only one of
// shard_group_size / replica_group_size is swept and the other is not
// `--set`, the file's value of the other is dropped so that it is derived;
// when both are swept (or one swept and the other set), points whose sizes
// do not multiply to the dp size are skipped.
//
// Each point: invalid ones (any scenario or workload error: sizes that do
// not divide, tp above the GPUs of a node, a forced collectives.algorithm or
// protocol that one of its groups cannot run, ...) are `skipped` with the
// reason (the errors' "key: message", without the file); the others are
// simulated like `run --allow-oom` and are `ok` or `out_of_memory`. A point
// on which clustersim itself fails (an invariant, memory) is `failed` with
// the error's text; no point stops the sweep.
// Clusters are built once per distinct `cluster.*` setting and shared
// (read-only) by the points' simulations; points run in parallel (OpenMP,
// --threads N, default every core).
//
// Output: -o FILE, a CSV in grid order, written atomically; columns: the
// swept keys, status, reason, step_time_s, tokens_per_s_per_gpu,
// tflops_per_gpu, mfu, peak_memory_bytes, fits_in_memory (true/false),
// exposed_comm_s (empty for skipped points); with --campaign also ettr_mean
// and time_to_train_days (empty without campaign.tokens). Numbers are the shortest text
// that reads back to the same double, so the file is the same bytes for any
// thread count. While running, FILE.partial receives each finished row as
// "INDEX,ROW" (flushed, any order) after a first line naming the sweep;
// --resume reads it back (a row must name the same point; a cut last line is
// ignored), copies its rows verbatim and simulates only the rest, so the
// final CSV is the same bytes as an uninterrupted run. FILE.partial is
// removed once FILE is written. Without --resume an old FILE.partial is
// started afresh.
// --campaign: each simulated point also runs the campaign of its own step
// like `campaign` (scenario/campaign_inputs.h; the point's simulated step is used
// even when campaign.step_time is set) with --trials N trials (default 20,
// or --set campaign.trials), serially inside the point; a point whose
// campaign cannot run (e.g. ft_hsdp with one replica group) is skipped with
// "campaign: " and the reason.
// stdout: the counts of points, the skipped and the failed ones with their
// reasons (the first 10 of each), and the best --top N (default 10) by tokens/s per GPU (times
// ETTR with --campaign), points that fit in memory first.
// stderr: progress (points done, rate, ETA) only when it is a terminal.
// Under mpirun (cli/mpi_context.h): every rank expands the same grid and
// simulates every size-th point still to do (with its own --threads); rank 0
// alone reads FILE.partial for --resume (telling the others which points are
// done), appends its rows to FILE.partial as they finish and the other ranks'
// when they arrive at the end, writes FILE and prints: the same bytes as one
// process. A rank that fails outside its points aborts the whole job.
// Exit codes: 0 ok (even with skipped or failed points), 1 bad scenario,
// grid or partial file, 2 usage errors.
// The pieces: the points (cli/sweep_points.h), their CSV rows
// (cli/sweep_rows.h), the journal FILE.partial (cli/sweep_journal.h) and
// stdout (cli/sweep_report.h).
#pragma once

#include <ostream>

#include "cli/command_line.h"

namespace clustersim::cli {

CommandSpec sweep_command_spec();
int run_sweep_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
