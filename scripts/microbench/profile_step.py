#!/usr/bin/env python3
"""Profile a few FSDP training steps of a small Llama-style model (Kineto trace).

    # one node, 8 GPUs:
    torchrun --standalone --nproc-per-node 8 scripts/microbench/profile_step.py
    # 2 nodes (run on each; HOST is node 0):
    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        scripts/microbench/profile_step.py --layers 8 --hidden 4096 --heads 32 --kv-heads 8

Model: a decoder like Llama 3 written out here (no other package): token
embedding, --layers blocks of RMSNorm, attention (q/k/v/o projections without
bias, --heads query and --kv-heads key/value heads, rotary positions, K/V
repeated to the query heads, SDPA causal), RMSNorm, SwiGLU MLP (--ffn, default
Llama's rounding of 8/3 hidden up to a multiple of 256), final RMSNorm and
output head; cross-entropy on fp32 logits; AdamW. Random tokens (--vocab,
--seq, --batch sequences per GPU).

Parallelism: --fsdp 2 (default): FSDP2, fully_shard on every block then on
the root, MixedPrecisionPolicy(param_dtype=--dtype, reduce_dtype=
--reduce-dtype), the default reshard after forward; --fsdp 1:
FullyShardedDataParallel (FULL_SHARD, one unit per block, the same
MixedPrecision, BACKWARD_PRE). Gradients are reduced in the compute dtype by
default, as clustersim models them (torchtitan reduces in fp32:
--reduce-dtype fp32). --checkpointing full wraps every block in non-reentrant
activation checkpointing, --checkpointing selective with torchtitan's op-level
policy (attention and every other matmul saved); --compile compiles every block (torch.compile)
before sharding, as torchtitan does.

Profiling: torch.profiler with CPU and CUDA activities and
schedule(wait=--wait, warmup=--warmup, active=--active), so the trace holds
--active ProfilerStep#N markers (N counts from 0 at the first step); the
Chrome-trace JSON (prof.export_chrome_trace) is what `clustersim calibrate` and
calibration/kineto_trace.h read: complete kernel events, gpu_memcpy/memset and
the ProfilerStep#N user annotations. Every rank is profiled (so that all ranks
pay the same overhead); --trace-ranks says which ranks write their trace
(default 0; 'all' or a list such as 0,8).

Output: -o DIR (default scenarios/measurements/<date>_<hardware>/profile/):
trace_rank<R>.json per writing rank (written to a temporary name, then
renamed); from rank 0 profile_step.txt: '#' lines with the GPU, driver,
versions, host, date, command, the model and rank 0's peak memory (allocated
and reserved), then the measured wall time of every step; and workload.yaml:
the `workload` section of a clustersim scenario describing this run (custom
model), to complete with name, hardware and cluster for `clustersim
validate`. Exit codes: 0 ok, 1 bad input, 2 usage.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "profile_step.py"


def llama_ffn(hidden, multiple_of=256):
    """Llama's MLP width: 2/3 of 4 * hidden, rounded up to `multiple_of`."""
    ffn = int(2 * 4 * hidden / 3)
    return multiple_of * ((ffn + multiple_of - 1) // multiple_of)


def parse_rank_list(text, world):
    """'all', '0', '0,8,9' -> sorted ranks below `world`."""
    if text == "all":
        return list(range(world))
    try:
        ranks = sorted({int(r) for r in text.split(",") if r.strip()})
    except ValueError:
        ranks = []
    if not ranks or ranks[0] < 0 or ranks[-1] >= world:
        raise common.InputError(
            f"--trace-ranks: expected 'all' or ranks below the world size {world} such as 0,8, "
            f"found '{text}'")
    return ranks


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__, needs="PyTorch with CUDA and NCCL")
    model = parser.add_argument_group("model")
    model.add_argument("--layers", type=int, default=4, help="blocks (default %(default)s)")
    model.add_argument("--hidden", type=int, default=2048, help="model width (default %(default)s)")
    model.add_argument("--heads", type=int, default=16, help="query heads (default %(default)s)")
    model.add_argument("--kv-heads", type=int,
                       help="key/value heads (default: 8 when it divides --heads, else --heads)")
    model.add_argument("--ffn", type=int, help="MLP width (default: Llama's for --hidden)")
    model.add_argument("--vocab", type=int, default=32000, help="vocabulary (default %(default)s)")
    model.add_argument("--seq", type=int, default=2048, help="sequence length (default %(default)s)")
    model.add_argument("--batch", type=int, default=2,
                       help="sequences per GPU per step (default %(default)s)")
    training = parser.add_argument_group("training")
    training.add_argument("--fsdp", type=int, choices=(1, 2), default=2,
                          help="FSDP2 fully_shard or FSDP1 FullyShardedDataParallel (default 2)")
    training.add_argument("--checkpointing", choices=("none", "full", "selective"),
                          default="none",
                          help="activation checkpointing of every block: full, or selective as "
                          "torchtitan's op-level policy (default %(default)s)")
    training.add_argument("--compile", action="store_true", help="torch.compile every block")
    training.add_argument("--optimizer", choices=("foreach", "fused"), default="foreach",
                          help="torch.optim.AdamW's implementation: foreach (PyTorch's default "
                          "on CUDA) or fused=True (default %(default)s)")
    training.add_argument("--norm", choices=("module", "python"), default="module",
                          help="RMSNorm as torch.nn.RMSNorm (default) or as torchtitan's Python "
                          "code of its published runs (x.float(), pow, mean, rsqrt, type_as, "
                          "weight: one kernel per op in eager mode)")
    training.add_argument("--rotary", choices=("real", "complex"), default="real",
                          help="rotary positions by real pairs (default) or through complex "
                          "numbers as torchtitan's apply_rotary_emb")
    training.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16",
                          help="compute dtype (default %(default)s; parameters fp32)")
    training.add_argument("--reduce-dtype", choices=("bf16", "fp16", "fp32"),
                          help="gradient reduction dtype (default: --dtype)")
    profiling = parser.add_argument_group("profiling")
    profiling.add_argument("--wait", type=int, default=1,
                           help="steps before the profiler starts (default %(default)s)")
    profiling.add_argument("--warmup", type=int, default=2,
                           help="profiler warm-up steps, not in the trace (default %(default)s)")
    profiling.add_argument("--active", "--steps", dest="active", type=int, default=3,
                           help="profiled steps, each a ProfilerStep#N (default %(default)s)")
    profiling.add_argument("--trace-ranks", default="0",
                           help="ranks that write a trace: 'all' or a list (default 0)")
    parser.add_argument("--hardware", help="the hardware part of the default output folder "
                        "(default: from the GPU name)")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="output folder (default: scenarios/measurements/<date>_<hardware>/"
                        "profile)")
    args = parser.parse_args(argv)
    if args.kv_heads is None:
        args.kv_heads = 8 if args.heads % 8 == 0 else args.heads
    args.reduce_dtype = args.reduce_dtype or args.dtype
    args.ffn = args.ffn or llama_ffn(args.hidden)
    for name in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "seq", "batch",
                 "active"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')}: expected a positive integer")
    if args.wait < 0 or args.warmup < 0:
        parser.error("expected --wait >= 0 and --warmup >= 0")
    if args.hidden % args.heads or args.heads % args.kv_heads:
        parser.error("expected --heads dividing --hidden and --kv-heads dividing --heads")
    if (args.hidden // args.heads) % 2:
        parser.error("expected an even head dimension (--hidden / --heads) for rotary positions")
    if args.hardware is not None and ("/" in args.hardware or not args.hardware.strip()):
        parser.error(f"--hardware: expected a label without slashes, found '{args.hardware}'")
    return args


def op_selective_context(torch):
    """torchtitan's op-level selective activation checkpointing
    (torchtitan/models/llama3/parallelize_llama.py, _apply_ac_to_transformer_block,
    "op"): the outputs of attention and of every odd-numbered matmul (the 1st,
    3rd, ...) of a block are saved, everything else is recomputed in backward.
    cuDNN's attention op joins the flash and efficient ones: PyTorch 2.11 runs
    it on Hopper. A context_fn for torch.utils.checkpoint.checkpoint."""
    from collections import defaultdict

    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    aten = torch.ops.aten
    save = {aten.mm.default, aten.max.default}
    for name in ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                 "_scaled_dot_product_cudnn_attention"):
        op = getattr(aten, name, None)
        if op is not None:
            save.add(op.default)

    def context_fn():
        meta = defaultdict(int)

        def policy(ctx, func, *args, **kwargs):
            mode = "recompute" if ctx.is_recompute else "forward"
            if func == aten.mm.default:
                meta[mode] += 1
            keep = func in save and not (func == aten.mm.default and meta[mode] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy)

    return context_fn


