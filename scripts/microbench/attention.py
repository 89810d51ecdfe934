#!/usr/bin/env python3
"""Time FlashAttention (PyTorch's SDPA, flash backend) on one GPU for clustersim.

    python3 scripts/microbench/attention.py                      # the reference sweep
    python3 scripts/microbench/attention.py --scenario scenarios/llama3_8b_fsdp_8xh100.yaml

Configurations:
  * default, the sweep of the reference data (scenarios/measurements/compute/
    attention.csv, the FlashAttention benchmark's): --seq 512..16384,
    --head-dim 64,128, --causal both; batch = --tokens (16384) / seq and
    heads = --hidden (2048) / head_dim;
  * --shapes FILE (the CSV of `clustersim kernels SCENARIO --csv`, kind=attention
    rows) or --scenario SCENARIO: the scenario's attention configurations
    (batch, seq, heads, kv_heads, head_dim, causal per rank); --sweep adds the
    reference sweep.
Each configuration is timed for each --passes: fwd (forward under no_grad) and
fwd_bwd (forward, then torch.autograd.grad of q, k and v).

Timing: torch.nn.functional.scaled_dot_product_attention on (batch, heads, seq,
head_dim) tensors in --dtype (bf16 or fp16), only the --backend enabled
(torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION) by default); with fewer KV
heads than query heads K and V are expanded to the query heads beforehand, as
torchtitan's repeat_kv does before SDPA (the expansion is not timed). Median of
--iters calls between CUDA events after --warmup calls, L2 overwritten before
each (unless --no-flush-l2). A configuration the flash backend refuses (head
dim, GPU) is skipped with a message on stderr.

FLOPs (attention matmuls, the FlashAttention papers' convention, as
workloads/model/transformer_kernels.h): forward 4 * batch * heads * seq^2 * head_dim,
halved when causal; fwd_bwd counts 3.5x the forward (backward 2.5x).
tflops = FLOPs / median time / 1e12.

Output (-o FILE, default scenarios/measurements/<date>_<hardware>/attention.csv),
written atomically: '#' lines (GPU, driver, versions, host, date, command),
then the layout calibration/compute_measurements.cc reads
(parse_attention_csv; extra columns after tflops are ignored):
    hardware,kernel,pass,head_dim,causal,seq,tflops,batch,heads,kv_heads,dtype,time_us,
    count_per_step,name,sm_clock_mhz
sm_clock_mhz: the median SM clock during the timed calls (NVML; empty without
pynvml).
kernel: --kernel (default FA2: PyTorch's flash backend is FlashAttention-2;
cuDNN with --backend cudnn, cuDNN's fused attention, which PyTorch 2.11 picks
on Hopper when no backend is forced).
Exit codes: 0 ok, 1 bad input (or nothing could be measured), 2 usage.
"""

import os
import sys
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "attention.py"
HEADER = ("hardware", "kernel", "pass", "head_dim", "causal", "seq", "tflops", "batch", "heads",
          "kv_heads", "dtype", "time_us", "count_per_step", "name", "sm_clock_mhz")
PASSES = ("fwd", "fwd_bwd")
BACKWARD_FACTOR = 2.5  # backward FLOPs / forward FLOPs (five matmuls against two)


