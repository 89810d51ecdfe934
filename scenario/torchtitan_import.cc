#include "scenario/torchtitan_import.h"

#include <array>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <utility>

#include "config/config_tree.h"
#include "config/file_text.h"
#include "config/text_fields.h"
#include "config/toml_tree.h"
#include "scenario/config_import.h"
#include "scenario/torchtitan_pipeline.h"
#include "workloads/model/model_spec.h"

namespace clustersim::cli {

namespace {

using sim::ConfigNode;

std::string str(int64_t x) { return std::to_string(x); }

struct Flavor {
  std::string_view model;  // [model] name
  std::string_view flavor;
  std::string_view preset;
};

// torchtitan's model names with a flavor this project has a preset of; torchtitan called
// Llama 2 "llama" until mid-2024.
constexpr std::array<Flavor, 9> kFlavors = {{
    {"llama3", "8B", "llama3-8b"},
    {"llama3", "70B", "llama3-70b"},
    {"llama3", "405B", "llama3-405b"},
    {"llama2", "7B", "llama2-7b"},
    {"llama2", "13B", "llama2-13b"},
    {"llama2", "70B", "llama2-70b"},
    {"llama", "7B", "llama2-7b"},
    {"llama", "13B", "llama2-13b"},
    {"llama", "70B", "llama2-70b"},
}};

class TorchtitanImport : public ConfigImport {
 public:
  TorchtitanImport(const ConfigNode& root, const std::string& config_path,
                   const ImportOptions& options)
      : ConfigImport(root, "torchtitan", "torchtitan", config_path, options, KeyStyle::kToml) {
    // The 2025 layout moved the degrees into [parallelism] and renamed batch_size.
    layout_2025_ = root.member("parallelism") != nullptr ||
                   root.find("training.local_batch_size") != nullptr ||
                   root.member("compile") != nullptr;
  }

  ImportedScenario run() {
    if (const auto description = reader_.take_string("job.description")) {
      scenario_.description = *description + " (torchtitan)";
    }
    read_model();
    read_mesh();
    read_batch_and_pipeline();
    read_precision_and_memory();
    read_float8();
    read_optimizer();
    return finish(gpus_);
  }

 private:
  void read_model() {
    const std::string name_path = "model.name";
    const std::string flavor_path = "model.flavor";
    const std::optional<std::string> name = reader_.take_string(name_path);
    const std::optional<std::string> flavor = reader_.take_string(flavor_path);
    if (!name || !flavor) {
      // A value of the wrong type is reported by the reader; an absent one here.
      for (const auto& [path, what] : {std::pair{name_path, "name"}, {flavor_path, "flavor"}}) {
        if (reader_.has(path)) continue;
        report(path, std::string("expected the model's ") + what +
                         " (torchtitan's default is its debug model, which has no preset here), "
                         "found none");
      }
      return;
    }
    std::string flavors;
    for (const Flavor& f : kFlavors) {
      if (f.model != *name) continue;
      if (f.flavor == *flavor) {
        put("workload.model", std::string(f.preset), flavor_path,
            "[model] name = '" + *name + "', flavor = '" + *flavor + "'");
        layers_ = workloads::model_preset(f.preset)->layers;
        return;
      }
      flavors += (flavors.empty() ? "" : ", ") + std::string(f.flavor);
    }
    if (flavors.empty()) {
      report(name_path,
             "expected llama3 or llama2 (llama before mid-2024): the models with "
             "presets here, found '" +
                 *name + "'");
    } else {
      report(flavor_path, "expected a flavor of " + *name + " with a preset here (" + flavors +
                              "), found '" + *flavor + "'");
    }
  }