def build_model(torch, args):
    """The Llama-style model of the top of this file (classes made here so that
    the module imports without torch)."""
    from torch.utils.checkpoint import checkpoint

    nn = torch.nn
    F = torch.nn.functional
    head_dim = args.hidden // args.heads
    selective_context = op_selective_context(torch) if args.checkpointing == "selective" else None

    def rms_norm(dim):
        if args.norm == "module" and hasattr(nn, "RMSNorm"):  # torch >= 2.4
            return nn.RMSNorm(dim, eps=1e-5)
        return _RMSNorm(dim)

    class _RMSNorm(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            x32 = x.float()
            normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)
            return normed.type_as(x) * self.weight

    def rotate(x, cos, sin):
        if sin is None:  # torchtitan's apply_rotary_emb; `cos` holds freqs_cis
            x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(x_ * cos).flatten(3).type_as(x)
        # x: (batch, seq, heads, head_dim); pairs (2i, 2i+1) rotate by angle i.
        x32 = x.float()
        even, odd = x32[..., 0::2], x32[..., 1::2]
        rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
        return rotated.flatten(-2).type_as(x)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(args.hidden, args.heads * head_dim, bias=False)
            self.wk = nn.Linear(args.hidden, args.kv_heads * head_dim, bias=False)
            self.wv = nn.Linear(args.hidden, args.kv_heads * head_dim, bias=False)
            self.wo = nn.Linear(args.heads * head_dim, args.hidden, bias=False)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            q = rotate(self.wq(x).view(b, s, args.heads, head_dim), cos, sin)
            k = rotate(self.wk(x).view(b, s, args.kv_heads, head_dim), cos, sin)
            v = self.wv(x).view(b, s, args.kv_heads, head_dim)
            repeats = args.heads // args.kv_heads
            if repeats > 1:  # repeat_kv, as torchtitan
                k = k.repeat_interleave(repeats, dim=2)
                v = v.repeat_interleave(repeats, dim=2)
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            return self.wo(out.transpose(1, 2).reshape(b, s, -1))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(args.hidden, args.ffn, bias=False)
            self.w2 = nn.Linear(args.ffn, args.hidden, bias=False)
            self.w3 = nn.Linear(args.hidden, args.ffn, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm = rms_norm(args.hidden)
            self.attention = Attention()
            self.ffn_norm = rms_norm(args.hidden)
            self.feed_forward = FeedForward()

        def forward(self, x, cos, sin):
            h = x + self.attention(self.attention_norm(x), cos, sin)
            return h + self.feed_forward(self.ffn_norm(h))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(args.vocab, args.hidden)
            self.layers = nn.ModuleList(Block() for _ in range(args.layers))
            self.norm = rms_norm(args.hidden)
            self.output = nn.Linear(args.hidden, args.vocab, bias=False)
            inv = 1.0 / (500000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
            angles = torch.outer(torch.arange(args.seq).float(), inv)  # (seq, head_dim / 2)
            # (1, seq, 1, head_dim / 2), fp32; not parameters, so FSDP leaves them whole.
            self.register_buffer("cos", angles.cos()[None, :, None, :], persistent=False)
            self.register_buffer("sin", angles.sin()[None, :, None, :], persistent=False)
            if args.rotary == "complex":
                self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles)
                                     [None, :, None, :], persistent=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            if args.rotary == "complex":
                cos, sin = self.freqs_cis, None
            else:
                cos, sin = self.cos.float(), self.sin.float()
            for layer in self.layers:
                if args.checkpointing == "full":
                    h = checkpoint(layer, h, cos, sin, use_reentrant=False)
                elif args.checkpointing == "selective":
                    h = checkpoint(layer, h, cos, sin, use_reentrant=False,
                                   context_fn=selective_context, preserve_rng_state=False)
                else:
                    h = layer(h, cos, sin)
            return self.output(self.norm(h))

    return Transformer()


def workload_yaml(args, world):
    """The `workload` section of a clustersim scenario for this run."""
    return "\n".join([
        f"# The run of scripts/microbench/profile_step.py ({world} ranks, FSDP{args.fsdp}); add",
        "# name, hardware and cluster (nodes = ranks / GPUs per node) for a whole scenario.",
        "workload:",
        "  model: custom",
        "  custom_model:",
        f"    layers: {args.layers}",
        f"    hidden: {args.hidden}",
        f"    heads: {args.heads}",
        f"    kv_heads: {args.kv_heads}",
        f"    ffn_hidden: {args.ffn}",
        f"    vocab: {args.vocab}",
        "    activation: swiglu",
        f"  seq_len: {args.seq}",
        f"  local_batch: {args.batch}",
        f"  dtype: {args.dtype}",
        f"  activation_checkpointing: {args.checkpointing}",
        f"  torch_compile: {'true' if args.compile else 'false'}",
        "  grad_clip: false",
        "  optimizer:",
        f"    implementation: {args.optimizer}",
        "  parallelism:",
        "    strategy: FULL_SHARD",
        "  fsdp:",
        # FSDP1 reduces on its own post-backward stream; FSDP2 on its one communicator.
        f"    separate_reduce_stream: {'true' if args.fsdp == 1 else 'false'}",
    ]) + "\n"


def shard(torch, args, model, local_rank):
    """FSDP2 or FSDP1 over the whole world, one unit per block plus the root."""
    compute = common.torch_dtype(torch, args.dtype)
    reduce = common.torch_dtype(torch, args.reduce_dtype)
    if args.compile:
        for i, block in enumerate(model.layers):
            model.layers[i] = torch.compile(block)
    if args.fsdp == 2:
        try:
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        except ImportError:  # torch 2.4 / 2.5
            try:
                from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
            except ImportError:
                raise common.InputError(
                    f"--fsdp 2 needs torch >= 2.4 (fully_shard), found torch {torch.__version__}; "
                    "use --fsdp 1") from None
        policy = MixedPrecisionPolicy(param_dtype=compute, reduce_dtype=reduce)
        for block in model.layers:
            fully_shard(block, mp_policy=policy)
        fully_shard(model, mp_policy=policy)
        return model
    from torch.distributed.fsdp import (BackwardPrefetch, FullyShardedDataParallel,
                                        MixedPrecision, ShardingStrategy)
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy

    block_type = type(model.layers[0])
    return FullyShardedDataParallel(
        model,
        auto_wrap_policy=ModuleWrapPolicy({block_type}),
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        mixed_precision=MixedPrecision(param_dtype=compute, reduce_dtype=reduce,
                                       buffer_dtype=torch.float32),
        backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
        device_id=local_rank,
        use_orig_params=True,
    )


def main(argv=None):
    args = parse_args(argv)
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK")
    if any(n not in os.environ for n in names):
        raise common.InputError(
            "expected to be launched by torchrun (RANK, WORLD_SIZE, LOCAL_RANK unset), e.g. "
            "torchrun --standalone --nproc-per-node 8 scripts/microbench/profile_step.py")
    rank, world, local_rank = (int(os.environ[n]) for n in names)
    writers = parse_rank_list(args.trace_ranks, world)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    import torch.distributed as dist
    from torch.profiler import ProfilerActivity, profile, schedule

    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    hardware = args.hardware or common.hardware_from_gpu_name(torch.cuda.get_device_name(local_rank))
    folder = args.output or common.default_output_path(hardware, "profile")
    trace_path = os.path.join(folder, f"trace_rank{rank}.json")
    if rank in writers:  # fail before training (torchrun then stops every rank)
        common.check_writable(trace_path)
    with common.nccl_process_group(dist, local_rank):
        torch.manual_seed(0)
        with torch.device(device):
            model = build_model(torch, args)
        params = sum(p.numel() for p in model.parameters())
        model = shard(torch, args, model, local_rank)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4,
                                      **({"fused": True} if args.optimizer == "fused"
                                         else {"foreach": True}))
        generator = torch.Generator(device=device)
        generator.manual_seed(1000 + rank)

        def train_step():
            tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device,
                                   generator=generator)
            logits = model(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.float().reshape(-1, args.vocab), tokens[:, 1:].reshape(-1))
            # torchtitan's train step frees the logits before the backward
            # (train.py: del pred), as workloads/model/memory_model.h assumes; the runs
            # of 2026-12-04 kept them (2 GiB more at the peak at seq 8192).
            del logits
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss

        def on_trace_ready(prof):
            if rank not in writers:
                return
            temporary = trace_path + f".{os.getpid()}.tmp"
            prof.export_chrome_trace(temporary)
            os.replace(temporary, trace_path)
            print(f"rank {rank}: wrote {trace_path}", file=sys.stderr, flush=True)

        steps = args.wait + args.warmup + args.active
        seconds = []
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=args.wait, warmup=args.warmup, active=args.active,
                                       repeat=1),
                     on_trace_ready=on_trace_ready) as prof:
            for step in range(steps):
                torch.cuda.synchronize()
                started = time.perf_counter()
                loss = train_step()
                value = loss.item()  # waits for the step, as a logging training loop does
                seconds.append(time.perf_counter() - started)
                if rank == 0:
                    phase = ("wait" if step < args.wait else
                             "warmup" if step < args.wait + args.warmup else "active")
                    tokens_per_s = args.batch * args.seq / seconds[-1]
                    print(f"step {step} ({phase}): {seconds[-1] * 1e3:.1f} ms, loss {value:.3f}, "
                          f"{tokens_per_s:.0f} tokens/s per GPU", file=sys.stderr, flush=True)
                prof.step()
        # Peak over every step (the caching allocator's view: what the memory
        # model's peak is compared with, reserved including fragmentation).
        peak_allocated = torch.cuda.max_memory_allocated(device)
        peak_reserved = torch.cuda.max_memory_reserved(device)
        if rank == 0:
            print(f"peak memory: allocated {peak_allocated / 2**30:.2f} GiB, reserved "
                  f"{peak_reserved / 2**30:.2f} GiB", file=sys.stderr, flush=True)
            env = common.environment(torch, local_rank)
            lines = common.comment_lines(
                "clustersim scripts/microbench/profile_step.py: Kineto traces trace_rank<R>.json",
                env,
                [f"model: layers {args.layers}, hidden {args.hidden}, heads {args.heads}, "
                 f"kv_heads {args.kv_heads}, ffn {args.ffn}, vocab {args.vocab}, seq {args.seq}, "
                 f"batch {args.batch} per GPU, about {params / 1e6:.0f}M parameters",
                 f"training: FSDP{args.fsdp} over {world} ranks, {args.dtype} compute, "
                 f"{args.reduce_dtype} gradient reduction, "
                 f"checkpointing {args.checkpointing}, "
                 f"{'torch.compile' if args.compile else 'eager'}, AdamW {args.optimizer}, "
                 f"RMSNorm {'torch.nn.RMSNorm' if args.norm == 'module' else 'in Python'}, "
                 f"rotary {'by real pairs' if args.rotary == 'real' else 'complex'}",
                 f"profiler: wait {args.wait}, warmup {args.warmup}, active {args.active} "
                 f"(ProfilerStep#{args.wait + args.warmup}..#{steps - 1}); traces of ranks "
                 f"{args.trace_ranks}",
                 f"peak memory of rank 0 over every step: allocated {peak_allocated} bytes "
                 f"({peak_allocated / 2**30:.2f} GiB), reserved {peak_reserved} bytes "
                 f"({peak_reserved / 2**30:.2f} GiB) (torch.cuda.max_memory_allocated / "
                 f"max_memory_reserved)"])
            lines.append("step,phase,wall_ms")
            for step, s in enumerate(seconds):
                phase = ("wait" if step < args.wait else
                         "warmup" if step < args.wait + args.warmup else "active")
                lines.append(f"{step},{phase},{s * 1e3:.3f}")
            common.write_text_atomically(os.path.join(folder, "profile_step.txt"),
                                         "\n".join(lines) + "\n")
            common.write_text_atomically(os.path.join(folder, "workload.yaml"),
                                         workload_yaml(args, world))
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
