#include "cli/kernels_command.h"

#include <cstdio>
#include <map>
#include <string_view>
#include <tuple>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "scenario/network_scenario.h"
#include "scenario/step_config.h"
#include "sim/check.h"
#include "workloads/model/float8_kernels.h"
#include "workloads/model/workload_config.h"

namespace clustersim::cli {

namespace {

using workloads::Kernel;
using workloads::KernelClass;

bool is_backward(std::string_view name) { return name.ends_with(".bwd"); }

// What makes two kernels the same measurement: the class, the GEMM shape and
// format (bf16, FP8, MXFP8, NVFP4) or the attention configuration and pass.
using ShapeKey = std::tuple<KernelClass, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool,
                            workloads::GemmFormat>;

ShapeKey key_of(const Kernel& kernel) {
  if (kernel.cls == KernelClass::kGemm) {
    return {kernel.cls, kernel.m, kernel.n, kernel.k, 0, 0, false, false, kernel.format};
  }
  return {kernel.cls,
          kernel.batch,
          kernel.seq,
          kernel.heads,
          kernel.kv_heads,
          kernel.head_dim,
          kernel.causal,
          is_backward(kernel.name),
          workloads::GemmFormat::kBf16};
}

// " (fp8)" and so on for a low-precision GEMM, "" for the training dtype's.
std::string format_note(const Kernel& kernel) {
  if (kernel.format == workloads::GemmFormat::kBf16) return "";
  return " (" + std::string(workloads::gemm_format_name(kernel.format)) + ")";
}

void add_name(std::string& names, std::string_view name) {
  size_t start = 0;
  while (start <= names.size()) {
    size_t end = names.find('+', start);
    if (end == std::string::npos) end = names.size();
    if (std::string_view(names).substr(start, end - start) == name) return;
    start = end + 1;
  }
  if (!names.empty()) names += '+';
  names += name;
}

bool runs_a_kernel(const workloads::Task& task) {
  return (task.kind == workloads::TaskKind::kKernel ||
          task.kind == workloads::TaskKind::kOptimizer) &&
         task.kernel != workloads::kNoKernel;
}

// Every kernel FLOP of the schedules' steps (all classes).
double step_kernel_flops(std::span<const workloads::FsdpSchedule> schedules) {
  double total = 0;
  for (const workloads::FsdpSchedule& schedule : schedules) {
    for (const workloads::Task& task : schedule.tasks) {
      if (runs_a_kernel(task)) total += schedule.kernels[static_cast<size_t>(task.kernel)].flops;
    }
  }
  return total;
}

std::string str(int64_t value) { return std::to_string(value); }

std::string flops_text(double flops) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.0f", flops);
  return buffer;
}

std::string share_text(double part, double whole) {
  return whole > 0 ? fixed(100.0 * part / whole, 1) : "-";
}

// Whose kernels the counts are: one rank, or with stages which of them.
std::string ranks_text(const workloads::WorkloadSpec& spec, int64_t stage) {
  if (spec.pp == 1) return "per rank and step";
  if (stage >= 0) return "per rank of pipeline stage " + str(stage) + " of " + str(spec.pp);
  return "per step, one rank of each of the " + str(spec.pp) + " pipeline stages";
}

std::string table_text(std::span<const KernelShape> shapes, const std::string& scenario,
                       const workloads::WorkloadSpec& spec, int64_t stage, double step_flops) {
  double gemm_flops = 0;
  double attention_flops = 0;
  for (const KernelShape& s : shapes) {
    const double total = s.kernel.flops * static_cast<double>(s.count_per_step);
    (s.kernel.cls == KernelClass::kGemm ? gemm_flops : attention_flops) += total;
  }
  std::string text = "scenario: " + scenario + "\n";
  text += "model: " + spec.model.name + ", " + std::string(workloads::dtype_name(spec.dtype)) +
          ", tp " + str(spec.tp) + (spec.cp > 1 ? ", cp " + str(spec.cp) : "") +
          (spec.pp > 1 ? ", pp " + str(spec.pp) : "") + ", activation checkpointing " +
          std::string(workloads::activation_checkpointing_name(spec.activation_checkpointing)) +
          (spec.torch_compile ? ", torch.compile" : ", eager") + "\n";
  text += ranks_text(spec, stage) + ": " + str(spec.grad_accum) + " micro-batch(es) of " +
          str(spec.local_batch) + " x " + str(spec.seq_len) + " tokens" +
          (spec.cp > 1 ? " (" + str(spec.seq_len / spec.cp) + " of each sequence on a rank)" : "") +
          "\n";
  text += "kernel FLOPs " + ranks_text(spec, stage) + ": " + fixed(step_flops / 1e12, 2) +
          " TFLOP (GEMMs " + share_text(gemm_flops, step_flops) + "%, attention " +
          share_text(attention_flops, step_flops) + "%)\n";

  text += "\nGEMMs, C[m x n] = A[m x k] * B[k x n]\n";
  text += pad("m", 8) + pad("n", 8) + pad("k", 8) + pad("count", 7) + pad("GFLOP/call", 12) +
          pad("step %", 8) + "  names\n";
  for (const KernelShape& s : shapes) {
    if (s.kernel.cls != KernelClass::kGemm) continue;
    text += pad(str(s.kernel.m), 8) + pad(str(s.kernel.n), 8) + pad(str(s.kernel.k), 8) +
            pad(str(s.count_per_step), 7) + pad(fixed(s.kernel.flops / 1e9, 1), 12) +
            pad(share_text(s.kernel.flops * static_cast<double>(s.count_per_step), step_flops), 8) +
            "  " + s.name + format_note(s.kernel) + "\n";
  }

  text += "\nattention (flash; heads per rank)\n";
  text += pad("pass", 5) + pad("batch", 7) + pad("seq", 7) + pad("heads", 7) + pad("kv_heads", 10) +
          pad("head_dim", 10) + pad("causal", 8) + pad("count", 7) + pad("GFLOP/call", 12) +
          pad("step %", 8) + "  names\n";
  for (const KernelShape& s : shapes) {
    if (s.kernel.cls != KernelClass::kAttention) continue;
    text += pad(s.backward ? "bwd" : "fwd", 5) + pad(str(s.kernel.batch), 7) +
            pad(str(s.kernel.seq), 7) + pad(str(s.kernel.heads), 7) +
            pad(str(s.kernel.kv_heads), 10) + pad(str(s.kernel.head_dim), 10) +
            pad(s.kernel.causal ? "true" : "false", 8) + pad(str(s.count_per_step), 7) +
            pad(fixed(s.kernel.flops / 1e9, 1), 12) +
            pad(share_text(s.kernel.flops * static_cast<double>(s.count_per_step), step_flops), 8) +
            "  " + s.name + "\n";
  }
  return text;
}

}  // namespace