def attention_flops(batch, heads, seq, head_dim, causal, pass_):
    """Attention matmul FLOPs of one call (see the top of this file)."""
    forward = 4.0 * batch * heads * seq * seq * head_dim
    if causal:
        forward /= 2
    return forward if pass_ == "fwd" else forward * (1 + BACKWARD_FACTOR)


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__)
    common.add_shape_arguments(parser)
    parser.add_argument("--sweep", action="store_true",
                        help="with --shapes/--scenario: also run the reference sweep")
    parser.add_argument("--seq", default="512..16384",
                        help="sweep: sequence lengths (default %(default)s)")
    parser.add_argument("--head-dim", default="64,128",
                        help="sweep: head dimensions (default %(default)s)")
    parser.add_argument("--causal", choices=("both", "true", "false"), default="both",
                        help="sweep: causal masks (default %(default)s)")
    parser.add_argument("--tokens", type=int, default=16384,
                        help="sweep: batch * seq (default %(default)s)")
    parser.add_argument("--hidden", type=int, default=2048,
                        help="sweep: heads * head_dim (default %(default)s)")
    parser.add_argument("--passes", default="fwd,fwd_bwd",
                        help="passes to time: fwd, fwd_bwd or both (default %(default)s)")
    parser.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16",
                        help="dtype (default %(default)s)")
    parser.add_argument("--backend", choices=("flash", "cudnn", "default"), default="flash",
                        help="the only SDPA backend enabled: flash (FlashAttention-2), cudnn, or "
                        "default (PyTorch's choice) (default %(default)s)")
    parser.add_argument("--kernel", default=None,
                        help="the kernel column (default: FA2 for --backend flash, cuDNN for "
                        "cudnn, SDPA for default)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls (default 5)")
    parser.add_argument("--iters", type=int, default=20, help="timed calls (default 20)")
    parser.add_argument("--no-flush-l2", action="store_true",
                        help="do not overwrite the L2 cache before each timed call")
    parser.add_argument("--hardware", help="the hardware column (default: from the GPU name)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output CSV (default: scenarios/measurements/<date>_<hardware>/"
                        "attention.csv)")
    args = parser.parse_args(argv)
    if args.kernel is None:
        args.kernel = {"flash": "FA2", "cudnn": "cuDNN", "default": "SDPA"}[args.backend]
    if args.shapes and args.scenario:
        parser.error("give --shapes or --scenario, not both")
    if args.set and not args.scenario:
        parser.error("--set applies to --scenario only")
    if args.warmup < 0 or args.iters < 1:
        parser.error("expected --warmup >= 0 and --iters >= 1")
    if args.tokens <= 0 or args.hidden <= 0:
        parser.error("expected positive --tokens and --hidden")
    passes = [p.strip() for p in args.passes.split(",") if p.strip()]
    if not passes or any(p not in PASSES for p in passes):
        parser.error(f"--passes: expected fwd, fwd_bwd or fwd,fwd_bwd, found '{args.passes}'")
    args.passes = tuple(p for p in PASSES if p in passes)
    for name in ("hardware", "kernel"):
        value = getattr(args, name)
        if value is not None and ("," in value or not value.strip()):
            parser.error(f"--{name}: expected a non-empty label without commas, found '{value}'")
    return args


Config = namedtuple("Config", "batch seq heads kv_heads head_dim causal count name")


def sweep_configs(args):
    """The reference sweep: batch = tokens / seq, heads = hidden / head_dim."""
    seqs = common.parse_int_list(args.seq, "--seq")
    head_dims = common.parse_int_list(args.head_dim, "--head-dim")
    causals = {"both": (False, True), "true": (True,), "false": (False,)}[args.causal]
    configs = []
    for head_dim in head_dims:
        if args.hidden % head_dim:
            raise common.InputError(
                f"--head-dim {head_dim}: expected a divisor of --hidden {args.hidden}")
        for causal in causals:
            for seq in seqs:
                if args.tokens % seq:
                    raise common.InputError(
                        f"--seq {seq}: expected a divisor of --tokens {args.tokens}")
                configs.append(Config(args.tokens // seq, seq, args.hidden // head_dim,
                                      args.hidden // head_dim, head_dim, causal, None,
                                      f"sweep_{seq}"))
    return configs


def plan(args):
    configs = []
    description = []
    if args.shapes or args.scenario:
        _, attention, what = common.shapes_from_args(args)
        if not attention:
            raise common.InputError(f"{what}: expected attention rows (kind=attention), found none")
        description.append(what)
        for a in attention:
            if a.heads % a.kv_heads:
                raise common.InputError(
                    f"{a.name}: expected kv_heads ({a.kv_heads}) dividing heads ({a.heads})")
            configs.append(Config(a.batch, a.seq, a.heads, a.kv_heads, a.head_dim, a.causal,
                                  a.count, a.name))
    if args.sweep or not configs:
        configs += sweep_configs(args)
        description.append(f"sweep seq {args.seq}, head_dim {args.head_dim}, causal {args.causal}, "
                           f"batch = {args.tokens}/seq, heads = {args.hidden}/head_dim")
    return configs, "; ".join(description)