  // The degrees, the GPUs they need, and the FSDP/HSDP/DDP groups.
  void read_mesh() {
    const std::string rep_path = path_of(
        {"parallelism.data_parallel_replicate_degree", "training.data_parallel_replicate_degree"});
    const std::string shard_path =
        path_of({"parallelism.data_parallel_shard_degree", "training.data_parallel_shard_degree",
                 "training.data_parallel_degree"});
    const std::string tp_path =
        path_of({"parallelism.tensor_parallel_degree", "training.tensor_parallel_degree"});
    pp_path_ =
        path_of({"parallelism.pipeline_parallel_degree", "experimental.pipeline_parallel_degree",
                 "training.pipeline_parallel_degree"});
    const std::string cp_path =
        path_of({"parallelism.context_parallel_degree", "experimental.context_parallel_degree"});
    int64_t rep = int_or(rep_path, 1);
    int64_t shard = int_or(shard_path, -1);
    tp_ = int_or(tp_path, 1);
    pp_ = int_or(pp_path_, 1);
    cp_ = int_or(cp_path, 1);
    bool ok = true;
    for (const auto& [path, degree, may_be_left] :
         {std::tuple{rep_path, rep, true}, std::tuple{shard_path, shard, true},
          std::tuple{tp_path, tp_, false}, std::tuple{pp_path_, pp_, false},
          std::tuple{cp_path, cp_, false}}) {
      // A degree past a million GPUs is a typo, and products of such would overflow.
      if ((degree >= 1 && degree <= kMostConfigCount) || (may_be_left && degree == -1)) continue;
      report(path, "expected a degree from 1 to " + str(kMostConfigCount) +
                       std::string(may_be_left ? " or -1 (the GPUs left over)" : "") + ", found " +
                       str(degree));
      ok = false;
    }
    if (ok && rep == -1 && shard == -1) {
      report(rep_path, "expected at most one data-parallel degree of -1, found -1 for both");
      ok = false;
    }
    if (!ok) return;
    const int64_t fixed = (rep == -1 ? 1 : rep) * (shard == -1 ? 1 : shard) * tp_ * pp_ * cp_;
    const std::string product = "data_parallel_replicate_degree " + str(rep) +
                                " x data_parallel_shard_degree " + str(shard) + " x tp " +
                                str(tp_) + " x pp " + str(pp_) + " x cp " + str(cp_);
    const std::string left_path = rep == -1 ? rep_path : shard_path;
    const bool left_over = rep == -1 || shard == -1;
    if (left_over) {
      if (!options_.gpus) {
        report(left_path,
               "expected --gpus N with " + shown(left_path) +
                   " -1 (the GPUs left over): a torchtitan config does not hold the GPU count, "
                   "torchrun's --nproc_per_node x --nnodes does; found no --gpus");
        return;
      }
      const int64_t gpus = *options_.gpus;
      gpus_ = {gpus, "--gpus " + str(gpus), sim::SourceLocation{"--gpus " + str(gpus), 0, 0}, ""};
      if (gpus % fixed != 0) {
        sink_.add(gpus_.where, "",
                  "expected a multiple of " + str(fixed) + " GPUs (" + product +
                      " with -1 taking the rest), found " + str(gpus));
        return;
      }
      (rep == -1 ? rep : shard) = gpus / fixed;
    } else {
      gpus_ = {fixed, product, where_of(shard_path), shard_path};
      if (options_.gpus && *options_.gpus != fixed) {
        sink_.add(
            sim::SourceLocation{"--gpus " + str(*options_.gpus), 0, 0}, "",
            "expected " + str(fixed) + " GPUs (" + product + "), found " + str(*options_.gpus));
        return;
      }
    }
    dp_ = rep * shard;
    mesh_ok_ = true;
    const std::string groups =
        "data_parallel_replicate_degree " + str(rep) + ", data_parallel_shard_degree " +
        str(shard) + (left_over ? " (" + shown(left_path) + " -1: the GPUs left over)" : "");
    if (rep > 1 && shard > 1) {
      put("workload.parallelism.strategy", "HYBRID_SHARD", shard_path, "HSDP: " + groups);
      // FSDP shards over dp_shard x cp (torchtitan's dp_shard_cp).
      put("workload.parallelism.shard_group_size", str(shard * cp_), shard_path,
          shown(shard_path) + " " + str(shard) + " x cp " + str(cp_));
    } else if (rep > 1) {
      put("workload.parallelism.strategy", "NO_SHARD", rep_path, "DDP: " + groups);
    } else {
      put("workload.parallelism.strategy", "FULL_SHARD", shard_path, "FSDP2: " + groups);
    }
    put("workload.parallelism.tp", str(tp_), tp_path, absent(tp_path, "1"));
    // Degrees of 1 are written when the config states them, so that every key it maps shows.
    if (pp_ > 1 || reader_.has(pp_path_)) put("workload.parallelism.pp", str(pp_), pp_path_);
    if (cp_ > 1 || reader_.has(cp_path)) put("workload.parallelism.cp", str(cp_), cp_path);
    const std::string rotate_path = path_of({"parallelism.context_parallel_rotate_method",
                                             "experimental.context_parallel_rotate_method"});
    if (const auto rotate = reader_.take_string(rotate_path)) {
      put("workload.context_parallel.rotate_method", *rotate, rotate_path);
    }
    const std::string async_path = path_of(
        {"parallelism.enable_async_tensor_parallel", "experimental.enable_async_tensor_parallel"});
    if (bool_or(async_path, false)) put("workload.parallelism.async_tp", "true", async_path);
    const std::string reshard_path = "parallelism.fsdp_reshard_after_forward";
    if (const auto reshard = reader_.take_string(reshard_path)) {
      if (*reshard == "never" || *reshard == "always" || *reshard == "default") {
        // "default" reshards except under PP, where the stages keep their units anyway.
        put("workload.fsdp.reshard_after_forward", *reshard == "never" ? "false" : "true",
            reshard_path, shown(reshard_path) + " = '" + *reshard + "'");
      } else {
        report(reshard_path, "expected default, always or never, found '" + *reshard + "'");
      }
    }
  }