std::vector<KernelShape> distinct_kernel_shapes(
    std::span<const workloads::FsdpSchedule> schedules) {
  std::vector<KernelShape> shapes;
  std::map<ShapeKey, size_t> row_of;
  for (const workloads::FsdpSchedule& schedule : schedules) {
    for (const workloads::Task& task : schedule.tasks) {
      if (!runs_a_kernel(task)) continue;
      CLUSTERSIM_CHECK(
          task.kernel >= 0 && static_cast<size_t>(task.kernel) < schedule.kernels.size(),
          "a schedule task's kernel index lies in the kernel table");
      const Kernel& kernel = schedule.kernels[static_cast<size_t>(task.kernel)];
      if (kernel.cls != KernelClass::kGemm && kernel.cls != KernelClass::kAttention) continue;
      const auto [it, inserted] = row_of.emplace(key_of(kernel), shapes.size());
      if (inserted) {
        KernelShape s;
        s.kernel = kernel;
        s.backward = kernel.cls == KernelClass::kAttention && is_backward(kernel.name);
        shapes.push_back(std::move(s));
      }
      KernelShape& row = shapes[it->second];
      add_name(row.name, kernel.name);
      ++row.count_per_step;
    }
  }
  return shapes;
}

std::string kernel_shapes_csv(std::span<const KernelShape> shapes, const std::string& scenario,
                              const std::string& dtype, const std::string& counted) {
  std::string text = "# clustersim kernels " + scenario + ": distinct GEMM and attention kernels " +
                     counted + "\n";
  text +=
      "kind,name,dtype,m,n,k,batch,seq,heads,kv_heads,head_dim,causal,pass,count_per_step,flops\n";
  for (const KernelShape& s : shapes) {
    const bool gemm = s.kernel.cls == KernelClass::kGemm;
    // Low-precision GEMMs (workload.float8) run in their format whatever the
    // model's dtype.
    text += std::string(gemm ? "gemm" : "attention") + "," + s.name + "," +
            (s.kernel.format != workloads::GemmFormat::kBf16
                 ? std::string(workloads::gemm_format_name(s.kernel.format))
                 : dtype) +
            ",";
    if (gemm) {
      text += str(s.kernel.m) + "," + str(s.kernel.n) + "," + str(s.kernel.k) + ",,,,,,,,";
    } else {
      text += ",,," + str(s.kernel.batch) + "," + str(s.kernel.seq) + "," + str(s.kernel.heads) +
              "," + str(s.kernel.kv_heads) + "," + str(s.kernel.head_dim) + "," +
              (s.kernel.causal ? "true" : "false") + "," + (s.backward ? "bwd" : "fwd") + ",";
    }
    text += str(s.count_per_step) + "," + flops_text(s.kernel.flops) + "\n";
  }
  return text;
}

