#!/usr/bin/env python3
"""Measure the clock and GEMM rate a GPU sustains under a long dense matmul load.

    python3 scripts/microbench/sustained_clock.py --seconds 60

Why: a GPU under training load runs below its boost clock when it reaches its
power or thermal limit, and clustersim's `gpu.sustained_clock` is that ratio
(achieved clock / the clock behind the datasheet peak). Short microbenchmarks
(gemm.py: 50 calls) run mostly at boost; a training step runs for hours.

Load: back-to-back C = A B of --size x --size x --size bf16 random operands for
--seconds, timed in windows of --window seconds between CUDA events (each
window ends with a synchronisation, so the queue never runs ahead). At the end
of each window the SM clock, power draw, temperature and the driver's clock
event reasons are read through NVML (pynvml; nvidia-smi when pynvml is
missing). The summary compares the first window with the median of the last
half: the sustained TFLOP/s, and the median SM clock over the maximum SM clock
the driver reports (clocks.max.sm).

Output (-o FILE, default scenarios/measurements/<date>_<hardware>/sustained_clock.csv),
written atomically: '#' lines (GPU, driver, versions, host, date, command,
power limit, maximum clocks, the summary), then
    t_s,tflops,sm_clock_mhz,mem_clock_mhz,power_w,temp_c,reasons
one row per window (t_s: end of the window from the start of the load;
reasons: the NVML clock event reason bits in hex, 0x0 when none).
Exit codes: 0 ok, 1 bad input, 2 usage.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PROG = "sustained_clock.py"
HEADER = ("t_s", "tflops", "sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c", "reasons")


def parse_args(argv):
    parser = common.argument_parser(PROG, __doc__)
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="length of the load (default %(default)s)")
    parser.add_argument("--window", type=float, default=1.0,
                        help="seconds per timed window (default %(default)s)")
    parser.add_argument("--size", type=int, default=8192, help="m = n = k (default %(default)s)")
    parser.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    parser.add_argument("--hardware", help="the hardware part of the default output path "
                        "(default: from the GPU name)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="output CSV (default: scenarios/measurements/<date>_<hardware>/"
                        "sustained_clock.csv)")
    args = parser.parse_args(argv)
    if not args.seconds > 0 or not args.window > 0 or args.window > args.seconds:
        parser.error("expected 0 < --window <= --seconds")
    if args.size <= 0:
        parser.error("--size: expected a positive integer")
    return args


class Sensors:
    """The GPU's clocks, power and temperature through NVML, or nvidia-smi."""

    SMI_FIELDS = ("clocks.sm", "clocks.mem", "power.draw", "temperature.gpu",
                  "clocks_event_reasons.active")

    def __init__(self, index):
        self.index = index
        self.nvml, self.handle = common.nvml_handle(index)
        if self.nvml is None:  # fall back to nvidia-smi
            print(f"{PROG}: NVML unavailable ({self.handle}); reading nvidia-smi", file=sys.stderr)

    def _smi(self, fields):
        try:
            done = subprocess.run(
                ["nvidia-smi", "-i", str(self.index), f"--query-gpu={','.join(fields)}",
                 "--format=csv,noheader,nounits"],
                capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        return [v.strip() for v in done.stdout.strip().split(",")]

    def read(self):
        """(sm_mhz, mem_mhz, power_w, temp_c, reasons hex) as strings ('' when unknown)."""
        if self.nvml is not None:
            n = self.nvml
            values = []
            for get in (lambda: n.nvmlDeviceGetClockInfo(self.handle, n.NVML_CLOCK_SM),
                        lambda: n.nvmlDeviceGetClockInfo(self.handle, n.NVML_CLOCK_MEM),
                        lambda: f"{n.nvmlDeviceGetPowerUsage(self.handle) / 1000:.1f}",
                        lambda: n.nvmlDeviceGetTemperature(self.handle, n.NVML_TEMPERATURE_GPU),
                        lambda: hex(_clock_reasons(n, self.handle))):
                try:
                    values.append(str(get()))
                except Exception:
                    values.append("")
            return tuple(values)
        values = self._smi(self.SMI_FIELDS) or self._smi(self.SMI_FIELDS[:4])
        if values is None:
            return ("", "", "", "", "")
        values = list(values) + [""] * (5 - len(values))
        return tuple(v if v not in ("[N/A]", "N/A") else "" for v in values[:5])

    def static(self):
        """[(key, value)]: power limit and maximum clocks."""
        pairs = []
        if self.nvml is not None:
            n = self.nvml
            for key, get in (
                    ("power_limit_w", lambda: n.nvmlDeviceGetEnforcedPowerLimit(self.handle) / 1000),
                    ("max_sm_clock_mhz", lambda: n.nvmlDeviceGetMaxClockInfo(self.handle,
                                                                             n.NVML_CLOCK_SM)),
                    ("max_mem_clock_mhz", lambda: n.nvmlDeviceGetMaxClockInfo(self.handle,
                                                                              n.NVML_CLOCK_MEM))):
                try:
                    pairs.append((key, f"{get():g}"))
                except Exception:
                    pass
            return pairs
        values = self._smi(("enforced.power.limit", "clocks.max.sm", "clocks.max.mem"))
        if values:
            for key, v in zip(("power_limit_w", "max_sm_clock_mhz", "max_mem_clock_mhz"), values):
                pairs.append((key, v))
        return pairs


def _clock_reasons(n, handle):
    for name in ("nvmlDeviceGetCurrentClocksEventReasons",
                 "nvmlDeviceGetCurrentClocksThrottleReasons"):
        fn = getattr(n, name, None)
        if fn is not None:
            return fn(handle)
    raise RuntimeError("no clock reasons in this pynvml")


def run_load(torch, args, sensors):
    device = torch.device("cuda", args.device)
    torch.cuda.set_device(device)
    generator = torch.Generator(device=device)
    generator.manual_seed(0)
    s = args.size
    a = torch.randn(s, s, device=device, dtype=torch.bfloat16, generator=generator)
    b = torch.randn(s, s, device=device, dtype=torch.bfloat16, generator=generator)
    c = torch.empty(s, s, device=device, dtype=torch.bfloat16)
    flops = 2.0 * s * s * s
    # Calls per window from a short calibration at whatever clock the GPU starts.
    for _ in range(3):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(10):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - started) / 10
    calls = max(1, int(args.window / per_call))
    rows = []
    begin = time.perf_counter()
    print(f"{'t_s':>7} {'TFLOP/s':>8} {'SM MHz':>7} {'W':>6} {'C':>4} reasons")
    while time.perf_counter() - begin < args.seconds:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            torch.matmul(a, b, out=c)
        end.record()
        # Read the sensors while the window's work is still running.
        reading = sensors.read()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        t = time.perf_counter() - begin
        tflops = calls * flops / seconds / 1e12
        rows.append((f"{t:.2f}", f"{tflops:.1f}") + reading)
        print(f"{t:>7.2f} {tflops:>8.1f} {reading[0]:>7} {reading[2]:>6} {reading[3]:>4} {reading[4]}",
              flush=True)
    return rows