  void read_batch_and_pipeline() {
    const std::string seq_path = "training.seq_len";
    put("workload.seq_len", str(int_or(seq_path, 2048)), seq_path, absent(seq_path, "2048"));
    const std::string local_path = path_of({"training.local_batch_size", "training.batch_size"});
    const int64_t local = int_or(local_path, 8);
    const std::string global_path = "training.global_batch_size";
    const int64_t global = int_or(global_path, -1);
    if (local < 1 || local > kMostConfigCount) {
      report(local_path,
             "expected 1 to " + str(kMostConfigCount) + " sequences, found " + str(local));
    }
    if (global == 0 || global < -1) {
      report(global_path,
             "expected a positive number of sequences or -1 (local_batch_size x "
             "the data-parallel degree), found " +
                 str(global));
    }
    if (local < 1 || local > kMostConfigCount || global == 0 || global < -1) return;
    if (pp_ < 1) return;  // the degree's error is reported
    if (pp_ == 1) {
      put("workload.local_batch", str(local), local_path, absent(local_path, "8"));
      if (global > 0) put("workload.global_batch", str(global), global_path);
      return;
    }
    int64_t micro_batches = 0;
    int64_t micro_batch = 0;
    std::string count_comment;
    std::string size_comment;
    std::string size_path = local_path;
    if (layout_2025_) {
      // 2025: each rank's local_batch_size in micro-batches of pipeline_parallel_microbatch_size.
      size_path = "parallelism.pipeline_parallel_microbatch_size";
      micro_batch = int_or(size_path, 1);
      if (micro_batch < 1 || local % micro_batch != 0) {
        report(size_path, "expected a divisor of " + shown(local_path) + " " + str(local) +
                              ", found " + str(micro_batch));
        return;
      }
      micro_batches = local / micro_batch;
      size_comment = absent(size_path, "1");
      count_comment =
          shown(local_path) + " " + str(local) + " / " + shown(size_path) + " " + str(micro_batch);
    } else {
      // Until 2025: each rank's batch_size in pipeline_parallel_microbatches, by default pp.
      const std::string count_path = "experimental.pipeline_parallel_microbatches";
      micro_batches = int_or(count_path, pp_);
      if (micro_batches < 1 || local % micro_batches != 0) {
        report(count_path, "expected a divisor of " + shown(local_path) + " " + str(local) +
                               " (each rank's batch is cut into the micro-batches), found " +
                               str(micro_batches));
        return;
      }
      micro_batch = local / micro_batches;
      count_comment = reader_.has(count_path) ? shown(count_path)
                                              : shown(count_path) +
                                                    " (absent: the default of December 2024, "
                                                    "pipeline_parallel_degree)";
      size_comment =
          shown(local_path) + " " + str(local) + " / " + str(micro_batches) + " micro-batches";
    }
    if (global > 0 && mesh_ok_ && global != local * dp_) {
      report(global_path,
             "expected -1 or " + shown(local_path) + " " + str(local) + " x data-parallel degree " +
                 str(dp_) + " = " + str(local * dp_) +
                 " with pipeline parallelism (gradient accumulation over several pipeline steps "
                 "is not modelled), found " +
                 str(global));
      return;
    }
    put("workload.local_batch", str(micro_batch), size_path, size_comment);
    put("workload.pipeline.microbatches", str(micro_batches), size_path, count_comment);
    if (global > 0) put("workload.global_batch", str(global), global_path);
    read_pipeline_schedule();
  }

