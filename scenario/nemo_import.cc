#include "scenario/nemo_import.h"

#include <utility>

#include "config/config_tree.h"
#include "config/file_text.h"
#include "config/omegaconf_interpolation.h"
#include "config/text_fields.h"
#include "config/yaml_tree.h"
#include "scenario/config_import.h"

namespace clustersim::cli {

namespace {

using sim::ConfigNode;

std::string str(int64_t x) { return std::to_string(x); }

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The vocabulary of the tokenizers NeMo's GPT and Llama recipes name, before
// Megatron pads it; 0 for another.
int64_t tokenizer_vocabulary(const std::string& library, const std::string& type) {
  const std::string t = sim::ascii_lower(type);
  if (library == "megatron" && type == "GPT2BPETokenizer") return 50257;
  if (library == "huggingface" && contains(t, "llama-3")) return 128256;
  if (library == "huggingface" && contains(t, "llama-2")) return 32000;
  return 0;
}

class NemoImport : public ConfigImport {
 public:
  NemoImport(const ConfigNode& root, const std::string& config_path, const ImportOptions& options)
      : ConfigImport(root, "nemo", "NeMo", config_path, options, KeyStyle::kDotted) {}

  ImportedScenario run() {
    const std::string run_name = string_or(path_of({"run.name", "name"}), "");
    if (!run_name.empty()) scenario_.description = "NeMo recipe " + run_name;
    if (root_.member("model") == nullptr || root_.member("trainer") == nullptr) {
      sink_.add(sim::SourceLocation{scenario_.config_path, 1, 1}, "",
                "expected a NeMo recipe (megatron_gpt_config.yaml's layout) with `trainer` and "
                "`model` sections, found " +
                    std::string(root_.member("model") == nullptr ? "no `model`" : "no `trainer`"));
      sink_.throw_if_any();
    }
    read_job();
    read_model();
    read_batch_and_parallelism();
    read_execution();
    return finish(gpus_);
  }

 private:
  void read_job() {
    const std::string nodes_path = "trainer.num_nodes";
    const std::string devices_path = "trainer.devices";
    const int64_t nodes = int_or(nodes_path, 1);
    const int64_t devices = int_or(devices_path, 1);
    for (const auto& [path, n] : {std::pair{nodes_path, nodes}, {devices_path, devices}}) {
      if (n < 1 || n > kMostConfigCount) {
        report(path, "expected 1 to " + str(kMostConfigCount) + ", found " + str(n));
      }
    }
    if (nodes < 1 || devices < 1 || nodes > kMostConfigCount || devices > kMostConfigCount) return;
    gpus_ = {nodes * devices,
             "trainer.num_nodes " + str(nodes) + " x trainer.devices " + str(devices),
             where_of(nodes_path), nodes_path};
    if (options_.gpus && *options_.gpus != gpus_.count) {
      report(nodes_path, "expected --gpus to agree with trainer.num_nodes " + str(nodes) +
                             " x trainer.devices " + str(devices) + " = " + str(gpus_.count) +
                             ", found --gpus " + str(*options_.gpus));
    }
    const std::string precision_path = "trainer.precision";
    const std::string precision = text_or(precision_path, "32");
    const char* dtype = contains(precision, "bf16")                    ? "bf16"
                        : precision == "16" || precision == "16-mixed" ? "fp16"
                        : precision == "32" || precision == "32-true"  ? "fp32"
                                                                       : nullptr;
    if (dtype == nullptr) {
      report(precision_path,
             "expected bf16, bf16-mixed, 16, 16-mixed or 32, found '" + precision + "'");
    } else {
      dtype_ = dtype;
      put("workload.dtype", dtype, precision_path,
          absent(precision_path, "32 (PyTorch Lightning's)"));
    }
    const std::string clip_path = "trainer.gradient_clip_val";
    put("workload.grad_clip", number_or(clip_path, 0) > 0 ? "true" : "false", clip_path,
        absent(clip_path, "0 (PyTorch Lightning's: no clipping)"));
  }

