#!/usr/bin/env python3
"""Time compute kernels while another kernel holds some of the GPU's SMs.

    python3 scripts/microbench/sm_occupancy.py                   # Llama-3-8B shapes
    python3 scripts/microbench/sm_occupancy.py --held 0,16,32 --gemm 8192x4096x14336

What it tests: clustersim slows a rank's compute by one factor while any of
its collectives transfers (`gpu.comm_overlap_slowdown`, 1.10 in the shipped
profiles: a placeholder). NCCL runs a collective as one CTA per channel, and
a channel's CTA (512-640 threads, compiled for one CTA per SM) takes its SM
from the kernels beside it: a GEMM then runs its tiles on the SMs left, and
a GEMM of one wave grows a second one. If that is the mechanism, the
slowdown depends on the channel count the tuner picks for each collective,
the kind of kernel and its tile count, not on one constant; these rows are
what a model of it would be fitted to and judged by.

How: a holder kernel (compiled here with NVRTC, launched through the CUDA
driver API on a stream of its own) runs --held CTAs that spin on the GPU's
global timer; meanwhile the timed kernel runs
--iters times on the compute stream between CUDA events. Two kinds of
holder bracket NCCL's CTAs: `sm` (the whole SM: all the shared memory one
CTA may take, so no other CTA fits beside it) and `threads` (512 threads
and no shared memory, so other CTAs fit where registers and threads allow).
Both the holder's CTAs and the timed region stamp the global timer, and a
row is valid only if every holder CTA ran from before the region to after
it; each CTA records its SM, and `distinct_sms` counts them.

Kernels (bf16): the GEMMs of --gemm (MxNxK, the output M x N; default the
Llama-3-8B block's at 8,192 tokens and one of exactly one wave of 128 x 256
tiles on 132 SMs), causal flash attention (--attention B,H,S,D), and two
memory-bound ops (a copy and SiLU over --elements values).

Output (-o FILE, default scenarios/measurements/<date>_<hardware>/sm_occupancy.csv),
written atomically: '#' lines (GPU, driver, versions, host, date, command),
then
    hardware,kernel,shape,holder,held,sms,distinct_sms,time_us,slowdown,valid,source
time_us is the median of --iters calls; slowdown is time_us over the same
kernel's time with no holder; valid is no where some holder CTA did not run
through the whole region. Exit codes: 0 ok, 1 bad input, 2 usage.
"""

import ctypes
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "sm_occupancy.py"
HEADER = ("hardware", "kernel", "shape", "holder", "held", "sms", "distinct_sms", "time_us",
          "slowdown", "valid", "source")

# Each holder CTA spins until `duration_ns` of global time have passed since
# it started, then records (start, end, SM); the shared memory it holds is
# the launch's dynamic allocation, never touched. The stamp kernel records
# the global time once, on the compute stream, around the timed region.
KERNELS_CU = r"""
extern "C" __global__ void __launch_bounds__(1024)
hold(unsigned long long duration_ns, unsigned long long* out) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < duration_ns);
  if (threadIdx.x == 0) {
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    out[3 * blockIdx.x] = start;
    out[3 * blockIdx.x + 1] = now;
    out[3 * blockIdx.x + 2] = sm;
  }
}

extern "C" __global__ void stamp(unsigned long long* out) {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  *out = t;
}
"""

# CUDA driver API constants (cuda.h).
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
HOLDER_THREADS = {"sm": 1024, "threads": 512}


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__)
    parser.add_argument("--held", default="0,4,8,16,24,32,64",
                        help="SMs to hold, one row per count (default %(default)s; 0 is the "
                             "baseline every slowdown divides by, added when missing)")
    parser.add_argument("--holders", default="sm,threads",
                        help="kinds of holder CTA: sm, threads (default %(default)s)")
    add_kernel_arguments(parser)
    parser.add_argument("-o", "--output", help="output CSV")
    args = parser.parse_args(argv)
    args.held = sorted(set(common.parse_count_set(args.held, "--held", "SM counts")) | {0})
    args.holders = [h.strip() for h in args.holders.split(",") if h.strip()]
    for h in args.holders:
        if h not in HOLDER_THREADS:
            raise common.InputError(f"--holders: expected sm or threads, found {h!r}")
    check_kernel_arguments(args)
    return args