  void read_pipeline_schedule() {
    const std::string schedule_path = path_of(
        {"parallelism.pipeline_parallel_schedule", "experimental.pipeline_parallel_schedule"});
    const std::string name = string_or(schedule_path, "1F1B");
    const std::optional<TorchtitanSchedule> schedule = torchtitan_schedule(name);
    if (!schedule) {
      report(schedule_path, "expected one of torch.distributed.pipelining's schedules (" +
                                torchtitan_schedule_names() + "), found '" + name + "'");
      return;
    }
    put("workload.pipeline.schedule", schedule->name, schedule_path, absent(schedule_path, "1F1B"));
    if (!schedule->note.empty()) {
      approximate(shown(schedule_path) + " '" + name + "': " + schedule->note);
    }
    if (layers_ == 0) return;  // no model: its error is reported
    std::vector<int64_t> counts;
    std::string split_comment;
    const std::string points_path = path_of({"parallelism.pipeline_parallel_split_points",
                                             "experimental.pipeline_parallel_split_points"});
    const std::string parts_path = "parallelism.module_fqns_per_model_part";
    const std::string per_stage_path = "parallelism.pipeline_parallel_layers_per_stage";
    if (const ConfigNode* points = reader_.take(points_path)) {
      std::vector<std::string> names;
      for (const ConfigNode& item : points->items) names.push_back(item.text);
      if (points->kind == ConfigNode::Kind::kString) {
        for (const sim::TextField& f : sim::split_commas(points->text)) names.emplace_back(f.text);
      }
      const auto split = split_from_points(layers_, names);
      if (!split) {
        report(points_path, "expected increasing split points layers.N with N in 1.." +
                                str(layers_ - 1) + ", found " + sim::value_text(*points));
        return;
      }
      counts = *split;
      split_comment = shown(points_path);
    } else if (const ConfigNode* parts = reader_.take(parts_path)) {
      for (const ConfigNode& part : parts->items) {
        int64_t blocks = 0;
        for (const ConfigNode& module : part.items) blocks += module.text.rfind("layers.", 0) == 0;
        counts.push_back(blocks);
      }
      split_comment = shown(parts_path) + " (its layers.N modules per part)";
    } else {
      const int64_t stages_per_rank = schedule->multi_stage ? 2 : 1;
      if (layout_2025_) {
        const std::string first_path = "parallelism.pipeline_parallel_first_stage_less_layers";
        const std::string last_path = "parallelism.pipeline_parallel_last_stage_less_layers";
        const int64_t input_weight = int_or(first_path, 1);
        const int64_t output_weight = int_or(last_path, 1);
        int64_t stages = pp_ * stages_per_rank;
        if (const auto per_stage = reader_.take_int(per_stage_path)) {
          if (*per_stage < 1 || input_weight < 0 || output_weight < 0) {
            report(per_stage_path,
                   "expected at least 1 block per stage (and stage weights of 0 "
                   "or more), found " +
                       str(*per_stage));
            return;
          }
          stages = (layers_ + input_weight + output_weight + *per_stage - 1) / *per_stage;
        }
        counts = torchtitan_2025_split(layers_, stages, input_weight, output_weight);
        split_comment = "torchtitan's 2025 split (the embedding and the output weighed as " +
                        str(input_weight) + " and " + str(output_weight) + " layers)";
      } else {
        counts = torchtitan_2024_split(layers_, pp_ * stages_per_rank);
        split_comment = "torchtitan's split of December 2024 (generate_split_points)";
      }
    }
    const int64_t stages = static_cast<int64_t>(counts.size());
    bool empty_stage = counts.empty();
    for (const int64_t n : counts) empty_stage = empty_stage || n < 1;
    if (empty_stage || stages % pp_ != 0 || (!schedule->multi_stage && stages != pp_)) {
      report(pp_path_, "expected " + std::string(schedule->multi_stage ? "a multiple of " : "") +
                           "pp " + str(pp_) + " stages of at least one of the model's " +
                           str(layers_) + " blocks with schedule " + name + ", found " +
                           str(stages) + " (" + split_comment + ")");
      return;
    }
    if (stages / pp_ > 1) {
      put("workload.pipeline.virtual_stages", str(stages / pp_), schedule_path,
          str(stages) + " stages over pp " + str(pp_) + " (" + split_comment + ")");
    }
    put("workload.pipeline.layers_per_stage", layers_per_stage_text(counts), pp_path_,
        split_comment);
  }

