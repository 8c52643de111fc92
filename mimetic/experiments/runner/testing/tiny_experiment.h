// The one small experiment the tests build on (runner/testing/tiny.textproto: a 2-layer width-16
// Mamba 2, default vs mimetic, copy of 2..6 tokens; a few seconds of training), with --set overrides.
//
//   Experiment e = TinyExperiment({"train.steps=12", "seeds=[1, 2]"});
//   std::ostringstream sink;
//   RunExperiment(e, QuietRunOptions(&sink));
#ifndef MIMETIC_EXPERIMENTS_RUNNER_TESTING_TINY_EXPERIMENT_H_
#define MIMETIC_EXPERIMENTS_RUNNER_TESTING_TINY_EXPERIMENT_H_

#include <ostream>
#include <string>
#include <vector>

#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/runner/runner.h"

namespace mimetic::experiments {

// The tiny experiment from the test's runfiles with `overrides` applied ("field=value", as after
// --set). Aborts the test binary, naming the problem, when the file or an override is bad.
Experiment TinyExperiment(const std::vector<std::string>& overrides = {});

// The tests' in-process run options: progress to `sink` (to read or to silence it), no plots.
RunOptions QuietRunOptions(std::ostream* sink);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUNNER_TESTING_TINY_EXPERIMENT_H_