def backend_only(torch, backend):
    """A context manager enabling only one SDPA backend: 'flash' (PyTorch's
    FlashAttention-2), 'cudnn' (cuDNN's fused attention, which PyTorch 2.11
    picks by default on Hopper) or 'default' (PyTorch's own choice)."""
    import contextlib
    if backend == "default":
        return contextlib.nullcontext()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        return sdpa_kernel({"flash": SDPBackend.FLASH_ATTENTION,
                            "cudnn": SDPBackend.CUDNN_ATTENTION}[backend])
    except ImportError:  # torch < 2.3: no cuDNN backend
        if backend != "flash":
            raise common.InputError(f"--backend {backend} needs torch >= 2.3, found "
                                    f"{torch.__version__}") from None
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False,
                                              enable_mem_efficient=False)


def time_config(torch, args, config, pass_, dtype, device, flush):
    F = torch.nn.functional
    shape = (config.batch, config.heads, config.seq, config.head_dim)
    grad = pass_ == "fwd_bwd"
    q = torch.randn(shape, device=device, dtype=dtype, requires_grad=grad)
    # K and V already at the query heads (torchtitan's repeat_kv runs before SDPA).
    k = torch.randn(shape, device=device, dtype=dtype, requires_grad=grad)
    v = torch.randn(shape, device=device, dtype=dtype, requires_grad=grad)
    causal = config.causal
    if grad:
        dout = torch.randn(shape, device=device, dtype=dtype)

        def call():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            torch.autograd.grad(out, (q, k, v), dout)
    else:
        def call():
            with torch.no_grad():
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    with backend_only(torch, args.backend):
        return common.cuda_times_ms(torch, call, args.warmup, args.iters, flush)


def main(argv=None):
    args = parse_args(argv)
    configs, description = plan(args)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    env = common.environment(torch, args.device)
    hardware, output = common.hardware_and_output(args, "attention.csv",
                                                  torch.cuda.get_device_name(args.device))
    dtype = common.torch_dtype(torch, args.dtype)
    flush = None if args.no_flush_l2 else common.l2_flusher(torch, device)
    clock = common.ClockSampler(args.device)
    rows = []
    print(f"{'pass':>7} {'batch':>6} {'seq':>6} {'heads':>5} {'kv':>3} {'hdim':>4} {'causal':>6} "
          f"{'time_us':>11} {'TFLOP/s':>8}  name")
    for c in configs:
        for pass_ in args.passes:
            try:
                with clock:
                    times = time_config(torch, args, c, pass_, dtype, device, flush)
            except torch.cuda.OutOfMemoryError:
                print(f"{PROG}: skipped {c.name} {pass_}: out of GPU memory", file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            except RuntimeError as e:  # "No available kernel": flash refuses this configuration
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                print(f"{PROG}: skipped {c.name} {pass_} (head_dim {c.head_dim}): the "
                      f"{args.backend} backend refused it: {first}", file=sys.stderr)
                continue
            seconds = common.median(times) / 1e3
            flops = attention_flops(c.batch, c.heads, c.seq, c.head_dim, c.causal, pass_)
            tflops = flops / seconds / 1e12
            causal = "true" if c.causal else "false"
            print(f"{pass_:>7} {c.batch:>6} {c.seq:>6} {c.heads:>5} {c.kv_heads:>3} "
                  f"{c.head_dim:>4} {causal:>6} {seconds * 1e6:>11.2f} {tflops:>8.1f}  {c.name}",
                  flush=True)
            rows.append((hardware, args.kernel, pass_, c.head_dim, causal, c.seq,
                         common.significant(tflops), c.batch, c.heads, c.kv_heads, args.dtype,
                         common.significant(seconds * 1e6),
                         "" if c.count is None else c.count, c.name,
                         "" if clock.median() is None else f"{clock.median():.0f}"))
    if not rows:
        raise common.InputError("no configuration could be measured (see the messages above)")
    comments = common.comment_lines(
        f"clustersim scripts/microbench/attention.py: SDPA {args.backend} backend; tflops counts "
        "attention "
        "matmul FLOPs (causal counts half; fwd_bwd = 3.5x fwd)", env,
        [f"{description}; dtype {args.dtype}; median of {args.iters} calls after {args.warmup} "
         f"warm-up calls; L2 {'not ' if args.no_flush_l2 else ''}flushed before each call",
         f"hardware {hardware}" + ("" if args.hardware else " (from the GPU name)")])
    common.write_measurements(output, comments, HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