  void read_precision_and_memory() {
    const std::string param_path = "training.mixed_precision_param";
    const std::string param = string_or(param_path, "bfloat16");
    const std::string reduce_path = "training.mixed_precision_reduce";
    const std::string reduce = string_or(reduce_path, "float32");
    for (const auto& [key, path, value] :
         {std::tuple{"workload.dtype", param_path, param},
          std::tuple{"workload.fsdp.reduce_dtype", reduce_path, reduce}}) {
      const char* dtype = value == "bfloat16"  ? "bf16"
                          : value == "float32" ? "fp32"
                          : value == "float16" ? "fp16"
                                               : nullptr;
      if (dtype == nullptr) {
        report(path, "expected bfloat16, float32 or float16, found '" + value + "'");
      } else {
        put(key, dtype, path, absent(path, "'" + value + "'"));
      }
    }
    if (const auto dtype = reader_.take_string("training.dtype"); dtype && *dtype != "float32") {
      approximate(
          "[training] dtype = '" + *dtype +
          "' (parameters and optimizer states without an fp32 copy): modelled as mixed precision "
          "with fp32 master weights and moments");
    }

    const std::string ac_path = "activation_checkpoint.mode";
    const std::string mode = string_or(ac_path, "selective");
    const std::string option_path = "activation_checkpoint.selective_ac_option";
    std::string written = mode;
    if (mode == "selective") {
      const std::string option = string_or(option_path, "2");
      const std::optional<int64_t> every = sim::parse_number<int64_t>(option);
      if (option == "op") {
        written = "selective";
      } else if (every && *every == 1) {
        written = "full";  // every block checkpointed whole
      } else if (every && *every > 1) {
        approximate("[activation_checkpoint] selective_ac_option = '" + option +
                    "' (one block in " + option +
                    " checkpointed whole, the others not): modelled as op-level selective "
                    "checkpointing of every block; --set workload.activation_checkpointing=full "
                    "or none brackets it");
      } else {
        report(option_path, "expected 'op' or a positive block interval, found '" + option + "'");
      }
    } else if (mode != "none" && mode != "full") {
      report(ac_path, "expected none, selective or full, found '" + mode + "'");
      written.clear();
    }
    if (!written.empty()) {
      put("workload.activation_checkpointing", written, ac_path,
          absent(ac_path, "'selective'") +
              (mode == "selective" ? ", " + absent(option_path, "'2'") : ""));
    }

    const std::string compile_path = path_of({"compile.enable", "training.compile"});
    put("workload.torch_compile", bool_or(compile_path, false) ? "true" : "false", compile_path,
        absent(compile_path, "false"));
    const std::string offload_path = "training.enable_cpu_offload";
    if (reader_.has(offload_path)) {
      put("workload.cpu_offload", bool_or(offload_path, false) ? "true" : "false", offload_path);
    }
    const std::string clip_path = "training.max_norm";
    put("workload.grad_clip", reader_.take_number(clip_path).value_or(1.0) > 0 ? "true" : "false",
        clip_path, absent(clip_path, "1.0"));
    const std::string norm_path = "model.norm_type";
    if (const auto norm = reader_.take_string(norm_path)) {
      if (*norm == "fused_rmsnorm") {
        put("workload.norm_kernel", "fused", norm_path, "[model] norm_type = 'fused_rmsnorm'");
      } else {
        put("workload.norm_kernel", "composite", norm_path, "[model] norm_type = '" + *norm + "'");
        if (*norm != "rmsnorm") {
          approximate("[model] norm_type = '" + *norm +
                      "': modelled as the eager RMSNorm of the Llama models");
        }
      }
    }
  }

