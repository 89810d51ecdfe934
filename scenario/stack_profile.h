// Software stack profiles: what a training framework does, apart from the
// part it runs on (scenarios/stacks/*.yaml; docs/stacks.md).
//
// A hardware profile describes the part (clocks, kernel curves, the fabric's
// constants); a stack profile describes the software: which kernels it runs
// (eager, Inductor, fused norms, rotary variants), its data-parallel mode
// and overlaps, its optimizer implementation, its NCCL choices, and the one
// constant fitted to its training runs, workload.stack_efficiency. A
// scenario names one with `stack: torchtitan` (a shipped stack by its bare
// name, or a path relative to the scenario's folder), and the stack's values
// take the place of the schema's defaults for the keys the scenario leaves
// out: a key the scenario (or --set) gives wins. A stack file may `extends:`
// another, as hardware profiles do.
//
// A stack file holds only the keys of kStackKeys (scenario keys, written as
// in a scenario: `workload: {fsdp: {version: 2}}`) plus name, description
// and extends. A hardware profile's key there, or a job's key (the model,
// the batch, the sizes of the parallel groups), is an error naming the file
// it belongs in; so is a stack key in a hardware profile
// (hardware_schema_for_scenario).
//
// Errors: sim::ConfigError diagnostics at file:line:col (the stack file's
// for its own keys, the scenario's `stack` key for a stack that is not
// found), all of a file at once.
// Thread safety: pure functions of their inputs and the file system; the
// shipped folder is fixed when the build is configured
// (CLUSTERSIM_STACKS_DIR).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::cli {

// The scenario keys a stack profile may set.
inline constexpr auto kStackKeys = std::to_array<std::string_view>({
    "workload.stack_efficiency",
    "workload.stack_efficiency_fitted_to",
    "workload.attention",
    "workload.cross_entropy",
    "workload.norm_kernel",
    "workload.rotary_embedding",
    "workload.torch_compile",
    "workload.cuda_graphs",
    "workload.grad_clip",
    "workload.host.per_step",
    "workload.host.per_step_jitter",
    "workload.host.per_micro_batch",
    "workload.host.per_layer",
    "workload.optimizer.implementation",
    "workload.fsdp.version",
    "workload.fsdp.reduce_dtype",
    "workload.fsdp.reshard_after_forward",
    "workload.fsdp.backward_prefetch",
    "workload.fsdp.forward_prefetch",
    "workload.fsdp.limit_all_gathers",
    "workload.fsdp.no_sync",
    "workload.fsdp.separate_reduce_stream",
    "workload.parallelism.strategy",
    "workload.parallelism.tp_sequence_dim",
    "workload.parallelism.async_tp",
    "workload.parallelism.mesh_order",
    "workload.pipeline.grad_reduction",
    "workload.megatron.ddp",
    "workload.megatron.overlap_grad_reduce",
    "workload.megatron.overlap_param_gather",
    "workload.megatron.bucket_size",
    "workload.megatron.store_param_remainders",
    "workload.megatron.fp8_param_gather",
    "workload.megatron.optimizer_dtype",
    "workload.megatron.fsdp",
    "workload.megatron.fsdp_double_buffer",
    "workload.float8.weight_casts",
    "workload.float8.fsdp_all_gather",
    "workload.float8.precompute_scales",
    "workload.context_parallel.rotate_method",
    "workload.context_parallel.kv_heads",
    "collectives.algorithm",
    "collectives.protocol",
    "collectives.nvls",
    "workload.float8.recipe",
});

// The folder of the shipped stacks and their bare names, sorted.
std::string shipped_stacks_dir();
std::vector<std::string> shipped_stack_names();

// The file a scenario's `stack` value names: a bare name (no '/', no .yaml)
// is the shipped stack; else a path relative to the scenario's folder.
std::string resolve_stack_path(const std::string& scenario_path, const std::string& value);

// The schema of a stack file, from the scenario's: name, description,
// extends, the kStackKeys (no key required), and every other scenario key
// and every key of `hardware` marked foreign, with where it belongs
// (hardware_path: the profile the scenario names, shown in that message).
sim::ConfigSchema stack_profile_schema(const sim::ConfigSchema& scenario,
                                       const sim::ConfigSchema& hardware,
                                       const std::string& hardware_path);

// The hardware profile's schema with the stack keys marked foreign (they
// belong in `stack_path`, or in a stack or the scenario when it names none).
sim::ConfigSchema hardware_schema_for_scenario(const std::string& stack_path);

// Puts the values of the stack that `values` names (key `stack`; nothing
// when it names none) under the scenario's: each stack key the scenario
// left at its default takes the stack's value, located in the stack file.
// `scenario_path` locates a relative stack. Problems (a stack not found, a
// bad key in it) are added to `problems`; the values keep what could be
// applied. Applying twice changes nothing more.
void apply_stack_profile(sim::ConfigValues& values, const std::string& scenario_path,
                         sim::DiagnosticSink& problems);
// The same, throwing sim::ConfigError with the problems.
void apply_stack_profile(sim::ConfigValues& values, const std::string& scenario_path);

// The stack `values` names, for reports and fits: its file (resolved), or
// "" when the scenario names none.
std::string stack_path_of(const sim::ConfigValues& values, const std::string& scenario_path);

// Adds the scenario's `stack` key.
void add_stack_keys(sim::ConfigSchema& schema);

}  // namespace clustersim::cli