  void read_model() {
    const std::string layers_path = "model.num_layers";
    const std::string hidden_path = "model.hidden_size";
    const std::string heads_path = "model.num_attention_heads";
    const std::string ffn_path = "model.ffn_hidden_size";
    put("workload.model", "custom", layers_path, "the recipe's shape");
    for (const auto& [key, path] : {std::pair{"layers", layers_path},
                                    {"hidden", hidden_path},
                                    {"heads", heads_path},
                                    {"ffn_hidden", ffn_path}}) {
      const std::optional<int64_t> n = reader_.take_int(path);
      if (!n && missing(path)) {
        report(path, "expected the model's " + std::string(key) + " (an integer), found none");
      }
      if (n) put("workload.custom_model." + std::string(key), str(*n), path);
      if (n && path == layers_path) layers_ = *n;
      if (n && path == heads_path) heads_ = *n;
      if (n && path == hidden_path) hidden_ = *n;
    }
    const std::string groups_path = "model.num_query_groups";
    const int64_t kv_heads = int_or(groups_path, heads_);
    put("workload.custom_model.kv_heads", str(kv_heads), groups_path,
        absent(groups_path, "null: multi-head attention"));
    // Heads of other than hidden / heads channels (Qwen3's 128 on hidden 2048
    // x 32 heads): the model's explicit head width.
    if (const auto channels = reader_.take_int("model.kv_channels");
        channels && heads_ > 0 && (hidden_ % heads_ != 0 || *channels != hidden_ / heads_)) {
      put("workload.custom_model.head_dim", str(*channels), "model.kv_channels");
    }

    const std::string activation_path = "model.activation";
    const std::string activation = string_or(activation_path, "gelu");
    const bool gated = contains(activation, "glu");
    if (!contains(activation, "swiglu") && !contains(activation, "gelu")) {
      approximate("model.activation '" + activation + "': modelled as " +
                  (gated ? "SwiGLU (three projections)" : "GELU (two projections)"));
    }
    const std::string family = gated ? "swiglu" : "gelu";
    put("workload.custom_model.activation", family, activation_path,
        absent(activation_path, "gelu"));
    const std::string norm = string_or("model.normalization", "layernorm");
    const std::string family_norm = gated ? "rmsnorm" : "layernorm";
    if (norm != family_norm) {
      approximate("model.normalization '" + norm + "': the " + family + " family here has " +
                  family_norm);
    }
    const bool bias = bool_or("model.bias", true);
    if (bias != !gated) {
      approximate("model.bias " + std::string(bias ? "true" : "false") + ": the " + family +
                  " family here has " + (gated ? "no biases" : "biases on every linear layer"));
    }
    const std::string positions = string_or("model.position_embedding_type", "learned_absolute");
    if (positions == "learned_absolute") {
      approximate("model.position_embedding_type 'learned_absolute': its table (" +
                  text_or("model.max_position_embeddings", "max_position_embeddings") +
                  " x hidden parameters) is left out; positions are rotary here");
    } else if (positions != "rope") {
      approximate("model.position_embedding_type '" + positions + "': modelled as rotary");
    }
    const std::string tied_path = "model.share_embeddings_and_output_weights";
    put("workload.custom_model.tied_embeddings", bool_or(tied_path, true) ? "true" : "false",
        tied_path, absent(tied_path, "true"));
  }

  void read_vocabulary() {
    const std::string library = string_or("model.tokenizer.library", "");
    const std::string type_path = "model.tokenizer.type";
    const std::string type = string_or(type_path, "");
    const std::string divisible_path = "model.make_vocab_size_divisible_by";
    const int64_t divisible = int_or(divisible_path, 128);
    bool vocab_set = false;
    for (const std::string& set : options_.sets) {
      vocab_set = vocab_set || set.rfind("workload.custom_model.vocab=", 0) == 0;
    }
    const int64_t vocab = tokenizer_vocabulary(library, type);
    if (vocab_set) return;
    if (divisible < 1 || divisible > kMostConfigCount) {
      report(divisible_path,
             "expected 1 to " + str(kMostConfigCount) + ", found " + str(divisible));
      return;
    }
    if (vocab == 0) {
      report(type_path,
             "expected a tokenizer whose vocabulary the importer knows (megatron "
             "GPT2BPETokenizer, huggingface Llama 2 or Llama 3), found library '" +
                 library + "', type '" + type +
                 "'; give the vocabulary with --set workload.custom_model.vocab=N");
      return;
    }
    // Megatron pads the embedding to a multiple of make_vocab_size_divisible_by x TP.
    const int64_t multiple = divisible * tp_;
    const int64_t padded = (vocab + multiple - 1) / multiple * multiple;
    put("workload.custom_model.vocab", str(padded), type_path,
        "model.tokenizer " + type + ": " + str(vocab) + ", padded to a multiple of " +
            "make_vocab_size_divisible_by " + str(divisible) + " x tp " + str(tp_));
  }