  void read_float8() {
    bool enabled = false;
    std::string path;
    if (const ConfigNode* converters = reader_.take("model.converters")) {
      path = "model.converters";
      for (const ConfigNode& c : converters->items) enabled = enabled || c.text == "float8";
      enabled = enabled || converters->text == "float8";
    }
    for (const char* p : {"float8.enable_float8_linear", "training.enable_float8_linear"}) {
      if (reader_.has(p)) {
        path = p;
        enabled = bool_or(p, false);
      }
    }
    if (reader_.has("training.fp8_linear")) {
      path = "training.fp8_linear";
      const std::string scaling = string_or(path, "");
      enabled = !scaling.empty();
      if (scaling == "delayed") {
        approximate(
            "[training] fp8_linear = 'delayed': modelled with dynamic "
            "tensorwise scales");
      }
    }
    if (!enabled) {
      if (!path.empty()) put("workload.float8.recipe", "none", path);
      return;
    }
    const std::string recipe_path = "float8.recipe_name";
    const std::string recipe = string_or(recipe_path, "tensorwise");
    const std::string written = recipe.rfind("rowwise", 0) == 0 ? "rowwise" : recipe;
    if (written != "tensorwise" && written != "rowwise") {
      report(recipe_path,
             "expected tensorwise, rowwise or rowwise_with_gw_hp, found '" + recipe + "'");
      return;
    }
    if (recipe == "rowwise_with_gw_hp") {
      approximate(
          "[float8] recipe_name = 'rowwise_with_gw_hp' (the weight "
          "gradient in bf16): modelled as rowwise");
    }
    put("workload.float8.recipe", written, path,
        shown(path) + (reader_.has(recipe_path) ? ", [float8] recipe_name" : " (tensorwise)"));
    for (const char* scaling : {"float8.scaling_type_input", "float8.scaling_type_weight",
                                "float8.scaling_type_grad_output"}) {
      if (string_or(scaling, "dynamic") == "delayed") {
        approximate(shown(scaling) + " = 'delayed': modelled with dynamic scales");
      }
    }
    for (const auto& [key, p] :
         {std::pair{"workload.float8.fsdp_all_gather", "float8.enable_fsdp_float8_all_gather"},
          std::pair{"workload.float8.precompute_scales",
                    "float8.precompute_float8_dynamic_scale_for_fsdp"}}) {
      if (bool_or(p, false)) put(key, "true", p);
    }
  }

  void read_optimizer() {
    const std::string name_path = "optimizer.name";
    const std::string name = string_or(name_path, "AdamW");
    if (name != "AdamW" && name != "Adam") {
      approximate("[optimizer] name = '" + name + "': modelled as AdamW's step");
    }
    reader_.mark_read(name_path);
    const std::string implementation_path = "optimizer.implementation";
    const std::string fused_path = "optimizer.fused";
    if (reader_.has(implementation_path) || (layout_2025_ && !reader_.has(fused_path))) {
      const std::string implementation = string_or(implementation_path, "fused");
      if (implementation != "fused" && implementation != "foreach" &&
          implementation != "for-loop") {
        report(implementation_path,
               "expected fused, foreach or for-loop, found '" + implementation + "'");
        return;
      }
      if (implementation == "for-loop") {
        approximate(
            "[optimizer] implementation = 'for-loop': modelled as "
            "foreach (the same passes over each tensor)");
      }
      put("workload.optimizer.implementation", implementation == "fused" ? "fused" : "foreach",
          implementation_path, absent(implementation_path, "'fused'"));
    } else {
      // Until 2025 torchtitan passed fused=fused, foreach=not fused (April 2024: foreach=True).
      const bool fused = bool_or(fused_path, false);
      put("workload.optimizer.implementation", fused ? "fused" : "foreach", fused_path,
          absent(fused_path, "false, AdamW's foreach implementation"));
    }
  }

  bool layout_2025_ = false;
  bool mesh_ok_ = false;
  JobGpus gpus_;
  std::string pp_path_;
  int64_t layers_ = 0;
  int64_t tp_ = 1;
  int64_t pp_ = 1;
  int64_t cp_ = 1;
  int64_t dp_ = 1;
};

}  // namespace

ImportedScenario import_torchtitan_text(std::string_view toml, const std::string& config_path,
                                        const ImportOptions& options) {
  const ConfigNode root = sim::parse_toml_tree(toml, config_path);
  return TorchtitanImport(root, config_path, options).run();
}

ImportedScenario import_torchtitan(const std::string& config_path, const ImportOptions& options) {
  return import_torchtitan_text(sim::read_file_text(config_path), config_path, options);
}

}  // namespace clustersim::cli
