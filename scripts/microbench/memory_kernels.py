#!/usr/bin/env python3
"""Time the memory-bound kernels of a training step on one GPU for clustersim.

    python3 scripts/microbench/memory_kernels.py                 # Llama-3-8B shapes
    python3 scripts/microbench/memory_kernels.py --tokens 4096 --hidden 8192 --ffn 28672

What clustersim's compute model times by bytes (workloads/model/compute_model.h: a
kernel takes max(flops / peak, bytes / (hbm_bandwidth x mem_efficiency))):
each op here is one PyTorch call that launches one kernel, timed alone, and
its bytes are counted as workloads/model/transformer_kernels.h counts them, every input
read once and every output written once. The row's achieved bandwidth is
bytes / time, and bytes / time / datasheet HBM bandwidth is what
`gpu.mem_efficiency` stands for.

Ops (E = tokens x hidden, R = tokens, Ef = tokens x ffn, L = tokens x vocab,
d = 2 bytes of bf16):
  copy                 dst.copy_(src), bf16, 2dE x 8 (the ceiling)
  to_fp32 / type_as    casts bf16 -> fp32 (6E) and fp32 -> bf16 (6E)
  pow, mul_rstd, ...   the eager RMSNorm of torchtitan's Python code, op by op
  rms_norm             torch.nn.functional.rms_norm (one call, 2dE + dH)
  residual_add         x + y in bf16 (3dE)
  silu, swiglu_mul,    the SwiGLU MLP's pointwise ops on T x ffn (2dEf, 3dEf,
  silu_backward        3dEf)
  log_softmax, ...     cross-entropy over fp32 logits as eager PyTorch runs it
  adamw_foreach,       torch.optim.AdamW.step() over --optimizer-params fp32
  adamw_fused          parameters with fp32 gradients: 28 bytes per parameter
  fsdp_copy_in         FSDP2's all-gather copy-in (torch._foreach_copy_ of the
                       bf16-cast shards into one buffer): 4 bytes per parameter
  fsdp_copy_out        FSDP2's copy-out (torch.split_with_sizes_copy of the
                       bf16 buffer into the parameters): 4 bytes per parameter
  fsdp_chunk_cat       FSDP2's reduce-scatter input (torch._chunk_cat of bf16
                       gradients): 4 bytes per parameter
An op the installed PyTorch lacks is skipped with a message on stderr.

Timing: median of --iters calls between CUDA events after --warmup calls, the
L2 cache overwritten before each call (unless --no-flush-l2).

Output (-o FILE, default scenarios/measurements/<date>_<hardware>/memory_kernels.csv),
written atomically: '#' lines (GPU, driver, versions, host, date, command),
then
    hardware,kernel,class,dtype,elements,bytes,time_us,gbps,source
class is the model's kernel class (elementwise, norm, loss, optimizer, memory);
gbps = bytes / time / 1e9. Exit codes: 0 ok, 1 bad input, 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "memory_kernels.py"
HEADER = ("hardware", "kernel", "class", "dtype", "elements", "bytes", "time_us", "gbps", "source")


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__)
    parser.add_argument("--tokens", type=int, default=8192,
                        help="tokens per step of one GPU (default %(default)s: seq 8192, batch 1)")
    parser.add_argument("--hidden", type=int, default=4096, help="model width (default %(default)s)")
    parser.add_argument("--ffn", type=int, default=14336, help="MLP width (default %(default)s)")
    parser.add_argument("--vocab", type=int, default=128256,
                        help="vocabulary (default %(default)s, Llama 3)")
    parser.add_argument("--optimizer-params", type=int, default=436_000_000,
                        help="parameters the optimizer and FSDP copy rows step over "
                        "(default %(default)s, two Llama-3-8B blocks)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls per op (default 3)")
    parser.add_argument("--iters", type=int, default=15, help="timed calls per op (default 15)")
    parser.add_argument("--no-flush-l2", action="store_true",
                        help="do not overwrite the L2 cache before each timed call")
    parser.add_argument("--only", metavar="NAMES",
                        help="comma-separated kernel names to time (default: all)")
    parser.add_argument("--hardware", help="the hardware column (default: from the GPU name)")
    parser.add_argument("--source", default="torch-eager",
                        help="the source column (default: %(default)s)")
    parser.add_argument("--device", default="cuda",
                        help="torch device (default cuda; 'cpu' only to check the script)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output CSV (default: scenarios/measurements/<date>_<hardware>/"
                        "memory_kernels.csv)")
    args = parser.parse_args(argv)
    for name in ("tokens", "hidden", "ffn", "vocab", "optimizer_params", "iters"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')}: expected a positive integer")
    if args.warmup < 0:
        parser.error("--warmup: expected a non-negative integer")
    for name in ("hardware", "source"):
        value = getattr(args, name)
        if value is not None and ("," in value or not value.strip()):
            parser.error(f"--{name}: expected a non-empty label without commas, found '{value}'")
    return args


def llama_block_shapes(hidden, ffn, kv_ratio=4):
    """Parameter shapes of one Llama block (GQA with heads / kv_heads = kv_ratio)."""
    kv = hidden // kv_ratio
    return [(hidden, hidden), (kv, hidden), (kv, hidden), (hidden, hidden),
            (ffn, hidden), (ffn, hidden), (hidden, ffn), (hidden,), (hidden,)]


def parameter_shapes(total, hidden, ffn):
    """Whole Llama blocks' shapes until `total` parameters are reached (at least one block)."""
    block = llama_block_shapes(hidden, ffn)
    per_block = sum(_numel(s) for s in block)
    blocks = max(1, round(total / per_block))
    return block * blocks


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def kernel_cases(torch, args, device):
    """[(name, class, dtype, elements, bytes, setup)]: setup() allocates the
    operands and returns the call to time (a closure), so that only one op's
    tensors live at a time."""
    T, H, F, V = args.tokens, args.hidden, args.ffn, args.vocab
    bf16, fp32 = torch.bfloat16, torch.float32
    E, R, Ef, L = T * H, T, T * F, T * V
    d = 2
    gen = torch.Generator(device=device)
    gen.manual_seed(0)

    def randn(*shape, dtype=bf16):
        return torch.randn(*shape, device=device, dtype=dtype, generator=gen)

    cases = []

    def case(name, cls, dtype, elements, nbytes):
        def wrap(setup):
            cases.append((name, cls, dtype, elements, nbytes, setup))
            return setup
        return wrap

    @case("copy", "memory", "bf16", 8 * E, 2 * d * 8 * E)
    def _():
        src, dst = randn(8 * E), torch.empty(8 * E, device=device, dtype=bf16)
        return lambda: dst.copy_(src)

    # torchtitan's Python RMSNorm, op by op (transformer_kernels.h's eager list).
    @case("rmsnorm.to_fp32", "norm", "bf16", E, (d + 4) * E)
    def _():
        x = randn(T, H)
        return lambda: x.float()

    @case("rmsnorm.pow", "norm", "fp32", E, 8 * E)
    def _():
        x = randn(T, H, dtype=fp32)
        return lambda: x.pow(2)

    @case("rmsnorm.mean", "norm", "fp32", E, 4 * E + 4 * R)
    def _():
        x = randn(T, H, dtype=fp32)
        return lambda: x.mean(-1, keepdim=True)

    @case("rmsnorm.mul_rstd", "norm", "fp32", E, 8 * E + 4 * R)
    def _():
        x, r = randn(T, H, dtype=fp32), randn(T, 1, dtype=fp32)
        return lambda: x * r

    @case("rmsnorm.type_as", "norm", "fp32", E, (4 + d) * E)
    def _():
        x = randn(T, H, dtype=fp32)
        return lambda: x.to(bf16)

    @case("rmsnorm.mul_weight", "norm", "bf16", E, 2 * d * E + d * H)
    def _():
        x, w = randn(T, H), randn(H)
        return lambda: x * w

    @case("rms_norm", "norm", "bf16", E, 2 * d * E + d * H)
    def _():
        x, w = randn(T, H), randn(H)
        fn = getattr(torch.nn.functional, "rms_norm", None)
        if fn is None:
            raise NotImplementedError("torch.nn.functional.rms_norm (torch >= 2.4)")
        return lambda: fn(x, (H,), w, 1e-5)

    @case("residual_add", "elementwise", "bf16", E, 3 * d * E)
    def _():
        x, y = randn(T, H), randn(T, H)
        return lambda: x + y

    @case("swiglu.silu", "elementwise", "bf16", Ef, 2 * d * Ef)
    def _():
        g = randn(T, F)
        return lambda: torch.nn.functional.silu(g)

    @case("swiglu.mul", "elementwise", "bf16", Ef, 3 * d * Ef)
    def _():
        a, b = randn(T, F), randn(T, F)
        return lambda: a * b

    @case("swiglu.silu.bwd", "elementwise", "bf16", Ef, 3 * d * Ef)
    def _():
        grad, g = randn(T, F), randn(T, F)
        return lambda: torch.ops.aten.silu_backward(grad, g)

    # Cross-entropy on logits.float(), as torchtitan's loss.
    @case("cross_entropy.to_fp32", "loss", "bf16", L, (d + 4) * L)
    def _():
        x = randn(T, V)
        return lambda: x.float()

    @case("cross_entropy.log_softmax", "loss", "fp32", L, 8 * L)
    def _():
        x = randn(T, V, dtype=fp32)
        return lambda: torch.log_softmax(x, dim=-1)

    @case("cross_entropy.log_softmax.bwd", "loss", "fp32", L, 12 * L)
    def _():
        grad, out = randn(T, V, dtype=fp32), randn(T, V, dtype=fp32)
        return lambda: torch.ops.aten._log_softmax_backward_data(grad, out, -1, fp32)

    @case("cross_entropy.nll_loss.bwd_zero", "loss", "fp32", L, 4 * L)
    def _():
        x = torch.empty(T, V, device=device, dtype=fp32)
        return lambda: x.zero_()

    shapes = parameter_shapes(args.optimizer_params, H, F)
    P = sum(_numel(s) for s in shapes)

    def adamw(fused):
        params = [torch.nn.Parameter(randn(*s, dtype=fp32)) for s in shapes]
        for p in params:
            p.grad = randn(*p.shape, dtype=fp32)
        kwargs = {"fused": True} if fused else {"foreach": True}
        optimizer = torch.optim.AdamW(params, lr=1e-4, **kwargs)
        optimizer.step()  # allocate the moments outside the timing
        return optimizer.step

    # 28 bytes per parameter: fp32 gradient read, master, m, v read and written.
    @case("adamw_foreach", "optimizer", "fp32", P, 28 * P)
    def _():
        return adamw(fused=False)

    @case("adamw_fused", "optimizer", "fp32", P, 28 * P)
    def _():
        return adamw(fused=True)

    @case("fsdp_copy_in", "memory", "bf16", P, 4 * P)
    def _():
        shards = [randn(_numel(s)) for s in shapes]
        flat = torch.empty(P, device=device, dtype=bf16)
        views = list(torch.split(flat, [t.numel() for t in shards]))
        return lambda: torch._foreach_copy_(views, shards)

    @case("fsdp_copy_out", "memory", "bf16", P, 4 * P)
    def _():
        flat = randn(P)
        outs = [torch.empty(_numel(s), device=device, dtype=bf16) for s in shapes]
        sizes = [o.numel() for o in outs]
        return lambda: torch.split_with_sizes_copy(flat, sizes, dim=0, out=outs)

    @case("fsdp_chunk_cat", "memory", "bf16", P, 4 * P)
    def _():
        # The gradients in their parameters' shapes, as FSDP2 passes them:
        # flattened to 1-D (as the 2026-12-04 row was measured) they take a
        # path 10x slower than the 3.4 TB/s the profiled step's chunk_cat ran at.
        grads = [randn(*s) for s in shapes]
        out = torch.empty(P, device=device, dtype=bf16).view(1, P)
        return lambda: torch._chunk_cat(grads, 0, 1, out=out)

    return cases