  void read_batch_and_parallelism() {
    const std::string tp_path = "model.tensor_model_parallel_size";
    const std::string pp_path = "model.pipeline_model_parallel_size";
    const std::string vp_path = "model.virtual_pipeline_model_parallel_size";
    const std::string cp_path = "model.context_parallel_size";
    tp_ = int_or(tp_path, 1);
    const int64_t pp = int_or(pp_path, 1);
    const int64_t vp = int_or(vp_path, 1);
    const int64_t cp = int_or(cp_path, 1);
    put("workload.parallelism.tp", str(tp_), tp_path, absent(tp_path, "1"));
    for (const auto& [path, n] :
         {std::pair{tp_path, tp_}, {pp_path, pp}, {vp_path, vp}, {cp_path, cp}}) {
      if (n < 1 || n > kMostConfigCount) {
        report(path, "expected a size from 1 to " + str(kMostConfigCount) + ", found " + str(n));
      }
    }
    if (tp_ < 1 || pp < 1 || vp < 1 || cp < 1 || tp_ > kMostConfigCount || pp > kMostConfigCount ||
        vp > kMostConfigCount || cp > kMostConfigCount) {
      return;
    }
    read_vocabulary();
    if (pp > 1) {
      put("workload.parallelism.pp", str(pp), pp_path);
      put("workload.pipeline.schedule", vp > 1 ? "interleaved_1f1b" : "1f1b", vp_path,
          vp > 1 ? shown(vp_path) : "Megatron-Core's 1F1B (no " + shown(vp_path) + ")");
      if (vp > 1) put("workload.pipeline.virtual_stages", str(vp), vp_path);
      if (layers_ > 0 && layers_ % (pp * vp) != 0) {
        report(pp_path, "expected a divisor of num_layers " + str(layers_) +
                            " / virtual_pipeline_model_parallel_size " + str(vp) +
                            " (Megatron-Core splits the layers evenly), found " + str(pp));
      }
    } else if (vp > 1) {
      report(vp_path, "expected null or 1 with pipeline_model_parallel_size 1, found " + str(vp));
    }
    if (cp > 1) {
      put("workload.parallelism.cp", str(cp), cp_path);
      const std::string comm_path = "model.cp_comm_type";
      const std::string comm = string_or(comm_path, "p2p");
      put("workload.context_parallel.rotate_method",
          comm == "all_gather" ? "allgather" : "alltoall", comm_path,
          absent(comm_path, "p2p: K and V passed around a ring"));
      if (comm != "p2p" && comm != "all_gather") {
        approximate("model.cp_comm_type '" + comm + "': modelled as the ring (p2p)");
      }
      put("workload.context_parallel.kv_heads", "model", cp_path,
          "Megatron-Core moves the model's KV heads (grouped-query attention)");
    }
    const std::string sp_path = "model.sequence_parallel";
    if (!bool_or(sp_path, false) && tp_ > 1) {
      approximate(
          "model.sequence_parallel false: tensor parallelism is modelled with sequence "
          "parallelism");
    }
    const std::string micro_path = "model.micro_batch_size";
    const std::string global_path = "model.global_batch_size";
    for (const auto& [key, path] :
         {std::pair{"workload.local_batch", micro_path}, {"workload.global_batch", global_path}}) {
      if (const auto n = reader_.take_int(path)) {
        put(key, str(*n), path);
      } else if (missing(path)) {
        report(path, "expected a number of sequences (NeMo needs it), found none");
      }
    }
    if (reader_.has("model.rampup_batch_size")) {
      approximate("model.rampup_batch_size: the step is the one of the full global_batch_size");
      reader_.mark_read("model.rampup_batch_size");
    }
    const std::string seq_path =
        path_of({"model.encoder_seq_length", "model.seq_length", "model.data.seq_length"});
    if (const auto seq = reader_.take_int(seq_path)) {
      put("workload.seq_len", str(*seq), seq_path);
      if (int_or("model.data.seq_length", *seq) != *seq) {
        approximate("model.data.seq_length differs from " + shown(seq_path) + ": " +
                    shown(seq_path) + " is the one modelled");
      }
    } else if (missing(seq_path)) {
      report(seq_path, "expected the sequence length, found none");
    }
    pp_ = pp;
  }