def summary(rows, static):
    tflops = [float(r[1]) for r in rows]
    half = rows[len(rows) // 2:]
    late = common.median([float(r[1]) for r in half])
    lines = [f"first window {tflops[0]:.1f} TFLOP/s; median of the last {len(half)} windows "
             f"{late:.1f} TFLOP/s ({late / tflops[0]:.3f} of the first)"]
    clocks = [float(r[2]) for r in half if r[2]]
    max_clock = dict(static).get("max_sm_clock_mhz")
    if clocks:
        clock = common.median(clocks)
        line = f"median SM clock of the last {len(clocks)} windows {clock:.0f} MHz"
        if max_clock:
            line += f" ({clock / float(max_clock):.3f} of the maximum {float(max_clock):.0f} MHz)"
        lines.append(line)
    power = [float(r[4]) for r in half if r[4]]
    if power:
        lines.append(f"median power of the last {len(power)} windows {common.median(power):.0f} W")
    return lines


def main(argv=None):
    args = parse_args(argv)
    torch = common.import_torch(PROG)
    common.require_cuda(torch)
    env = common.environment(torch, args.device)
    _, output = common.hardware_and_output(args, "sustained_clock.csv",
                                           torch.cuda.get_device_name(args.device))
    sensors = Sensors(args.device)
    static = sensors.static()
    idle = sensors.read()
    rows = run_load(torch, args, sensors)
    notes = [f"load: {args.size}^3 bf16 torch.matmul back to back for {args.seconds:g} s in "
             f"windows of {args.window:g} s",
             f"idle before the load: SM {idle[0]} MHz, memory {idle[1]} MHz, {idle[2]} W, "
             f"{idle[3]} C"]
    notes += [f"{k}: {v}" for k, v in static]
    notes += summary(rows, static)
    for line in notes[-3:]:
        print(line)
    comments = common.comment_lines(
        "clustersim scripts/microbench/sustained_clock.py: GEMM rate and clocks under a long "
        "load", env, notes)
    common.write_measurements(output, comments, HEADER, rows)
    return 0


if __name__ == "__main__":
    sys.exit(common.run_main(PROG, main))
