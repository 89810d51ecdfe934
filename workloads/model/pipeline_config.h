// The workload.pipeline keys (pipeline parallelism's schedule, micro-batches,
// chunks per rank, layer split and gradient reduction): their schema, how
// they are read into a WorkloadSpec, and their checks against the rest of it
// (the mesh, the model's layers, grad_accum, torch.compile).
//
// Errors: check_pipeline adds every problem to the sink at the key's
// FILE:LINE:COL, naming what was expected and what was found.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {

void add_pipeline_keys(sim::ConfigSchema& schema);

// The schedule, chunks per rank and gradient reduction (validated by
// check_pipeline).
void read_pipeline_keys(const sim::ConfigValues& values, WorkloadSpec& w);

// With the rest of `w` read (pp, tp, world size, grad_accum, torch.compile;
// the model when model_ok): checks the pipeline keys, then sets grad_accum to
// the pipeline's micro-batches (workload.pipeline.microbatches, else
// `from_global_batch`, the count workload.global_batch asks for, else pp) and
// layers_per_chunk to the split, if any.
void check_pipeline(const sim::ConfigValues& values, WorkloadSpec& w, bool model_ok,
                    std::optional<int64_t> from_global_batch, sim::DiagnosticSink& sink);

}  // namespace clustersim::workloads