CommandSpec kernels_command_spec() {
  return {"kernels",
          "List the distinct GEMM shapes and attention configurations of a step, to benchmark.",
          {"SCENARIO"},
          {{"--set", "KEY=VALUE", true, "override a scenario key, validated like the file"},
           {"--csv", "", false, "print CSV (the input of scripts/microbench/gemm.py --shapes)"},
           {"--stage", "S", false,
            "with pipeline stages: one rank of stage S only (default: one rank of each stage)"},
           {"-o", "FILE", false, "write to FILE (atomically) instead of stdout"},
           quiet_option()},
          "Per rank and step: every micro-batch, recomputation under activation checkpointing\n"
          "and tensor-parallel slices count; with pipeline stages, one rank of each stage (the\n"
          "embedding is on the first, the output layer on the last), or of --stage S alone.\n"
          "GEMMs of equal (m, n, k) and attention calls of\n"
          "equal configuration and pass are one row; names are joined by '+'; FP8 GEMMs\n"
          "(workload.float8) are rows of their own, dtype fp8, marked (fp8) in the table.\n"
          "CSV columns: kind,name,dtype,m,n,k,batch,seq,heads,kv_heads,head_dim,causal,pass,\n"
          "count_per_step,flops (flops of one call; columns that do not apply are empty).\n"
          "With -o, 'wrote FILE' on stderr (not with --quiet)."};
}

int run_kernels_command(const ParsedCommand& parsed, std::ostream& out, std::ostream& err) {
  StepScenario step = load_step_scenario(parsed.positionals[0], parsed.values("--set"));
  const NetworkScenario& net = step.net;
  workloads::StepConfig& config = step.config;
  const int64_t pp = config.workload.pp;
  const int64_t stage = parsed.non_negative_int_or("--stage", -1, "a pipeline stage");
  if (stage >= pp) {
    throw UsageError("option '--stage' expects a pipeline stage below pp " + str(pp) + ", found " +
                     str(stage));
  }
  const int64_t first = stage >= 0 ? stage : 0;
  const int64_t last = stage >= 0 ? stage : pp - 1;
  std::vector<workloads::FsdpSchedule> schedules;
  for (int64_t s = first; s <= last; ++s) {
    config.schedule_options.stage = s;
    schedules.push_back(workloads::build_fsdp_schedule(config.workload, config.schedule_options));
  }
  const std::vector<KernelShape> shapes = distinct_kernel_shapes(schedules);
  const std::string scenario = net.values.get_string("name");
  const std::string text =
      parsed.has("--csv")
          ? kernel_shapes_csv(shapes, scenario,
                              std::string(workloads::dtype_name(config.workload.dtype)),
                              ranks_text(config.workload, pp > 1 ? stage : -1))
          : table_text(shapes, scenario, config.workload, pp > 1 ? stage : -1,
                       step_kernel_flops(schedules));
  const std::string output = parsed.value_or("-o", "");
  if (output.empty()) {
    out << text;
  } else {
    sim::write_file_atomically(output, text);
    StatusLine(err, "clustersim kernels", status_mode(parsed, err)).note("wrote " + output);
  }
  return kExitOk;
}

}  // namespace clustersim::cli