def add_kernel_arguments(parser):
    """The timed kernels' flags (kernel_cases), with --hardware and --source;
    comm_overlap.py times the same kernels."""
    parser.add_argument("--gemm", action="append", default=None, metavar="MxNxK",
                        help="a GEMM shape, repeatable (default: 8192x6144x4096, "
                             "8192x4096x4096, 8192x14336x4096, 8192x4096x14336, 1536x2816x8192)")
    parser.add_argument("--attention", default="1,32,8192,128", metavar="B,H,S,D",
                        help="causal flash attention shape, or 'none' (default %(default)s)")
    parser.add_argument("--elements", type=int, default=8192 * 14336,
                        help="values of the memory-bound ops (default %(default)s)")
    parser.add_argument("--iters", type=int, default=20,
                        help="timed calls per row (default %(default)s)")
    parser.add_argument("--warmup", type=int, default=5,
                        help="untimed calls before (default %(default)s)")
    parser.add_argument("--hardware", help="hardware label (default: from the GPU name)")
    parser.add_argument("--source", default="measured", help="source column (default %(default)s)")


def check_kernel_arguments(args):
    """Parses and checks what add_kernel_arguments added, in place."""
    args.gemm = [parse_gemm(text) for text in (args.gemm or DEFAULT_GEMMS)]
    args.attention = None if args.attention == "none" else parse_ints(args.attention, 4,
                                                                       "--attention")
    for name, least in (("elements", 1), ("iters", 1), ("warmup", 0)):
        if getattr(args, name) < least:
            raise common.InputError(f"--{name}: expected at least {least}, "
                                    f"found {getattr(args, name)}")


DEFAULT_GEMMS = ["8192x6144x4096", "8192x4096x4096", "8192x14336x4096", "8192x4096x14336",
                 "1536x2816x8192"]


def parse_ints(text, count, what, sep=","):
    try:
        values = [int(v) for v in text.split(sep)]
    except ValueError:
        values = []
    if len(values) != count or min(values) <= 0:
        raise common.InputError(f"{what}: expected {count} positive integers separated by "
                                f"'{sep}', found {text!r}")
    return values


def parse_gemm(text):
    return tuple(parse_ints(text.lower(), 3, "--gemm", sep="x"))


# ---- NVRTC and the driver API through ctypes (no compiler needed) ----


def _load_library(candidates, symbol, what):
    """The first of `candidates` (names or glob patterns) that loads and has
    `symbol` (a builtins library matches the same patterns and lacks it)."""
    for candidate in candidates:
        for path in sorted(glob.glob(candidate), reverse=True) if "*" in candidate else [candidate]:
            try:
                library = ctypes.CDLL(path)
            except OSError:
                continue
            if hasattr(library, symbol):
                return library
    raise common.InputError(f"{what} not found (tried {', '.join(candidates)})")


def nvrtc_library():
    """libnvrtc: first the one PyTorch's CUDA wheels bring (its PTX is one the
    driver PyTorch runs on accepts), then the system's."""
    roots = [p for p in sys.path if p and os.path.isdir(p)]
    candidates = [os.path.join(r, "nvidia", "*", "lib", "libnvrtc.so*") for r in roots]
    candidates += [os.path.join(r, "torch", "lib", "libnvrtc*.so*") for r in roots]
    candidates += ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                   "/usr/local/cuda/lib64/libnvrtc.so*"]
    return _load_library(candidates, "nvrtcCreateProgram", "NVRTC (libnvrtc)")


