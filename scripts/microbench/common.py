"""Shared helpers of the clustersim microbenchmarks (scripts/microbench/).

Everything here but the functions that take a `torch` module argument runs
without PyTorch, so that the scripts' --help and these helpers can be checked
on a machine without a GPU (tests/scripts/check_microbench.sh).

Conventions of every script:
  * a CSV starts with '#' comment lines recording where and how it was
    measured (GPU, driver, torch/CUDA/NCCL/cuDNN versions, host, date, the
    command line), then a header line, then one row per measurement;
  * values never contain commas (the clustersim readers split on commas and
    know no quoting);
  * files are written atomically: a temporary file in the target's folder,
    flushed to disk, renamed over the target;
  * a bad input is an InputError, printed as "PROG: error: MESSAGE" with exit
    code 1 (run_main); argparse's usage errors exit 2.
"""

import contextlib
import datetime
import math
import os
import shlex
import socket
import subprocess
import sys
import tempfile
from collections import namedtuple

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(SCRIPT_DIR))
DEFAULT_CLUSTERSIM = os.path.join(REPO_ROOT, "build", "bin", "clustersim")


def argument_parser(prog, doc, needs="PyTorch with CUDA"):
    """The scripts' argparse parser: the module docstring as the description,
    kept as written, and what the script needs at run time as the epilog."""
    import argparse
    return argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Needs {needs} at run time (not for --help).")


class InputError(Exception):
    """Bad input from the user: printed without a traceback, exit code 1."""


