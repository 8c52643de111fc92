#include "examples/custom_init.h"

#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/sweep.h"

namespace examples {

absl::StatusOr<mimetic::experiments::Experiment> CustomInitExperiment(
    const std::vector<std::string>& overrides, const std::string& output_dir) {
  ASSIGN_OR_RETURN(mimetic::experiments::Experiment e,
                   mimetic::experiments::ParseExperiment(kCustomInitConfig));
  e.set_output_dir(output_dir);
  for (const std::string& o : overrides) RETURN_IF_ERROR(mimetic::experiments::ApplyOverride(o, &e));
  // Every point checked before anything trains: an unknown transform name, an unknown parameter or
  // a value out of range stops here with the list of names or the valid range.
  RETURN_IF_ERROR(mimetic::experiments::ExpandGrid(e).status());
  return e;
}

absl::StatusOr<mimetic::experiments::ExperimentSummary> RunCustomInit(
    const mimetic::experiments::Experiment& e, std::ostream* progress) {
  mimetic::experiments::RunOptions options;
  options.progress = progress;
  options.plots = false;  // the table is the point here; plots need gnuplot
  return mimetic::experiments::RunExperiment(e, options);
}

}  // namespace examples