def measure(torch, args, device):
    wanted = None if args.only is None else {n.strip() for n in args.only.split(",") if n.strip()}
    cases = kernel_cases(torch, args, device)
    if wanted is not None:
        unknown = wanted - {c[0] for c in cases}
        if unknown:
            raise common.InputError(
                f"--only: expected names among {','.join(c[0] for c in cases)}, "
                f"found {','.join(sorted(unknown))}")
    cuda = device.type == "cuda"
    flush = common.l2_flusher(torch, device) if cuda and not args.no_flush_l2 else None
    rows = []
    print(f"{'kernel':<34} {'bytes':>14} {'time_us':>11} {'GB/s':>8}")
    for name, cls, dtype, elements, nbytes, setup in cases:
        if wanted is not None and name not in wanted:
            continue
        fn = None
        try:
            fn = setup()
            if cuda:
                times = common.cuda_times_ms(torch, fn, args.warmup, args.iters, flush)
            else:
                times = _cpu_times_ms(fn, args.warmup, args.iters)
        except (NotImplementedError, AttributeError, RuntimeError, TypeError) as e:
            print(f"{PROG}: skipped {name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                  file=sys.stderr)
            continue
        finally:
            fn = None
            if cuda:
                torch.cuda.empty_cache()
        seconds = common.median(times) / 1e3
        gbps = nbytes / seconds / 1e9
        print(f"{name:<34} {nbytes:>14} {seconds * 1e6:>11.1f} {gbps:>8.0f}", flush=True)
        rows.append((name, cls, dtype, elements, nbytes, common.significant(seconds * 1e6),
                     common.significant(gbps)))
    return rows


def _cpu_times_ms(fn, warmup, iters):
    import time
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1e3)
    return times


