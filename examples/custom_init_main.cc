// tools/bazel run //examples:custom_init [-- --set field=value ... --jobs=N --threads=N]: see
// custom_init.h. The runner's flags (run_flags.h) apply; --help lists them.
#include <iostream>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "examples/custom_init.h"
#include "mimetic/experiments/runner/run_flags.h"

int main(int argc, char** argv) {
  const std::vector<std::string> overrides = mimetic::experiments::ExtractSetFlags(&argc, argv);
  absl::SetProgramUsageMessage(
      "trains default, mimetic and orthogonal_bc init (layer index 3 of 8) on copy; see "
      "examples/custom_init.h");
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  // With --jobs > 1 the runner starts this binary again for each grid point.
  if (mimetic::experiments::IsPointMode()) return mimetic::experiments::RunPointMode();
  if (args.size() > 1) {
    std::cerr << "error: unexpected argument '" << args[1]
              << "'; expected only flags (--set field.path=value)\n";
    return 2;
  }
  absl::StatusOr<mimetic::experiments::Experiment> e = examples::CustomInitExperiment(overrides, "runs");
  if (!e.ok()) {
    std::cerr << "error: " << e.status().message() << "\n";
    return 1;
  }
  return mimetic::experiments::RunAndReport(*e);
}
