// Running an external program (gnuplot, chromium, sbatch, python3) with its output captured: the one place
// the project starts child processes that it waits for.
//
//   ASSIGN_OR_RETURN(core::ProgramResult r, core::RunProgram({"gnuplot", "figure.gp"}, "runs/fig1"));
//   if (r.exit_code != 0) ... r.output holds its stdout and stderr.
#ifndef MIMETIC_CORE_SUBPROCESS_H_
#define MIMETIC_CORE_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mimetic::core {

struct ProgramResult {
  int exit_code = 0;   // the exit status, or 128 + signal number when killed by a signal
  std::string output;  // stdout and stderr interleaved
};

// Runs `argv` (argv[0] looked up on PATH unless it holds a '/') in the directory `cwd` with stdin from
// /dev/null, capturing stdout and stderr. FailedPrecondition naming the program and `install_hint` (e.g.
// "Debian: gnuplot-nox") when it is not found; the errno's error when it cannot start.
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv, const std::string& cwd = ".",
                                         const std::string& install_hint = "");

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_SUBPROCESS_H_
