// The experiment runner:
//   tools/bazel run //mimetic/experiments:run -- CONFIG.textproto [--set field.path=value ...] [--jobs=N]
// and the targets that pass it a config (e.g. //mimetic/experiments:copy). `--help` lists the flags.
//
// Relative output directories resolve against the directory `bazel run` was started from
// (BUILD_WORKING_DIRECTORY), so runs land in the user's checkout, not in Bazel's runfiles.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/run_flags.h"
#include "mimetic/experiments/runner/runner.h"
#include "mimetic/experiments/runner/threads.h"

int main(int argc, char** argv) {
  mimetic::experiments::UseShortSpinWaits(argv);  // first: it may restart the process
  // --set repeats and its values hold commas ("seeds=[1,2]"), so it is taken out before absl parses.
  std::vector<std::string> overrides = mimetic::experiments::ExtractSetFlags(&argc, argv);
  absl::SetProgramUsageMessage(
      "trains and evaluates an experiment config (every variant, sweep point and seed).\n"
      "usage: run CONFIG.textproto [--set field.path=value ...] [--jobs=N | --launcher=slurm ...] "
      "[--aggregate]\n"
      "  e.g. --set train.steps=2000 --set seeds=[1,2,3] --set eval.lengths=[25,50]\n"
      "  --set may repeat; paths index repeated messages by position or name: --set "
      "variants[mimetic].init[0].mimetic.c=4");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (mimetic::experiments::IsPointMode()) return mimetic::experiments::RunPointMode();
  if (args.size() != 2) {
    std::cerr << "error: expected exactly one CONFIG.textproto argument (got " << args.size() - 1
              << "); see --help\n";
    return 2;
  }
  absl::StatusOr<mimetic::experiments::Experiment> e =
      mimetic::experiments::LoadExperiment(args[1], overrides);
  if (!e.ok()) {
    std::cerr << "error: " << e.status().message() << "\n";
    return 1;
  }
  return mimetic::experiments::RunAndReport(*e);
}
