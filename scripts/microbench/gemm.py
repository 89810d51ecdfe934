#!/usr/bin/env python3
"""Time dense matrix multiplies (torch.matmul) on one GPU for clustersim.

    python3 scripts/microbench/gemm.py --scenario scenarios/llama3_8b_fsdp_8xh100.yaml
    python3 scripts/microbench/gemm.py --shapes kernels.csv --square 1024..16384 -o gemm.csv

Shapes: the GEMMs of a scenario's step, from the CSV of `clustersim kernels
SCENARIO --csv` (--shapes FILE, kind=gemm rows) or by running that command
(--scenario SCENARIO, with --clustersim PATH and --set KEY=VALUE), and/or a
square sweep m = n = k (--square 1024..16384: the powers of two in between;
or a list, --square 1024,3000). Each distinct (m, n, k) is timed once.

Timing: C[m x n] = A[m x k] @ B[k x n] with row-major random (randn) operands
in --dtype (default: the shapes file's dtype, else bf16; fp32 disables TF32),
torch.matmul(A, B, out=C) after --warmup calls, then --iters calls each
between two CUDA events, the L2 cache overwritten before each call (unless
--no-flush-l2); the median time counts. tflops = 2*m*n*k / time / 1e12.
--dtype fp8 times torch._scaled_mm on e4m3 operands (--fp8-scaling), mxfp8
and nvfp4 its block-scaled forms (Blackwell only: on another GPU each shape is
skipped with torch's message), for a profile's fp8_, mxfp8_ and
nvfp4_gemm_efficiency (scenarios/hardware/b200.yaml says how they are fitted).

Output (-o FILE, default scenarios/measurements/<date>_<hardware>/gemm.csv),
written atomically: '#' lines recording the GPU, driver, torch/CUDA/NCCL/cuDNN
versions, host, date and command, then the layout
calibration/compute_measurements.cc reads (parse_gemm_csv; it ignores the
extra columns after `source`):
    hardware,dtype,m,n,k,tflops,source,time_us,count_per_step,name,sm_clock_mhz
sm_clock_mhz: the median SM clock during the timed calls (NVML, every 5 ms;
empty without pynvml): a power-limited GPU runs GEMMs back to back well
below its boost clock, and the rate is only comparable at a known clock.
`hardware` comes from the GPU name (common.hardware_from_gpu_name, e.g.
"NVIDIA H100 80GB HBM3" -> H100-SXM) unless --hardware is given.
A shape that does not fit in GPU memory is skipped with a message on stderr.
Exit codes: 0 ok, 1 bad input (or nothing could be measured), 2 usage.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "gemm.py"
# Operand bytes per element of the torch._scaled_mm formats.
LOW_PRECISION = {"fp8": 1.0, "mxfp8": 1.0, "nvfp4": 0.5}
HEADER = ("hardware", "dtype", "m", "n", "k", "tflops", "source", "time_us", "count_per_step",
          "name", "sm_clock_mhz")


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__)
    common.add_shape_arguments(parser)
    parser.add_argument("--square", metavar="RANGE",
                        help="square sizes m=n=k: 'A..B' (powers of two) or 'A,B,...'")
    parser.add_argument("--dtype", choices=sorted(common.TORCH_DTYPES) + sorted(LOW_PRECISION),
                        help="operand dtype (default: the shapes' dtype, else bf16); fp8 times "
                        "torch._scaled_mm (e4m3 operands, bf16 output); mxfp8 and nvfp4 its "
                        "block-scaled forms on Blackwell (e4m3 with an e8m0 scale per 32 "
                        "elements; e2m1 with an e4m3 scale per 16)")
    parser.add_argument("--fp8-scaling", choices=("tensorwise", "rowwise"), default="tensorwise",
                        help="with --dtype fp8: one fp32 scale per operand, or one per row of A "
                        "and column of B (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed calls per shape (default 10)")
    parser.add_argument("--iters", type=int, default=50, help="timed calls per shape (default 50)")
    parser.add_argument("--no-flush-l2", action="store_true",
                        help="do not overwrite the L2 cache before each timed call")
    parser.add_argument("--hardware", help="the hardware column (default: from the GPU name)")
    parser.add_argument("--source", default="torch-matmul",
                        help="the source column (default: %(default)s)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output CSV (default: scenarios/measurements/<date>_<hardware>/gemm.csv)")
    args = parser.parse_args(argv)
    if args.shapes and args.scenario:
        parser.error("give --shapes or --scenario, not both")
    if not (args.shapes or args.scenario or args.square):
        parser.error("nothing to measure: give --shapes FILE, --scenario SCENARIO or --square RANGE")
    if args.set and not args.scenario:
        parser.error("--set applies to --scenario only")
    if args.warmup < 0 or args.iters < 1:
        parser.error("expected --warmup >= 0 and --iters >= 1")
    for name in ("hardware", "source"):
        value = getattr(args, name)
        if value is not None and ("," in value or not value.strip()):
            parser.error(f"--{name}: expected a non-empty label without commas, found '{value}'")
    return args


def plan(args):
    """([(m, n, k, count_per_step or None, name)], dtype, description)."""
    shapes = []
    seen = {}
    description = []
    dtypes = set()
    if args.shapes or args.scenario:
        gemms, _, what = common.shapes_from_args(args)
        if not gemms:
            raise common.InputError(f"{what}: expected GEMM rows (kind=gemm), found none")
        description.append(what)
        for g in gemms:
            if g.dtype:
                dtypes.add(g.dtype)
            key = (g.m, g.n, g.k)
            if key in seen:
                i = seen[key]
                m, n, k, count, name = shapes[i]
                shapes[i] = (m, n, k, count + g.count, name + "+" + g.name)
            else:
                seen[key] = len(shapes)
                shapes.append((g.m, g.n, g.k, g.count, g.name))
    if args.square:
        sizes = common.parse_int_list(args.square, "--square")
        description.append("square sizes " + args.square)
        for s in sizes:
            if (s, s, s) not in seen:
                seen[(s, s, s)] = len(shapes)
                shapes.append((s, s, s, None, f"square_{s}"))
    dtype = args.dtype
    low = sorted(dtypes & set(LOW_PRECISION))
    if dtype is None and len(dtypes) == 1 and low:
        dtype = low[0]  # a step in one low precision (workload.float8): its format
    if low and dtype not in low:
        # Low-precision GEMMs (workload.float8) are torch._scaled_mm calls in
        # their own format: --dtype chooses one.
        print(f"{PROG}: warning: the {','.join(low)} rows are measured in {dtype or 'bf16'}",
              file=sys.stderr)
    if dtype is None:
        known = dtypes & set(common.TORCH_DTYPES)
        dtype = known.pop() if len(known) == 1 else "bf16"
    elif dtypes and dtypes != {dtype}:
        print(f"{PROG}: warning: measuring in {dtype}, the shapes are {','.join(sorted(dtypes))}",
              file=sys.stderr)
    return shapes, dtype, "; ".join(description)


def measure(torch, args, shapes, dtype):
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    if dtype == "fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
    fp8 = dtype in LOW_PRECISION
    elem = (LOW_PRECISION[dtype] if fp8 else
            torch.tensor([], dtype=common.torch_dtype(torch, dtype)).element_size())
    flush = None if args.no_flush_l2 else common.l2_flusher(torch, device)
    generator = torch.Generator(device=device)
    generator.manual_seed(0)
    clock = common.ClockSampler(args.device)
    rows = []
    print(f"{'m':>8} {'n':>8} {'k':>8} {'time_us':>12} {'TFLOP/s':>9} {'MHz':>6}  name")
    for m, n, k, count, name in shapes:
        need = (m * k + k * n) * elem + m * n * (2 if fp8 else elem)
        if fp8 and (m % 16 or n % 16 or k % 16):
            print(f"{PROG}: skipped {m}x{n}x{k}: torch._scaled_mm needs multiples of 16",
                  file=sys.stderr)
            continue
        if dtype in ("mxfp8", "nvfp4") and k % 32:
            print(f"{PROG}: skipped {m}x{n}x{k}: {dtype} needs k a multiple of 32 (whole scale "
                  "blocks)", file=sys.stderr)
            continue
        free, _ = torch.cuda.mem_get_info(device)
        if need > 0.9 * free:
            print(f"{PROG}: skipped {m}x{n}x{k}: needs {need / 2**30:.1f} GiB, "
                  f"{free / 2**30:.1f} GiB free", file=sys.stderr)
            continue
        try:
            if dtype in ("mxfp8", "nvfp4"):
                call = block_scaled_matmul(torch, m, n, k, dtype, device, generator)
            elif fp8:
                call = fp8_matmul(torch, m, n, k, args.fp8_scaling, device, generator)
            else:
                t = common.torch_dtype(torch, dtype)
                a = torch.randn(m, k, device=device, dtype=t, generator=generator)
                b = torch.randn(k, n, device=device, dtype=t, generator=generator)
                c = torch.empty(m, n, device=device, dtype=t)

                def call():
                    torch.matmul(a, b, out=c)
            with clock:
                times = common.cuda_times_ms(torch, call, args.warmup, args.iters, flush)
        except torch.cuda.OutOfMemoryError:
            print(f"{PROG}: skipped {m}x{n}x{k}: out of GPU memory", file=sys.stderr)
            continue
        except (RuntimeError, AttributeError) as e:  # no FP8 on this GPU or torch
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"{PROG}: skipped {m}x{n}x{k}: {first}", file=sys.stderr)
            continue
        finally:
            a = b = c = call = None
            torch.cuda.empty_cache()
        seconds = common.median(times) / 1e3
        tflops = 2.0 * m * n * k / seconds / 1e12
        mhz = clock.median()
        print(f"{m:>8} {n:>8} {k:>8} {seconds * 1e6:>12.2f} {tflops:>9.1f} "
              f"{'' if mhz is None else f'{mhz:.0f}':>6}  {name}", flush=True)
        rows.append((m, n, k, common.significant(tflops), common.significant(seconds * 1e6),
                     "" if count is None else count, name, "" if mhz is None else f"{mhz:.0f}"))
    return rows


def block_scaled_matmul(torch, m, n, k, fmt, device, generator):
    """A call of torch._scaled_mm in Blackwell's block-scaled formats: MXFP8
    (e4m3 operands, an e8m0 scale per 32 elements along k) or NVFP4 (e2m1
    operands packed two to a byte, an e4m3 scale per 16), A row-major, B
    column-major, bf16 out. The scales are laid out as cuBLAS takes them,
    tiles of 128 rows by 4 scale columns, padded; their values do not change
    the time, so they are ones (e8m0 127 = 2^0, e4m3 0x38 = 1.0)."""
    def rounded(x, to):
        return (x + to - 1) // to * to
    if fmt == "mxfp8":
        block, scale_dtype, one = 32, torch.float8_e8m0fnu, 127
        a = torch.randn(m, k, device=device, generator=generator).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=device, generator=generator).to(torch.float8_e4m3fn).t()
    else:
        block, scale_dtype, one = 16, torch.float8_e4m3fn, 0x38

        def packed(rows):
            return torch.randint(0, 256, (rows, k // 2), dtype=torch.uint8, device=device,
                                 generator=generator).view(torch.float4_e2m1fn_x2)
        a, b = packed(m), packed(n).t()

    def scales(rows):
        raw = torch.full((rounded(rows, 128), rounded(k // block, 4)), one, dtype=torch.uint8,
                         device=device)
        return raw.view(scale_dtype)
    scale_a, scale_b = scales(m), scales(n)

    def call():
        torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    return call


def fp8_matmul(torch, m, n, k, scaling, device, generator):
    """A call of torch._scaled_mm on e4m3 operands as torchao's Float8Linear
    runs it: A row-major, B column-major (cuBLASLt's FP8 layout), bf16 out;
    fp32 scales, one per tensor or one per row of A and column of B."""
    e4m3 = torch.float8_e4m3fn
    a = torch.randn(m, k, device=device, generator=generator).to(e4m3)
    b = torch.randn(n, k, device=device, generator=generator).to(e4m3).t()
    if scaling == "rowwise":
        scale_a = torch.ones(m, 1, device=device, dtype=torch.float32)
        scale_b = torch.ones(1, n, device=device, dtype=torch.float32)
    else:
        scale_a = torch.ones((), device=device, dtype=torch.float32)
        scale_b = torch.ones((), device=device, dtype=torch.float32)

    def call():
        torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    return call


def scaled_mm_text(args, dtype):
    scaling = args.fp8_scaling if dtype == "fp8" else dtype
    return f"torch._scaled_mm ({scaling})"


def main(argv=None):
    args = parse_args(argv)
    shapes, dtype, description = plan(args)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    env = common.environment(torch, args.device)
    hardware, output = common.hardware_and_output(args, "gemm.csv",
                                                  torch.cuda.get_device_name(args.device))
    rows = measure(torch, args, shapes, dtype)
    if not rows:
        raise common.InputError("no shape could be measured (see the messages above)")
    comments = common.comment_lines(
        "clustersim scripts/microbench/gemm.py: C[m,n] = A[m,k] B[k,n] with "
        f"{scaled_mm_text(args, dtype) if dtype in LOW_PRECISION else 'torch.matmul'}; "
        "tflops = 2*m*n*k / time / 1e12", env,
        [f"{description}; dtype {dtype}; median of {args.iters} calls after {args.warmup} "
         f"warm-up calls; L2 {'not ' if args.no_flush_l2 else ''}flushed before each call",
         f"hardware {hardware}" + ("" if args.hardware else " (from the GPU name)")])
    source = args.source
    if dtype == "fp8" and source == "torch-matmul":
        source = f"torch-scaled-mm-{args.fp8_scaling}"
    elif dtype in LOW_PRECISION and source == "torch-matmul":
        source = f"torch-scaled-mm-{dtype}"
    table = [(hardware, dtype, m, n, k, tflops, source, time_us, count, name, mhz)
             for m, n, k, tflops, time_us, count, name, mhz in rows]
    common.write_measurements(output, comments, HEADER, table)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
