#include "mimetic/experiments/runner/testing/tiny_experiment.h"

#include <cstdio>
#include <cstdlib>

#include "mimetic/core/file_util.h"
#include "mimetic/experiments/config/config.h"

namespace mimetic::experiments {

Experiment TinyExperiment(const std::vector<std::string>& overrides) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::string path = std::string(srcdir != nullptr ? srcdir : ".") +
                           "/mimetic/mimetic/experiments/runner/testing/tiny.textproto";
  absl::StatusOr<std::string> text = core::ReadTextFile(path);
  absl::StatusOr<Experiment> e = text.ok() ? ParseExperiment(*text) : text.status();
  for (const std::string& o : overrides) {
    if (!e.ok()) break;
    if (absl::Status s = ApplyOverride(o, &*e); !s.ok()) e = s;
  }
  if (!e.ok()) {
    std::fprintf(stderr, "TinyExperiment: %s\n", std::string(e.status().message()).c_str());
    std::abort();
  }
  return *e;
}

RunOptions QuietRunOptions(std::ostream* sink) {
  RunOptions o;
  o.progress = sink;
  o.plots = false;
  return o;
}

}  // namespace mimetic::experiments