def run_main(prog, main, argv=None):
    """Runs main(argv) and turns InputError into a message and exit code 1."""
    try:
        return main(argv)
    except InputError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def import_torch(prog):
    """PyTorch, imported only once the arguments are known (so that --help and
    argument errors work without it); an InputError when it is missing."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise InputError(
            f"{prog} needs PyTorch with CUDA (pip install torch), found none ({e})"
        ) from e
    return torch


def require_cuda(torch):
    if not torch.cuda.is_available():
        raise InputError("expected a CUDA GPU (torch.cuda.is_available()), found none")


def torchrun_environment(example):
    """(rank, world, local_rank, local_world) from torchrun's variables; an
    InputError showing `example` (a torchrun command line) without them."""
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
    missing = [n for n in names if n not in os.environ]
    if missing:
        raise InputError(
            f"expected to be launched by torchrun (missing {','.join(missing)}), e.g. {example}")
    try:
        return tuple(int(os.environ[n]) for n in names)
    except ValueError:
        raise InputError(
            "expected integer RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE") from None


# ---- Hardware names ----

# Data-centre parts sold as SXM modules (or their own board) and as PCIe cards
# or NVL pairs; when the CUDA name says neither PCIe nor NVL, the part is the
# SXM one (CUDA reports an H100 SXM5 as "NVIDIA H100 80GB HBM3", an H200 SXM
# as "NVIDIA H200").
SXM_FAMILIES = {
    "P100", "V100", "A100", "A800", "H100", "H800", "H200", "H20", "B100", "B200", "B300",
}


def hardware_from_gpu_name(name):
    """The `hardware` label of the measurement CSVs for a CUDA device name.

    Rule: drop the vendor words (NVIDIA, Tesla, GeForce, Quadro); the family is
    the first word up to a '-' ("A100-SXM4-80GB" -> A100, "RTX 4090" ->
    RTX4090, "V100S-PCIE" -> V100S). Then the form factor: "PCIe" when the name
    says PCIE, "NVL" when a word is NVL, "SXM" for a family of SXM_FAMILIES
    otherwise; other GPUs (L40S, A10G, RTX4090, GH200) keep the family alone.
      "NVIDIA H100 80GB HBM3" -> H100-SXM     "NVIDIA H100 PCIe" -> H100-PCIe
      "NVIDIA H100 NVL" -> H100-NVL           "NVIDIA A100-SXM4-80GB" -> A100-SXM
      "NVIDIA A100 80GB PCIe" -> A100-PCIe    "NVIDIA H200" -> H200-SXM
      "NVIDIA L40S" -> L40S                   "NVIDIA GH200 480GB" -> GH200
    """
    words = [w for w in name.replace("_", " ").split() if w]
    while words and words[0].upper() in ("NVIDIA", "TESLA", "GEFORCE", "QUADRO"):
        words = words[1:]
    if not words:
        return "unknown-gpu"
    first = words[0].split("-")[0]
    if first.upper() in ("RTX", "GTX", "TITAN") and len(words) > 1:
        family = first.upper() + words[1].split("-")[0]
    else:
        family = first.upper()
    upper = name.upper()
    tokens = upper.replace("-", " ").split()
    if "PCIE" in upper:
        return family + "-PCIe"
    if "NVL" in tokens:
        return family + "-NVL"
    if family in SXM_FAMILIES or "SXM" in upper:
        return family + "-SXM"
    return family


# ---- Numbers on the command line ----


def powers_of_two_between(low, high):
    """Powers of two p with low <= p <= high (low itself rounded up)."""
    p = 1
    while p < low:
        p *= 2
    out = []
    while p <= high:
        out.append(p)
        p *= 2
    return out


def parse_int_list(text, what):
    """'1024..16384' (powers of two from the first to the last), '64,128', '512'.

    Raises InputError naming `what` (e.g. '--square') on anything else."""
    text = text.strip()
    try:
        if ".." in text:
            low_text, high_text = text.split("..", 1)
            low, high = int(low_text), int(high_text)
            if low <= 0 or high < low:
                raise ValueError
            values = powers_of_two_between(low, high)
            if not values:
                raise ValueError
            return values
        values = [int(v) for v in text.split(",") if v.strip()]
        if not values or any(v <= 0 for v in values):
            raise ValueError
        return values
    except ValueError:
        raise InputError(
            f"{what}: expected positive integers as 'A..B' (powers of two from A to B) or "
            f"'A,B,C', found '{text}'"
        ) from None


def parse_count_set(text, what, meaning):
    """'0,16,4' -> [0, 4, 16]: distinct integers >= 0, sorted. Raises
    InputError naming `what` (e.g. '--held') and what a count is (`meaning`)."""
    try:
        values = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        values = [-1]
    if not values or values[0] < 0:
        raise InputError(f"{what}: expected {meaning} (integers >= 0) separated by ',', "
                         f"found {text!r}")
    return values


_BYTE_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def parse_bytes(text, what):
    """'8', '64K', '1M', '8G' (binary units, as nccl-tests' -b/-e) -> bytes."""
    t = text.strip().upper()
    if t.endswith("IB"):
        t = t[:-2]
    elif t.endswith("B") and len(t) > 1 and t[-2] in "KMGT":
        t = t[:-1]
    unit = t[-1] if t and t[-1] in "KMGTB" else ""
    number = t[: len(t) - len(unit)]
    try:
        value = int(number) * _BYTE_UNITS[unit]
    except (ValueError, KeyError):
        value = 0
    if value <= 0:
        raise InputError(f"{what}: expected a positive size such as 8, 64K, 1M or 8G, found '{text}'")
    return value


# ---- Shapes from `clustersim kernels SCENARIO --csv` ----

GemmShape = namedtuple("GemmShape", "name dtype m n k count")
AttentionConfig = namedtuple(
    "AttentionConfig", "name dtype batch seq heads kv_heads head_dim causal passes count"
)

KERNELS_COLUMNS = (
    "kind", "name", "m", "n", "k", "batch", "seq", "heads", "kv_heads", "head_dim", "causal",
    "pass", "count_per_step",
)


def _csv_lines(text):
    """(line number, fields) of the non-comment, non-blank lines."""
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.strip()
        if not content or content.startswith("#"):
            continue
        yield number, [f.strip() for f in line.split(",")]


def read_kernel_shapes(text, source):
    """The GEMM shapes and attention configurations of a `clustersim kernels
    --csv` text: ([GemmShape], [AttentionConfig]), in file order.

    Attention rows of the same configuration (forward and backward) are one
    AttentionConfig whose `passes` lists the passes ('fwd', 'bwd') and whose
    count sums theirs. Raises InputError naming source:line for a missing
    header column or a bad value (all problems at once)."""
    problems = []
    column = None
    gemms = []
    attention = {}
    for number, fields in _csv_lines(text):
        where = f"{source}:{number}"
        if column is None:
            column = {name: i for i, name in enumerate(fields)}
            missing = [c for c in KERNELS_COLUMNS if c not in column]
            if missing:
                raise InputError(
                    f"{where}: expected the header of 'clustersim kernels SCENARIO --csv' "
                    f"(columns {','.join(KERNELS_COLUMNS)}), missing {','.join(missing)}; "
                    f"found '{','.join(fields)}'"
                )
            continue
        if len(fields) != len(column):
            problems.append(f"{where}: expected {len(column)} comma-separated fields, found {len(fields)}")
            continue

        def get(name):
            return fields[column[name]]

        def positive(name):
            try:
                value = int(get(name))
                if value > 0:
                    return value
            except ValueError:
                pass
            problems.append(f"{where}: {name}: expected a positive integer, found '{get(name)}'")
            return None

        dtype = get("dtype") if "dtype" in column and get("dtype") else None
        kind = get("kind")
        if kind == "gemm":
            values = [positive(c) for c in ("m", "n", "k", "count_per_step")]
            if None not in values:
                gemms.append(GemmShape(get("name"), dtype, *values))
        elif kind == "attention":
            values = [positive(c) for c in ("batch", "seq", "heads", "kv_heads", "head_dim",
                                            "count_per_step")]
            causal = get("causal")
            if causal not in ("true", "false"):
                problems.append(f"{where}: causal: expected true or false, found '{causal}'")
            pass_ = get("pass")
            if pass_ not in ("fwd", "bwd"):
                problems.append(f"{where}: pass: expected fwd or bwd, found '{pass_}'")
            if None in values or causal not in ("true", "false") or pass_ not in ("fwd", "bwd"):
                continue
            batch, seq, heads, kv_heads, head_dim, count = values
            key = (batch, seq, heads, kv_heads, head_dim, causal == "true")
            old = attention.get(key)
            if old is None:
                attention[key] = AttentionConfig(get("name"), dtype, *key, (pass_,), count)
            else:
                passes = old.passes if pass_ in old.passes else old.passes + (pass_,)
                attention[key] = old._replace(
                    name=old.name + "+" + get("name"), passes=passes, count=old.count + count)
        else:
            problems.append(f"{where}: kind: expected gemm or attention, found '{kind}'")
    if column is None:
        problems.append(f"{source}: expected a CSV header (clustersim kernels --csv), found no data")
    if problems:
        raise InputError("\n".join(problems))
    return gemms, list(attention.values())


def read_kernel_shapes_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: expected a readable shapes CSV, found {e.strerror}") from None
    return read_kernel_shapes(text, path)


def run_clustersim_kernels(clustersim, scenario, sets=()):
    """The text of `clustersim kernels SCENARIO --csv [--set K=V]...`."""
    if not os.path.isfile(clustersim) or not os.access(clustersim, os.X_OK):
        raise InputError(
            f"--clustersim {clustersim}: expected the clustersim binary (build it with "
            "cmake --build build, or pass --clustersim PATH), found none"
        )
    command = [clustersim, "kernels", scenario, "--csv"]
    for s in sets:
        command += ["--set", s]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InputError(f"{shlex.join(command)} failed:\n{done.stderr.strip()}")
    return done.stdout


def shapes_from_args(args):
    """([GemmShape], [AttentionConfig], description) from --shapes or --scenario."""
    if args.shapes:
        gemms, attention = read_kernel_shapes_file(args.shapes)
        return gemms, attention, f"shapes from {args.shapes}"
    text = run_clustersim_kernels(args.clustersim, args.scenario, args.set or ())
    gemms, attention = read_kernel_shapes(text, f"clustersim kernels {args.scenario}")
    return gemms, attention, f"shapes of clustersim kernels {args.scenario}"


def add_shape_arguments(parser):
    parser.add_argument("--shapes", metavar="FILE",
                        help="CSV written by 'clustersim kernels SCENARIO --csv'")
    parser.add_argument("--scenario", metavar="SCENARIO",
                        help="run 'clustersim kernels SCENARIO --csv' for the shapes")
    parser.add_argument("--set", metavar="KEY=VALUE", action="append",
                        help="with --scenario: override a scenario key (repeatable)")
    parser.add_argument("--clustersim", metavar="PATH", default=DEFAULT_CLUSTERSIM,
                        help="the clustersim binary for --scenario (default: %(default)s)")


# ---- Environment ----


def _nvidia_smi_driver():
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[0] if done.returncode == 0 and lines else None


def _nccl_version(torch):
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # no NCCL in this build
        return "none"
    if isinstance(v, tuple):
        return ".".join(str(x) for x in v)
    # Older torch: one integer, major*1000 + minor*100 + patch (or *10000 from 2.9).
    if v >= 10000:
        return f"{v // 10000}.{(v % 10000) // 100}.{v % 100}"
    return f"{v // 1000}.{(v % 1000) // 100}.{v % 100}"


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def environment(torch, device=0):
    """(key, value) pairs describing where the measurement runs."""
    name = torch.cuda.get_device_name(device)
    props = torch.cuda.get_device_properties(device)
    driver = _nvidia_smi_driver()
    if driver is None:
        try:
            api = torch._C._cuda_getDriverVersion()
            driver = f"unknown (nvidia-smi not found; CUDA driver API {api // 1000}.{(api % 1000) // 10})"
        except Exception:
            driver = "unknown (nvidia-smi not found)"
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else "none"
    return [
        ("gpu", f"{name} ({props.total_memory / 2**30:.1f} GiB, {props.multi_processor_count} SMs, "
                f"compute capability {props.major}.{props.minor}, {torch.cuda.device_count()} visible)"),
        ("driver", driver),
        ("torch", torch.__version__),
        ("cuda", torch.version.cuda or "none"),
        ("nccl", _nccl_version(torch)),
        ("cudnn", str(cudnn)),
        # The caching allocator's mode decides how far reserved memory runs
        # above allocated (expandable segments map pages as they are needed).
        ("allocator", os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
         or "PyTorch's default (PYTORCH_CUDA_ALLOC_CONF unset)"),
        ("host", socket.gethostname()),
        ("date", utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")),
        ("command", shlex.join([os.path.basename(sys.executable)] + sys.argv)),
    ]


def nccl_settings():
    """The NCCL_* variables in force, as one comment note."""
    nccl = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")]
    return "NCCL settings: " + (" ".join(nccl) if nccl else "none (NCCL's defaults)")


def comment_lines(title, pairs, notes=()):
    """'# ' lines: the title, 'key: value' pairs, then free notes."""
    lines = [f"# {title}"]
    lines += [f"# {key}: {value}" for key, value in pairs]
    lines += [f"# {note}" for note in notes]
    return [line.replace("\n", " ") for line in lines]


def default_output_path(hardware, file_name, date=None):
    """scenarios/measurements/<YYYY-MM-DD>_<hardware, lower case>/<file_name>."""
    day = (date or utc_now()).strftime("%Y-%m-%d")
    folder = f"{day}_{hardware.lower()}"
    return os.path.join(REPO_ROOT, "scenarios", "measurements", folder, file_name)


def hardware_and_output(args, file_name, gpu_name=None):
    """The hardware label (--hardware, else from `gpu_name`, else "cpu") and
    the output path (--output, else default_output_path for `file_name`),
    checked writable before anything is measured."""
    hardware = args.hardware or (hardware_from_gpu_name(gpu_name) if gpu_name else "cpu")
    output = args.output or default_output_path(hardware, file_name)
    check_writable(output)
    return hardware, output


# ---- Writing ----


def check_writable(path):
    """Creates the folder of `path` and checks that a file can be made there,
    so that a long measurement does not end in an unwritable output."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror})") from None


def write_text_atomically(path, text):
    """Writes `text` to `path` through a temporary file in the same folder."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".",
                                         suffix=".tmp")
    except OSError as e:
        raise InputError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open()
        # would (0666 less the umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def significant(value, digits=4):
    """`value` > 0 in fixed point with at least `digits` significant digits
    (never an exponent, never rounded to zero): 794.51 -> '794.5',
    0.012345 -> '0.01235', 12345.6 -> '12346'."""
    if value <= 0:
        raise ValueError(f"expected a positive number, found {value}")
    decimals = max(digits - 1 - math.floor(math.log10(value)), 0)
    return f"{value:.{decimals}f}"


def csv_text(comments, header, rows):
    """The CSV text: comment lines, the header, one line per row (a sequence
    of values in header order; None is an empty field). A value containing a
    comma or a line break is a ValueError: the readers do not quote."""
    lines = list(comments) + [",".join(header)]
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"row {row!r} has {len(row)} fields, expected {len(header)}")
        fields = ["" if v is None else str(v) for v in row]
        for f in fields:
            if "," in f or "\n" in f:
                raise ValueError(f"CSV value {f!r} contains a comma or a line break")
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n"


