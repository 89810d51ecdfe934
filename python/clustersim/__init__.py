"""clustersim from Python: the simulator's commands as functions.

    import sys; sys.path.insert(0, "build/python")   # or PYTHONPATH=build/python
    import clustersim
    step = clustersim.run("scenarios/llama3_8b_fsdp_8xh100.yaml", workload__seq_len=4096)
    step["tokens_per_s_per_gpu"]

Each function runs the command of the same name inside this process, the
very code of the `clustersim` binary (no subprocess), and returns what the
command writes as data:

* run, replay, campaign: a Result, a dict with the keys of the command's
  --json output (campaign's trials also as Result.trials);
* sweep, collective, validate of training runs: a Table, a list of one dict
  per CSV row of the command's CSV (the same bytes as Table.csv), and
  Table.frame() the same CSV as a pandas DataFrame;
* calibrate: a Result with the fitted profile's YAML text under "profile".

Every result keeps the command's text report as `.report`.

A scenario is a path or a dict (written as it is, with a relative
`hardware` path resolved against `directory`, the current directory unless
given; hardware_profile("h100") names a shipped one). Overrides, validated
like the file, come as a dict {"workload.seq_len": 4096} or as keyword
arguments with "__" for the dots (workload__seq_len=4096); values are
written as YAML (True -> true, lists and dicts as flow sequences/maps).

Bad input raises ConfigError, carrying every diagnostic (file, line, column,
key, expected, found); a mistake in the arguments raises UsageError; a step
that could not be simulated (out of memory, a deadlocked replay) raises
SimulationError. The GIL is released while a command runs.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from clustersim import _core

__all__ = [
    "ConfigError", "Diagnostic", "Error", "Result", "SimulationError", "Table", "UsageError",
    "calibrate", "campaign", "cli", "collective", "hardware_profile", "replay", "run", "sweep",
    "validate", "version",
]

version: str = _core.version

# The repository this package was built from, with its shipped hardware
# profiles and scenarios (_paths.py is written by python/CMakeLists.txt).
try:
    from clustersim._paths import SOURCE_DIR as _SOURCE_DIR
except ImportError:  # run from the source tree
    _SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


# ---- errors ----

@dataclass(frozen=True)
class Diagnostic:
    """One problem with the input: where it is and what was expected and found."""

    file: str  # a path, or "--set KEY=VALUE" for an override
    line: int  # 1-based; 0 when the input has no lines
    column: int  # 1-based; 0 when unknown
    key: str  # "workload.seq_len"; empty when the file itself is the problem
    message: str  # "expected a positive integer, found 'x'"
    expected: Optional[str]  # "a positive integer", when the message says
    found: Optional[str]  # "'x'", when the message says
    # The key is not in the input and its default is what failed: file, line
    # and column then locate the section that would hold it.
    defaulted: bool = False

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        key = self.key + (" (not set: its default)" if self.defaulted else "")
        return f"{where}: error: {key + ': ' if key else ''}{self.message}"


class Error(Exception):
    """A command that did not succeed: its exit code and what it printed."""

    def __init__(self, message: str, code: int, stdout: str, stderr: str):
        super().__init__(message)
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


class ConfigError(Error, ValueError):
    """Bad input (exit 1): `diagnostics` lists every problem found; file, line,
    column, key, expected and found are those of the first."""

    def __init__(self, diagnostics: Sequence[Diagnostic], code: int, stdout: str, stderr: str):
        # The message is the command's own (control characters of the input
        # escaped); the diagnostics keep the input's text as it was.
        super().__init__(stderr.strip() or "\n".join(str(d) for d in diagnostics), code, stdout,
                         stderr)
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0]
        self.file, self.line, self.column = first.file, first.line, first.column
        self.key, self.expected, self.found = first.key, first.expected, first.found


class UsageError(Error, ValueError):
    """The arguments of the command were wrong (exit 2)."""


class SimulationError(Error, RuntimeError):
    """The input was read but the command failed (exit 1): a step that does not
    fit in memory without allow_oom, a deadlocked replay, a failed check."""


def _split_message(message: str) -> tuple[Optional[str], Optional[str]]:
    # Messages say "expected X, found Y" (config/config_error.h); the last
    # ", found " ends what was expected.
    start = message.find("expected ")
    if start < 0:
        return None, None
    rest = message[start + len("expected "):]
    cut = rest.rfind(", found ")
    if cut < 0:
        return rest, None
    return rest[:cut], rest[cut + len(", found "):]


def _strip_progress(stderr: str) -> str:
    # Progress lines ("\rclustersim run: ...") are written for terminals only;
    # the captured stream may hold them when Python's stderr is one.
    lines = []
    for line in stderr.split("\n"):
        if "\r" in line:
            line = line.rsplit("\r", 1)[1]
        lines.append(line)
    return "\n".join(lines)


# ---- the command ----

@dataclass(frozen=True)
class Completed:
    """What `clustersim ARGS` returned and printed."""

    code: int
    stdout: str
    stderr: str


def cli(*args: str, check: bool = True) -> Completed:
    """Runs `clustersim ARGS...` in this process, as the binary does.

    With check (the default) a failure raises ConfigError, UsageError or
    SimulationError; without it the exit code is returned as it is."""
    code, out, err, diagnostics = _core.call([os.fspath(a) for a in args])
    err = _strip_progress(err)
    if check and code != 0:
        if code == 2:
            raise UsageError(err.strip(), code, out, err)
        if diagnostics:
            located = [Diagnostic(f, line, col, key, msg, *_split_message(msg), defaulted)
                       for (f, line, col, key, msg, defaulted) in diagnostics]
            raise ConfigError(located, code, out, err)
        raise SimulationError(err.strip() or out.strip(), code, out, err)
    return Completed(code, out, err)


def _is_bare_profile_name(value: str) -> bool:
    """As a scenario's `hardware` key reads it: no folder and no .yaml/.yml
    suffix means a shipped profile (hardware/shipped_profiles.h)."""
    return bool(value) and "/" not in value and not value.endswith((".yaml", ".yml"))


def hardware_profile(name: str) -> str:
    """The path of a shipped hardware profile: hardware_profile("h100")."""
    path = os.path.join(_SOURCE_DIR, "scenarios", "hardware", name + ".yaml")
    if not os.path.isfile(path):
        shipped = sorted(f[:-5] for f in os.listdir(os.path.dirname(path)) if f.endswith(".yaml"))
        raise ValueError(f"no shipped hardware profile '{name}'; expected one of: "
                         + ", ".join(shipped))
    return path


# ---- results ----

class Result(dict):
    """A command's --json output as a dict; `.report` is its text report."""

    report: str = ""


