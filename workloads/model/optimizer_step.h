// The optimizer step's kernels: torch.optim.AdamW over a rank's shard, as
// the fused kernel or as the foreach (multi-tensor) ops, and the key that
// chooses between them (workload.optimizer.implementation). Conventions as
// in workloads/model/transformer_kernels.h: flops and HBM bytes read + written, as
// doubles.
//
// Precision (PyTorch mixed precision): fp32 master weights and two fp32
// moments; the gradient arrives in g = `grad_bytes` (bf16 = 2; 4 when FSDP
// upcasts to its fp32 flat parameter); the step writes a low-precision
// parameter copy of p = `param_copy_bytes` (2 for bf16; 0 when none is kept,
// e.g. FSDP casts during its all-gather, which is what the schedules pass:
// OptimizerPrecision{4, 0}). With 16-bit optimizer state (`state_bytes` 2:
// Apex's DistributedFusedAdam with dtype bf16, as NeMo's optim.dtype sets it)
// the master weight and both moments are read and written at 2 bytes each.
//
// Fused (torch.optim.AdamW(fused=True), _fused_adamw_): one kernel reading
// each operand once and writing each result once. Bytes per parameter:
// g + 12 read (master, m, v) + 12 written + p = 28 by default.
// FLOPs per parameter: 14 (weight decay 1, first moment 3, second moment 4,
// sqrt / bias correction / eps 3, update 3; sqrt and divide count 1 each).
//
// Foreach (torch/optim/adamw.py, _multi_tensor_adamw with capturable=False,
// PyTorch's default on CUDA when neither fused nor foreach is given): per
// list of the group's tensors (one list per device and dtype: the whole
// shard here) eight _foreach_ ops, each a pass over every parameter with its
// fp32 operands read and its result written (bytes and FLOPs per parameter):
//   adamw.foreach.mul_weight_decay    _foreach_mul_(params, 1 - lr*wd)     8      1
//   adamw.foreach.lerp_exp_avg        _foreach_lerp_(m, grads, 1 - beta1)  8 + g  3
//   adamw.foreach.mul_exp_avg_sq      _foreach_mul_(v, beta2)              8      1
//   adamw.foreach.addcmul_exp_avg_sq  _foreach_addcmul_(v, grads, grads)   8 + g  3
//   adamw.foreach.sqrt_exp_avg_sq     denom = _foreach_sqrt(v) (new fp32)  8      1
//   adamw.foreach.div_bias_correction _foreach_div_(denom, sqrt(bc2))      8      1
//   adamw.foreach.add_eps             _foreach_add_(denom, eps)            8      1
//   adamw.foreach.addcdiv_param       _foreach_addcdiv_(params, m, denom)  16     3
// (addcmul reads the gradient once for both of its operands; addcdiv reads
// and writes the parameter and reads m and denom.) Sum: 72 + 2g bytes (80
// with fp32 gradients, 2.9x fused's 28) and 14 FLOPs per parameter; with a
// low-precision copy, one more kernel adamw.foreach.param_copy of p bytes
// (its write, as fused counts it). The weight decay op runs only when
// weight_decay != 0 (PyTorch's default 1e-2, torchtitan's 0.1: always
// here). The step counters stay on the CPU (capturable=False): no kernel.
// Measured on an H200 (scenarios/measurements/2026-12-04_h200-sxm/
// memory_kernels.csv, 436M fp32 parameters and gradients): foreach 9,500 us
// against fused 3,509 us, 2.7x (80 / 28 = 2.9x in bytes).
//
// The schedule runs the foreach step as one kernel, adamw.foreach, with the
// eight ops' summed bytes and FLOPs (adamw_step): the ops run back to back
// on the compute stream and are all memory-bound, so their summed roofline
// time is the one kernel's (up to nanosecond rounding), and the optimizer
// stays one task of the schedule. Each op is really one launch per chunk of
// tensors (multi_tensor_apply; 1,072 launches a step in the profiled
// 2.8B-parameter eager run); those launches are not modelled.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {

struct OptimizerPrecision {
  int64_t grad_bytes = 2;        // gradient as the optimizer reads it
  int64_t param_copy_bytes = 2;  // low-precision copy written; 0 for none
  int64_t state_bytes = 4;       // master weight, m and v, each (fp32 = 4, bf16 = 2)
};

// Which torch.optim.AdamW implementation runs the step.
enum class OptimizerImplementation {
  kFused,    // fused=True: one kernel
  kForeach,  // foreach=True, or PyTorch's default on CUDA: eight _foreach_ ops
};

std::string_view optimizer_implementation_name(OptimizerImplementation impl);  // "fused", "foreach"

// The foreach step's ops over `local_params` parameters, in execution order
// (see the top of this file): eight kOptimizer kernels, and a ninth,
// adamw.foreach.param_copy, when precision.param_copy_bytes > 0.
std::vector<Kernel> adamw_foreach_ops(int64_t local_params,
                                      const OptimizerPrecision& precision = {});

// AdamW over `local_params` parameters (this rank's shard), one kOptimizer
// kernel: "adamw" (fused), or "adamw.foreach" with the summed FLOPs and bytes
// of adamw_foreach_ops().
Kernel adamw_step(int64_t local_params, const OptimizerPrecision& precision = {},
                  OptimizerImplementation impl = OptimizerImplementation::kFused);

// Declares section workload.optimizer and its key implementation (default
// fused); reads it (already validated by the schema).
void add_optimizer_keys(sim::ConfigSchema& schema);
OptimizerImplementation read_optimizer_implementation(const sim::ConfigValues& values);

}  // namespace clustersim::workloads