  void read_execution() {
    // Megatron-Core's layout of activations.
    put("workload.parallelism.tp_sequence_dim", "0", "model.tensor_model_parallel_size",
        "Megatron-Core's [seq, batch, hidden] activations");
    const std::string te_path = "model.transformer_engine";
    const bool te = bool_or(te_path, false);
    put("workload.torch_compile", te ? "true" : "false", te_path,
        absent(te_path, "false") + (te ? ": its fused kernels as torch.compile's fusion" : ""));
    const std::string overlap_path = "model.ub_tp_comm_overlap";
    if (bool_or(overlap_path, false)) {
      if (tp_ > 1) {
        put("workload.parallelism.async_tp", "true", overlap_path,
            "model.ub_tp_comm_overlap (TP collectives split and overlapped with their GEMMs)");
      } else {
        approximate(
            "model.ub_tp_comm_overlap true with tensor_model_parallel_size 1: no TP "
            "collectives to overlap");
      }
    }
    read_checkpointing();
    const std::string fp8_path = "model.fp8";
    if (bool_or(fp8_path, false)) {
      put("workload.float8.recipe", "delayed", fp8_path,
          "model.fp8: Transformer Engine's delayed scaling, one scale per tensor from the "
          "amax history");
    }
    read_data_parallelism();
    const std::string fp8_params_path = "model.fp8_params";
    if (bool_or(fp8_path, false) && bool_or(fp8_params_path, false)) {
      if (contains(string_or("model.optim.name", ""), "distributed")) {
        put("workload.megatron.fp8_param_gather", "true", fp8_params_path,
            "model.fp8_params: FP8 weights, all-gathered in FP8 by the distributed optimizer");
      } else {
        approximate(
            "model.fp8_params without the distributed optimizer: its weights are "
            "modelled as bf16 cast once a step");
      }
    }
  }

  void read_checkpointing() {
    const std::string granularity_path =
        path_of({"model.activations_checkpoint_granularity", "model.recompute_granularity"});
    const std::string granularity = string_or(granularity_path, "");
    const std::string method = string_or(
        path_of({"model.activations_checkpoint_method", "model.recompute_method"}), "uniform");
    const int64_t num_layers = int_or(
        path_of({"model.activations_checkpoint_num_layers", "model.recompute_num_layers"}), 1);
    std::string written = "none";
    if (granularity == "full") {
      written = "full";
      const int64_t per_stage = pp_ > 0 && layers_ > 0 ? layers_ / pp_ : 0;
      if ((method == "block" && num_layers < per_stage) ||
          (method == "uniform" && num_layers > 1)) {
        approximate("full recomputation with method '" + method + "', num_layers " +
                    str(num_layers) + ": modelled as every block checkpointed alone");
      }
    } else if (granularity == "selective") {
      approximate(
          "selective recomputation (core attention only): modelled as none, which "
          "flash attention's stored statistics make nearly free to skip");
    } else if (!granularity.empty()) {
      report(granularity_path, "expected null, selective or full, found '" + granularity + "'");
    }
    put("workload.activation_checkpointing", written, granularity_path,
        absent(granularity_path, "null"));
  }