def compile_ptx(source, arch, nvrtc=None):
    """PTX of `source` for compute capability `arch` (e.g. 90)."""
    nvrtc = nvrtc or nvrtc_library()
    program = ctypes.c_void_p()
    check_nvrtc(nvrtc, nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(),
                                                b"sm_occupancy.cu", 0, None, None),
                "nvrtcCreateProgram")
    options = [f"--gpu-architecture=compute_{arch}".encode(), b"--std=c++14"]
    array = (ctypes.c_char_p * len(options))(*options)
    status = nvrtc.nvrtcCompileProgram(program, len(options), array)
    if status != 0:
        size = ctypes.c_size_t()
        nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        nvrtc.nvrtcGetProgramLog(program, log)
        raise common.InputError(f"NVRTC could not compile the holder kernel for compute_{arch}: "
                                f"{log.value.decode(errors='replace').strip()}")
    size = ctypes.c_size_t()
    check_nvrtc(nvrtc, nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size)), "nvrtcGetPTXSize")
    ptx = ctypes.create_string_buffer(size.value)
    check_nvrtc(nvrtc, nvrtc.nvrtcGetPTX(program, ptx), "nvrtcGetPTX")
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    return ptx.raw


def check_nvrtc(nvrtc, status, call):
    if status != 0:
        nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise common.InputError(f"{call} failed: {nvrtc.nvrtcGetErrorString(status).decode()}")


class Driver:
    """The holder and stamp kernels, loaded into the context PyTorch uses."""

    def __init__(self, torch, device_index, ptx):
        self.cuda = _load_library(["libcuda.so.1", "libcuda.so"], "cuLaunchKernel",
                                   "the CUDA driver (libcuda)")
        torch.cuda.synchronize(device_index)  # PyTorch's primary context is current from here
        device = ctypes.c_int()
        self.check(self.cuda.cuDeviceGet(ctypes.byref(device), device_index), "cuDeviceGet")
        module = ctypes.c_void_p()
        self.check(self.cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx)),
                   "cuModuleLoadData")
        self.hold = self.function(module, b"hold")
        self.stamp = self.function(module, b"stamp")
        optin = ctypes.c_int()
        self.check(self.cuda.cuDeviceGetAttribute(
            ctypes.byref(optin), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            device), "cuDeviceGetAttribute")
        self.max_shared = optin.value
        self.check(self.cuda.cuFuncSetAttribute(
            self.hold, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.max_shared),
            "cuFuncSetAttribute")

    def check(self, status, call):
        if status != 0:
            name = ctypes.c_char_p()
            self.cuda.cuGetErrorName(status, ctypes.byref(name))
            raise common.InputError(f"{call} failed: {(name.value or b'?').decode()} ({status})")

    def function(self, module, name):
        f = ctypes.c_void_p()
        self.check(self.cuda.cuModuleGetFunction(ctypes.byref(f), module, name),
                   "cuModuleGetFunction")
        return f

    def launch(self, function, blocks, threads, shared, stream, *args):
        params = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        self.check(self.cuda.cuLaunchKernel(function, blocks, 1, 1, threads, 1, 1, shared,
                                            ctypes.c_void_p(stream.cuda_stream), params, None),
                   "cuLaunchKernel")


# ---- Measuring ----


def kernel_cases(torch, args, device):
    """(name, shape text, fn) of every timed kernel."""
    bf16 = torch.bfloat16
    cases = []
    for m, n, k in args.gemm:
        a = torch.randn(m, k, dtype=bf16, device=device)
        b = torch.randn(k, n, dtype=bf16, device=device)
        cases.append(("gemm", f"{m}x{n}x{k}", lambda a=a, b=b: torch.mm(a, b)))
    if args.attention is not None:
        batch, heads, seq, dim = args.attention
        q, k, v = (torch.randn(batch, heads, seq, dim, dtype=bf16, device=device)
                   for _ in range(3))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        cases.append(("flash_attention", f"{batch}x{heads}x{seq}x{dim}",
                      lambda: sdpa(q, k, v, is_causal=True)))
    x = torch.randn(args.elements, dtype=bf16, device=device)
    y = torch.empty_like(x)
    cases.append(("copy", str(args.elements), lambda: y.copy_(x)))
    cases.append(("silu", str(args.elements), lambda: torch.nn.functional.silu(x)))
    return cases