def main(argv=None):
    args = parse_args(argv)
    torch = common.import_torch(PROG)
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)
    gpu_name = None
    if device.type == "cuda":
        common.require_cuda(torch)
        torch.cuda.set_device(device)
        env = common.environment(torch, device.index or 0)
        gpu_name = torch.cuda.get_device_name(device.index or 0)
    else:
        env = [("device", str(device)), ("torch", torch.__version__),
               ("date", common.utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"))]
    hardware, output = common.hardware_and_output(args, "memory_kernels.csv", gpu_name)
    rows = measure(torch, args, device)
    if not rows:
        raise common.InputError("no kernel could be measured (see the messages above)")
    comments = common.comment_lines(
        "clustersim scripts/microbench/memory_kernels.py: one PyTorch op per row; bytes as "
        "workloads/model/transformer_kernels.h counts them (inputs read once, outputs written once); "
        "gbps = bytes / time / 1e9", env,
        [f"tokens {args.tokens}, hidden {args.hidden}, ffn {args.ffn}, vocab {args.vocab}; "
         f"optimizer and FSDP rows over {_param_note(args)}",
         f"median of {args.iters} calls after {args.warmup} warm-up calls; L2 "
         f"{'not ' if args.no_flush_l2 else ''}flushed before each call",
         f"hardware {hardware}" + ("" if args.hardware else " (from the GPU name)")])
    table = [(hardware, name, cls, dtype, elements, nbytes, time_us, gbps, args.source)
             for name, cls, dtype, elements, nbytes, time_us, gbps in rows]
    common.write_measurements(output, comments, HEADER, table)
    return 0


def _param_note(args):
    shapes = parameter_shapes(args.optimizer_params, args.hidden, args.ffn)
    blocks = len(shapes) // len(llama_block_shapes(args.hidden, args.ffn))
    return f"{sum(_numel(s) for s in shapes)} parameters ({blocks} Llama blocks' tensors)"


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