  // Megatron's data parallelism: DDP or the distributed optimizer, gradients
  // accumulated over the micro-batches and reduced once; or PyTorch FSDP.
  void read_data_parallelism() {
    const std::string fsdp_path = "model.fsdp";
    const std::string optim_path = "model.optim.name";
    const std::string optimizer = string_or(optim_path, "fused_adam");
    const bool overlap_grad = bool_or("model.optim.overlap_grad_sync", false);
    put("workload.optimizer.implementation", "fused", optim_path,
        "model.optim.name '" + optimizer + "': Apex/TE FusedAdam");
    if (bool_or(fsdp_path, false)) {
      const std::string sharding_path = "model.fsdp_sharding_strategy";
      const std::string sharding = string_or(sharding_path, "full");
      put("workload.parallelism.strategy",
          sharding == "grad"     ? "SHARD_GRAD_OP"
          : sharding == "hybrid" ? "HYBRID_SHARD"
                                 : "FULL_SHARD",
          sharding_path, "model.fsdp, " + absent(sharding_path, "full"));
      if (sharding == "hybrid") {
        put("workload.parallelism.shard_group_size", str(int_or("trainer.devices", 1)),
            "trainer.devices", "NeMo's hybrid FSDP shards within a node (trainer.devices)");
      }
      const std::string reduce_path = "model.fsdp_grad_reduce_dtype";
      const std::string reduce = text_or(reduce_path, "fp32");
      put("workload.fsdp.reduce_dtype", contains(reduce, "32") ? "fp32" : "param", reduce_path,
          absent(reduce_path, "fp32"));
      return;
    }
    const bool distributed = contains(optimizer, "distributed");
    put("workload.parallelism.strategy", distributed ? "DISTRIBUTED_OPTIMIZER" : "NO_SHARD",
        optim_path,
        distributed ? "model.optim.name '" + optimizer +
                          "': the distributed optimizer (states sharded, gradients "
                          "reduce-scattered and parameters all-gathered by bucket)"
                    : "model.optim.name '" + optimizer + "': DDP");
    if (!distributed) {
      put("workload.megatron.ddp", "true", optim_path,
          "model.optim.name '" + optimizer + "': Megatron's DDP");
    }
    const std::string sync_path = "model.optim.grad_sync_dtype";
    const std::string sync = string_or(sync_path, dtype_ == "fp16" ? "fp16" : "fp32");
    put("workload.fsdp.reduce_dtype", contains(sync, "32") ? "fp32" : "param", sync_path,
        absent(sync_path, dtype_ == "fp16" ? "the fp16 gradients"
                                           : "fp32 (Megatron reduces bf16 training's gradients "
                                             "in fp32)"));
    put("workload.megatron.overlap_grad_reduce", overlap_grad ? "true" : "false",
        "model.optim.overlap_grad_sync", absent("model.optim.overlap_grad_sync", "false"));
    const std::string param_sync_path = "model.optim.overlap_param_sync";
    if (distributed) {
      put("workload.megatron.overlap_param_gather",
          bool_or(param_sync_path, false) ? "true" : "false", param_sync_path,
          absent(param_sync_path, "false"));
    }
  }

  JobGpus gpus_;
  std::string dtype_ = "bf16";
  int64_t layers_ = 0;
  int64_t heads_ = 0;
  int64_t hidden_ = 0;
  int64_t tp_ = 1;
  int64_t pp_ = 1;
};

}  // namespace

ImportedScenario import_nemo_text(std::string_view yaml, const std::string& config_path,
                                  const ImportOptions& options) {
  ConfigNode root = sim::parse_yaml_tree(yaml, config_path);
  sim::DiagnosticSink interpolations;
  sim::resolve_interpolations(root, interpolations);
  NemoImport import(root, config_path, options);
  import.add_diagnostics(std::move(interpolations));
  return import.run();
}

ImportedScenario import_nemo(const std::string& config_path, const ImportOptions& options) {
  return import_nemo_text(sim::read_file_text(config_path), config_path, options);
}

}  // namespace clustersim::cli