def write_csv_atomically(path, comments, header, rows):
    write_text_atomically(path, csv_text(comments, header, rows))


def write_measurements(path, comments, header, rows):
    """A script's output CSV, written atomically, and a line on stderr saying so."""
    write_csv_atomically(path, comments, header, rows)
    print(f"wrote {len(rows)} rows to {path}", file=sys.stderr)


@contextlib.contextmanager
def nccl_process_group(dist, local_rank):
    """torch.distributed's NCCL group for the body of a torchrun script: every rank
    waits for the others at the end (so that rank 0's file is written before any
    rank leaves), and the group is destroyed however the body ends."""
    dist.init_process_group(backend="nccl")
    try:
        yield
        dist.barrier(device_ids=[local_rank])
    finally:
        dist.destroy_process_group()


# ---- Timing (needs torch) ----


def median(values):
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of nothing")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def l2_flusher(torch, device, mebibytes=256):
    """A function that overwrites `mebibytes` of HBM, evicting the L2 cache
    (50 MB on H100, 126 MB on B200) so that each timed call starts cold."""
    buffer = torch.empty(mebibytes * 2**20, dtype=torch.int8, device=device)
    return buffer.zero_


def cuda_times_ms(torch, fn, warmup, iters, before=None):
    """Per-call times of fn() in milliseconds, from CUDA events around each
    call after `warmup` untimed calls; `before()` (e.g. an L2 flush) runs
    before each timed call, outside the events."""
    for _ in range(warmup):
        if before is not None:
            before()
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for i in range(iters):
        if before is not None:
            before()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def nvml_handle(device_index):
    """(pynvml, the device's NVML handle), or (None, the reason) where pynvml
    is missing or NVML refuses."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(device_index)
    except Exception as e:  # no pynvml, no driver, no such device
        return None, e


class ClockSampler:
    """The GPU's SM clock (MHz) sampled every `period` seconds through NVML
    (pynvml) while a `with` block runs; `median()` after it, None where NVML
    is missing. Microbenchmark rates depend on the clock the GPU ran at (a
    power-limited part runs GEMM after GEMM hundreds of MHz below its boost
    clock), so each row records it."""

    def __init__(self, device_index=0, period=0.005):
        self.samples = []
        self.period = period
        self._stop = None
        self._thread = None
        # Without NVML the clock column stays empty.
        self._nvml, self._handle = nvml_handle(device_index)

    def __enter__(self):
        if self._nvml is None:
            return self
        import threading
        self.samples = []
        self._stop = threading.Event()

        def sample():
            while not self._stop.is_set():
                try:
                    self.samples.append(
                        self._nvml.nvmlDeviceGetClockInfo(self._handle, self._nvml.NVML_CLOCK_SM))
                except Exception:
                    return
                self._stop.wait(self.period)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        return False

    def median(self):
        return median(self.samples) if self.samples else None


TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}


def torch_dtype(torch, name):
    return getattr(torch, TORCH_DTYPES[name])