def time_region(torch, driver, fn, holder, held, args, estimate_ms, device):
    """(median ms per call, distinct SMs held, whether the holder covered the
    region) of `fn` with `held` CTAs of `holder` running beside it."""
    compute = torch.cuda.current_stream(device)
    side = torch.cuda.Stream(device)
    stamps = torch.zeros(2, dtype=torch.int64, device=device)
    records = torch.zeros(max(held, 1) * 3, dtype=torch.int64, device=device)
    for _ in range(args.warmup):
        fn()
    torch.cuda.synchronize(device)
    # The holder outlasts the region by a wide margin; the compute stream
    # sleeps first so that the holder's CTAs are resident before it starts.
    duration_ns = int(max(estimate_ms * args.iters * 3.0, 5.0) * 1e6) + 20_000_000
    if held > 0:
        threads = HOLDER_THREADS[holder]
        shared = driver.max_shared if holder == "sm" else 0
        driver.launch(driver.hold, held, threads, shared, side, ctypes.c_uint64(duration_ns),
                      ctypes.c_uint64(records.data_ptr()))
    torch.cuda._sleep(10_000_000)  # about 5 ms of GPU cycles
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters)]
    driver.launch(driver.stamp, 1, 1, 0, compute, ctypes.c_uint64(stamps[0:1].data_ptr()))
    for i in range(args.iters):
        starts[i].record(compute)
        fn()
        ends[i].record(compute)
    driver.launch(driver.stamp, 1, 1, 0, compute, ctypes.c_uint64(stamps[1:2].data_ptr()))
    torch.cuda.synchronize(device)
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    if held == 0:
        return common.median(times), 0, True
    distinct, covered = coverage(stamps.tolist(), records.view(held, 3).tolist())
    return common.median(times), distinct, covered


def coverage(region, holders):
    """(distinct SMs, whether every holder ran through the region) for the
    region's (begin, end) and the holders' (start, end, SM), global-timer ns."""
    begin, end = region
    covered = all(start <= begin and stop >= end for start, stop, _ in holders)
    return len({sm for _, _, sm in holders}), covered


def measure(torch, args, device, driver, sms):
    rows = []
    for name, shape, fn in kernel_cases(torch, args, device):
        base_ms, _, _ = time_region(torch, driver, fn, "sm", 0, args, 1.0, device)
        for holder in args.holders:
            for held in args.held:
                if held >= sms:
                    print(f"{PROG}: skipping {held} held SMs: the GPU has {sms}", file=sys.stderr)
                    continue
                ms, distinct, covered = (
                    (base_ms, 0, True) if held == 0
                    else time_region(torch, driver, fn, holder, held, args, base_ms, device))
                rows.append((name, shape, holder, held, sms, distinct,
                             common.significant(ms * 1e3), f"{ms / base_ms:.4f}",
                             "yes" if covered else "no"))
                print(f"{name} {shape} {holder} {held}: {ms * 1e3:.1f} us "
                      f"(x{ms / base_ms:.3f}){'' if covered else ' NOT COVERED'}", file=sys.stderr)
    return rows


def main(argv=None):
    args = parse_args(argv)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    device = torch.device("cuda", torch.cuda.current_device())
    env = common.environment(torch, device.index)
    hardware, output = common.hardware_and_output(args, "sm_occupancy.csv",
                                                  torch.cuda.get_device_name(device))
    props = torch.cuda.get_device_properties(device)
    driver = Driver(torch, device.index, compile_ptx(KERNELS_CU, props.major * 10 + props.minor))
    rows = measure(torch, args, device, driver, props.multi_processor_count)
    comments = common.comment_lines(
        "clustersim scripts/microbench/sm_occupancy.py: compute kernels while holder CTAs "
        "keep SMs (as NCCL's channels do); slowdown = time / time with none held", env,
        [f"holders: sm = {HOLDER_THREADS['sm']} threads and {driver.max_shared} bytes of "
         f"shared memory per CTA (one per SM); threads = {HOLDER_THREADS['threads']} threads, "
         "no shared memory",
         f"median of {args.iters} calls after {args.warmup} warm-up calls, L2 not flushed",
         f"hardware {hardware}" + ("" if args.hardware else " (from the GPU name)")])
    table = [(hardware,) + row + (args.source,) for row in rows]
    common.write_measurements(output, comments, HEADER, table)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
