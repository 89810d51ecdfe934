#include "workloads/model/optimizer_step.h"

#include <array>
#include <string>

#include "config/named_choices.h"
#include "sim/check.h"

namespace clustersim::workloads {

namespace {

constexpr double kAdamwFlops = 14;  // per parameter (see the header)
constexpr double kStates = 3;       // master weight, m, v: each read once, written once

constexpr std::array<sim::Named<OptimizerImplementation>, 2> kImplementations = {
    {{OptimizerImplementation::kFused, "fused"}, {OptimizerImplementation::kForeach, "foreach"}}};

const char* const kImplementationKey = "workload.optimizer.implementation";

// One _foreach_ op of _multi_tensor_adamw: FLOPs and fp32 bytes per
// parameter, and whether it reads the gradient.
struct ForeachOp {
  std::string_view name;
  double flops;
  double fp32_bytes;
  bool reads_grad;
};

constexpr std::array<ForeachOp, 8> kForeachOps = {{
    {"adamw.foreach.mul_weight_decay", 1, 8, false},
    {"adamw.foreach.lerp_exp_avg", 3, 8, true},
    {"adamw.foreach.mul_exp_avg_sq", 1, 8, false},
    {"adamw.foreach.addcmul_exp_avg_sq", 3, 8, true},
    {"adamw.foreach.sqrt_exp_avg_sq", 1, 8, false},
    {"adamw.foreach.div_bias_correction", 1, 8, false},
    {"adamw.foreach.add_eps", 1, 8, false},
    {"adamw.foreach.addcdiv_param", 3, 16, false},
}};

double dbl(int64_t x) { return static_cast<double>(x); }

void check_arguments(int64_t local_params, const OptimizerPrecision& precision) {
  CLUSTERSIM_CHECK(local_params >= 0 && precision.grad_bytes > 0 &&
                       precision.param_copy_bytes >= 0 && precision.state_bytes > 0,
                   "local_params " + std::to_string(local_params));
}

}  // namespace

std::string_view optimizer_implementation_name(OptimizerImplementation impl) {
  return sim::name_of(kImplementations, impl);
}

std::vector<Kernel> adamw_foreach_ops(int64_t local_params, const OptimizerPrecision& precision) {
  check_arguments(local_params, precision);
  const double n = dbl(local_params);
  const double g = dbl(precision.grad_bytes);
  std::vector<Kernel> out;
  for (const ForeachOp& op : kForeachOps) {
    const double bytes = op.fp32_bytes * dbl(precision.state_bytes) / 4 + (op.reads_grad ? g : 0);
    out.push_back(pointwise(op.name, KernelClass::kOptimizer, op.flops * n, bytes * n));
  }
  if (precision.param_copy_bytes > 0) {
    out.push_back(pointwise("adamw.foreach.param_copy", KernelClass::kOptimizer, 0,
                            dbl(precision.param_copy_bytes) * n));
  }
  return out;
}

Kernel adamw_step(int64_t local_params, const OptimizerPrecision& precision,
                  OptimizerImplementation impl) {
  check_arguments(local_params, precision);
  if (impl == OptimizerImplementation::kForeach) {
    const std::vector<Kernel> ops = adamw_foreach_ops(local_params, precision);
    return pointwise("adamw.foreach", KernelClass::kOptimizer, total_flops(ops), total_bytes(ops));
  }
  const double n = dbl(local_params);
  const double state = kStates * dbl(precision.state_bytes);
  const double per_param =
      dbl(precision.grad_bytes) + state + state + dbl(precision.param_copy_bytes);
  return pointwise("adamw", KernelClass::kOptimizer, kAdamwFlops * n, per_param * n);
}

void add_optimizer_keys(sim::ConfigSchema& schema) {
  schema.add_section(
      "workload.optimizer",
      "The optimizer step (AdamW over each rank's shard; workloads/model/optimizer_step.h).");
  schema
      .add_key(kImplementationKey, sim::ValueType::kEnum,
               "How torch.optim.AdamW runs the step on the GPU: fused (fused=True): one kernel "
               "reading the gradient, the fp32 master weight and both moments and writing them "
               "back, 28 bytes per parameter with fp32 gradients; foreach (foreach=True): eight "
               "_foreach_ ops (_multi_tensor_adamw), each a pass over the whole shard, 72 + 2 x "
               "gradient bytes per parameter (80 with fp32 gradients, 2.9x fused's HBM traffic). "
               "PyTorch's default on CUDA, when neither fused nor foreach is given, is foreach; "
               "torchtitan's early config_manager (--optimizer.fused, default False) passed "
               "foreach unless fused was asked for, and its later optimizer.implementation "
               "defaults to fused. No effect with cpu_offload (the host runs the step).")
      .one_of(sim::names(kImplementations))
      .default_to(std::string("fused"));
}

OptimizerImplementation read_optimizer_implementation(const sim::ConfigValues& values) {
  return sim::value_of(kImplementations, values.get_string(kImplementationKey));
}

}  // namespace clustersim::workloads
