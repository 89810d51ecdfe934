// clustersim._core: the clustersim command, run inside the Python process.
//
// One entry point, call(args), runs `clustersim ARGS...` exactly as the CLI
// does (cli/commands.h: the same parsing, the same simulation, the same
// output bytes) and hands back its exit code, stdout, stderr and, for bad
// input, the diagnostics of the ConfigError as tuples. The Python layer
// (python/clustersim/__init__.py) turns those into results and exceptions;
// keeping the binding this thin is what makes Python's figures the CLI's.
//
// The GIL is released while the command runs, so other Python threads go on
// during a long simulation; the command's own threads (OpenMP in sweep) are
// the CLI's. Thread safety: calls from several Python threads run one after
// another (a mutex), as the CLI was written for one command per process.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "config/config_error.h"
#include "scenario/training_runs.h"

namespace py = pybind11;

namespace {

// (file, line, column, key, message, defaulted) of one diagnostic; line and
// column 0 when unknown; defaulted: the rejected value is the key's default.
using DiagnosticTuple = std::tuple<std::string, int, int, std::string, std::string, bool>;

std::tuple<int, std::string, std::string, std::vector<DiagnosticTuple>> call(
    const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  std::vector<clustersim::sim::Diagnostic> diagnostics;
  int code = 0;
  {
    py::gil_scoped_release release;
    static std::mutex one_command_at_a_time;
    const std::lock_guard<std::mutex> lock(one_command_at_a_time);
    code = clustersim::cli::run_clustersim(args, out, err, &diagnostics);
  }
  std::vector<DiagnosticTuple> located;
  for (const clustersim::sim::Diagnostic& d : diagnostics) {
    located.emplace_back(d.where.file, d.where.line, d.where.column, d.key_path, d.message,
                         d.where.defaulted);
  }
  return {code, out.str(), err.str(), std::move(located)};
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "clustersim's command, run in-process (use the clustersim package, not this).";
  m.def("call", &call, py::arg("args"),
        "Run `clustersim ARGS...`; returns (exit code, stdout, stderr, diagnostics).");
  m.def("is_training_runs_file", &clustersim::cli::is_training_runs_file, py::arg("path"),
        "Whether `validate` reads the file as training runs (by its header).");
  m.attr("version") = CLUSTERSIM_VERSION;
}
