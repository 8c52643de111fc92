// The experiment runner. `tools/bazel run //mimetic/experiments:run -- CONFIG [--set field=value ...]`,
// and the per-figure targets (e.g. //mimetic/experiments:copy) which pass their config file.
//
// Relative output directories resolve against the directory `bazel run` was started from
// (BUILD_WORKING_DIRECTORY), so runs land in the user's checkout, not in Bazel's runfiles.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "mimetic/experiments/config.h"
#include "mimetic/experiments/runner.h"

namespace {

int Usage(const char* argv0) {
  std::cerr << "usage: " << argv0 << " CONFIG.textproto [--set field.path=value ...]\n"
            << "  e.g. --set train.steps=2000 --set seeds=[1,2,3] --set eval.lengths=[25,50]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  std::vector<std::string> overrides;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Usage(argv[0]);
    if (arg == "--set") {
      if (i + 1 >= argc) return Usage(argv[0]);
      overrides.push_back(argv[++i]);
    } else if (absl::StartsWith(arg, "--set=")) {
      overrides.push_back(arg.substr(6));
    } else if (config.empty()) {
      config = arg;
    } else {
      std::cerr << "unexpected argument '" << arg << "'\n";
      return Usage(argv[0]);
    }
  }
  if (config.empty()) return Usage(argv[0]);
  absl::StatusOr<mimetic::experiments::Experiment> e = mimetic::experiments::LoadExperiment(config, overrides);
  if (!e.ok()) {
    std::cerr << "error: " << e.status().message() << "\n";
    return 1;
  }
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      cwd != nullptr && !e->output_dir().empty() && e->output_dir()[0] != '/') {
    e->set_output_dir(std::string(cwd) + "/" + e->output_dir());
  }
  std::cerr << "experiment " << e->name() << ": " << e->variants_size() << " variants x " << e->seeds_size()
            << " seeds, " << e->train().steps() << " steps each; outputs in " << e->output_dir() << "/" << e->name()
            << "\n";
  absl::StatusOr<mimetic::experiments::ExperimentSummary> s =
      mimetic::experiments::RunExperiment(*e, mimetic::experiments::RunOptions{});
  if (!s.ok()) {
    std::cerr << "error: " << s.status().message() << "\n(earlier checkpoints and logs are kept in " << e->output_dir()
              << "/" << e->name() << ")\n";
    return 1;
  }
  std::cout << "\n" << e->name() << ": final accuracy (mean ± std over seeds)\n\n" << s->table << "\n";
  std::cout << "run directory: " << s->run_dir << " (summary.md, summary.csv, metrics.jsonl, tb/, plots/, checkpoints/)\n";
  return 0;
}