_INT = re.compile(r"-?[0-9]+")


def _cell(text: str) -> Any:
    if text == "":
        return None
    if _INT.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


class Table(list):
    """One dict per row of a command's CSV (numbers as int or float, empty
    cells as None); `.csv` is the CSV text, `.columns` its header and
    `.report` the command's text report."""

    def __init__(self, csv_text: str, report: str = ""):
        reader = csv.reader(io.StringIO(csv_text))
        rows = list(reader)
        self.columns: list[str] = rows[0] if rows else []
        super().__init__({k: _cell(v) for k, v in zip(self.columns, row)} for row in rows[1:])
        self.csv = csv_text
        self.report = report

    def frame(self):
        """The CSV as a pandas DataFrame (pandas.read_csv of the same bytes)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the machine
            raise ImportError("Table.frame() needs pandas (Debian: apt-get install "
                              "python3-pandas)") from e
        if not self.csv:
            return pandas.DataFrame()  # a command that wrote no table (validate of kernels)
        return pandas.read_csv(io.StringIO(self.csv))


# ---- arguments ----

def _yaml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return str(value)


def _override_args(overrides: Optional[Mapping[str, Any]], keys: Mapping[str, Any]) -> list[str]:
    args: list[str] = []
    merged: dict[str, Any] = dict(overrides or {})
    for name, value in keys.items():
        merged[name.replace("__", ".")] = value
    for key, value in merged.items():
        args += ["--set", f"{key}={_yaml_value(value)}"]
    return args


class _Scratch:
    """A temporary directory for the files a command writes (and a dict
    scenario), removed afterwards."""

    def __enter__(self) -> "_Scratch":
        self._dir = tempfile.TemporaryDirectory(prefix="clustersim_")
        return self

    def __exit__(self, *exc) -> None:
        self._dir.cleanup()

    def path(self, name: str) -> str:
        return os.path.join(self._dir.name, name)

    def read(self, name: str) -> str:
        with open(self.path(name), encoding="utf-8") as f:
            return f.read()

    def scenario(self, scenario: Scenario, directory: Optional[str]) -> str:
        if not isinstance(scenario, Mapping):
            return os.fspath(scenario)
        data = dict(scenario)
        hw = data.get("hardware")
        # A bare name ("h100") is a shipped profile wherever the file is; a
        # relative path is the caller's, not the temporary folder's.
        if isinstance(hw, str) and not os.path.isabs(hw) and not _is_bare_profile_name(hw):
            data["hardware"] = os.path.abspath(os.path.join(directory or os.getcwd(), hw))
        path = self.path("scenario.yaml")
        with open(path, "w", encoding="utf-8") as f:
            # JSON is YAML; one key per line, so that errors point at a line.
            json.dump(data, f, indent=2)
            f.write("\n")
        return path


def _option_args(options: Mapping[str, Any]) -> list[str]:
    args: list[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def _json_command(command: str, scenario: Scenario, overrides, keys, options,
                  directory: Optional[str], positionals: Sequence[str] = ()) -> Result:
    with _Scratch() as s:
        args = [command, s.scenario(scenario, directory), *positionals, "--json", s.path("out.json")]
        done = cli(*args, *_option_args(options), *_override_args(overrides, keys))
        result = Result(json.loads(s.read("out.json")))
    result.report = done.stdout
    return result


# ---- the commands ----

def run(scenario: Scenario, overrides: Optional[Mapping[str, Any]] = None, *,
        trace: Optional[str] = None, trace_ranks: Optional[str] = None,
        trace_format: Optional[str] = None, allow_oom: bool = False,
        engine_stats: bool = False,
        max_tasks_per_rank: Optional[int] = None, max_events: Optional[int] = None,
        directory: Optional[str] = None, **keys: Any) -> Result:
    """One training step (`clustersim run`): the --json keys (step_time_s,
    tokens_per_s_per_gpu, breakdown, memory, ...; engine_stats with
    engine_stats=True)."""
    return _json_command("run", scenario, overrides, keys,
                         {"trace": trace, "trace_ranks": trace_ranks,
                          "trace_format": trace_format, "allow_oom": allow_oom,
                          "engine_stats": engine_stats,
                          "max_tasks_per_rank": max_tasks_per_rank, "max_events": max_events},
                         directory)


def replay(scenario: Scenario, traces: str, overrides: Optional[Mapping[str, Any]] = None, *,
           comm_groups: Optional[str] = None, ranks: Optional[int] = None,
           scale_to: Optional[int] = None, recompute_compute: bool = False,
           tokens_per_gpu: Optional[int] = None, trace_out: Optional[str] = None,
           trace_ranks: Optional[str] = None, trace_format: Optional[str] = None,
           engine_stats: bool = False,
           max_events: Optional[int] = None, directory: Optional[str] = None,
           **keys: Any) -> Result:
    """Replays Chakra ET traces TRACES.<rank>.et (`clustersim replay --trace`)."""
    return _json_command("replay", scenario, overrides, keys,
                         {"trace": traces, "comm_groups": comm_groups, "ranks": ranks,
                          "scale_to": scale_to, "recompute_compute": recompute_compute,
                          "tokens_per_gpu": tokens_per_gpu, "trace_out": trace_out,
                          "trace_ranks": trace_ranks, "trace_format": trace_format,
                          "engine_stats": engine_stats, "max_events": max_events},
                         directory)


def campaign(scenario: Scenario, overrides: Optional[Mapping[str, Any]] = None, *,
             threads: Optional[int] = None, optimize_checkpoint_interval: bool = False,
             step_cache: Optional[str] = None, max_tasks_per_rank: Optional[int] = None,
             max_events: Optional[int] = None, directory: Optional[str] = None,
             **keys: Any) -> Result:
    """A training campaign under failures (`clustersim campaign`): the --json
    keys, and `.trials`, a Table of one row per Monte Carlo trial."""
    with _Scratch() as s:
        args = ["campaign", s.scenario(scenario, directory),
                "--json", s.path("out.json"), "--csv", s.path("trials.csv")]
        options = {"threads": threads, "optimize_checkpoint_interval": optimize_checkpoint_interval,
                   "step_cache": step_cache, "max_tasks_per_rank": max_tasks_per_rank,
                   "max_events": max_events}
        done = cli(*args, *_option_args(options), *_override_args(overrides, keys))
        result = Result(json.loads(s.read("out.json")))
        result.trials = Table(s.read("trials.csv"))
    result.report = done.stdout
    return result


def _grid_args(grid) -> list[str]:
    if grid is None:
        return []
    if isinstance(grid, Mapping):
        items = [f"{k}={','.join(_yaml_value(v) for v in vs) if isinstance(vs, (list, tuple)) else vs}"
                 for k, vs in grid.items()]
    elif isinstance(grid, str):
        items = [grid]
    else:
        items = list(grid)
    args: list[str] = []
    for item in items:
        args += ["--grid", item]
    return args


def sweep(scenario: Scenario, grid: Union[None, str, Iterable[str], Mapping[str, Any]] = None,
          overrides: Optional[Mapping[str, Any]] = None, *, threads: Optional[int] = None,
          campaign: bool = False, trials: Optional[int] = None, fitting_only: bool = False,
          max_tasks_per_rank: Optional[int] = None, max_events: Optional[int] = None,
          directory: Optional[str] = None, **keys: Any) -> Table:
    """The step at every point of a grid (`clustersim sweep`): one row per
    point in grid order, the columns of the CLI's CSV. `grid` is what --grid
    takes ("KEY=V1,V2", a list of them, or {"KEY": [V1, V2]} / {"KEY":
    "divisors"}); without it the scenario's sweep.axes. The same threads
    (OpenMP) and the same bytes as the CLI."""
    with _Scratch() as s:
        args = ["sweep", s.scenario(scenario, directory), "-o", s.path("sweep.csv"),
                "--no-wall-time"]
        options = {"threads": threads, "campaign": campaign, "trials": trials,
                   "fitting_only": fitting_only, "max_tasks_per_rank": max_tasks_per_rank,
                   "max_events": max_events}
        done = cli(*args, *_grid_args(grid), *_option_args(options),
                   *_override_args(overrides, keys))
        return Table(s.read("sweep.csv"), done.stdout)


def collective(scenario: Scenario, overrides: Optional[Mapping[str, Any]] = None, *,
               op: Optional[str] = None, gpus: Optional[int] = None,
               stride: Optional[int] = None, concurrent: Optional[int] = None,
               min_bytes: Optional[str] = None, max_bytes: Optional[str] = None,
               step_factor: Optional[float] = None, algo: Optional[str] = None,
               proto: Optional[str] = None, directory: Optional[str] = None,
               **keys: Any) -> Table:
    """A collective's predicted time and bandwidth over a range of sizes
    (`clustersim collective`, nccl-tests layout): one row per size."""
    with _Scratch() as s:
        args = ["collective", s.scenario(scenario, directory), "--csv", s.path("out.csv")]
        options = {"op": op, "gpus": gpus, "stride": stride, "concurrent": concurrent,
                   "min_bytes": min_bytes, "max_bytes": max_bytes, "step_factor": step_factor,
                   "algo": algo, "proto": proto}
        done = cli(*args, *_option_args(options), *_override_args(overrides, keys))
        return Table(s.read("out.csv"), done.stdout)


def calibrate(measurements: Union[str, Sequence[str]], *, base: Optional[str] = None,
              name: Optional[str] = None, hardware: Optional[str] = None,
              attention_kernel: Optional[str] = None, min_bytes: Optional[str] = None,
              op: Optional[str] = None, folds: Optional[int] = None,
              holdout: Optional[float] = None,
              overrides: Optional[Mapping[str, Any]] = None, **keys: Any) -> Result:
    """Fits a hardware profile to measurements (`clustersim calibrate`):
    {"profile": the fitted profile's YAML text}, the fit's report as .report."""
    files = [measurements] if isinstance(measurements, (str, os.PathLike)) else list(measurements)
    with _Scratch() as s:
        options = {"base": base, "name": name, "hardware": hardware,
                   "attention_kernel": attention_kernel, "min_bytes": min_bytes, "op": op,
                   "folds": folds, "holdout": holdout}
        done = cli("calibrate", *files, "-o", s.path("profile.yaml"), *_option_args(options),
                   *_override_args(overrides, keys))
        result = Result(profile=s.read("profile.yaml"))
    result.report = done.stdout
    return result


def validate(target: Union[str, Scenario], measurements: Sequence[str] = (),
             overrides: Optional[Mapping[str, Any]] = None, *,
             folds: Optional[int] = None, max_error: Optional[float] = None,
             min_bytes: Optional[str] = None, op: Optional[str] = None,
             hardware: Optional[str] = None, attention_kernel: Optional[str] = None,
             rank: Optional[int] = None, warmup_steps: Optional[int] = None,
             directory: Optional[str] = None, **keys: Any) -> Table:
    """Predictions against measurements (`clustersim validate`).

    validate(RUNS.csv) compares end-to-end training runs: a Table of one row
    per run (measured, predicted, error, fitted or held out; with folds, the
    cross-validated prediction too). validate(scenario, [files]) compares
    kernels, collectives or Kineto traces: a Table without rows, whose
    .report is the command's per-case report."""
    with _Scratch() as s:
        first = s.scenario(target, directory)
        runs = not isinstance(target, Mapping) and _core.is_training_runs_file(first)
        args = ["validate", first, *[os.fspath(m) for m in measurements]]
        if runs:
            args += ["--csv", s.path("cases.csv")]
        options = {"folds": folds, "max_error": max_error, "min_bytes": min_bytes, "op": op,
                   "hardware": hardware, "attention_kernel": attention_kernel, "rank": rank,
                   "warmup_steps": warmup_steps}
        done = cli(*args, *_option_args(options), *_override_args(overrides, keys))
        return Table(s.read("cases.csv") if runs else "", done.stdout)
