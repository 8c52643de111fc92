// The campaign's merge, on the machine with the checkout: what a GPU slice returned (slice.h's
// OUT/campaign/<figure>/<preset>/, or a .tgz of OUT) joins the figures' kept results.
//
//   tools/bazel run //mimetic/experiments:campaign_tool -- --merge=/path/to/OUT
//
// For every returned figure and preset, before anything in the checkout changes, each returned point is
// checked and the merge refuses, naming the point and both values:
//   - a point directory that is not a grid point of the checkout's preset;
//   - a point trained from another config: its config.textproto's trained state (point_run.h TrainedState,
//     device aside) differs from the checkout's point experiment;
//   - a point without provenance, or trained with other model code: its provenance's model_digest is not
//     the checkout's (tools/gpu/model_digest.sh);
//   - a finished point whose result could not have been made by its point (runner/point_result_check.h).
// Then, figure by figure: the new finished points (result.textproto, final_maps.pb, provenance.textproto)
// join the kept results, the figure is judged on the points it has (as --from_results; a partial grid's
// claims.md says so and its verdicts are provisional) and saved with run.md; the in-flight points replace
// the checkout's campaign/inflight/<figure>_<preset>/ (removed once none is in flight); and the README's
// campaign coverage section is written again (readme_coverage.h). Every copy is core/untrusted_tree.h's;
// a .tgz is unpacked into a temporary folder first, never into the checkout.
#ifndef MIMETIC_EXPERIMENTS_CAMPAIGN_MERGE_H_
#define MIMETIC_EXPERIMENTS_CAMPAIGN_MERGE_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mimetic::experiments {

struct MergeOptions {
  std::string root;             // the checkout whose kept results, in-flight points and README change
  std::string preset_root;      // where the presets are read (the checkout, or the binary's runfiles)
  std::string model_digest;     // the checkout's model code (tools/gpu/model_digest.sh)
  std::string command;          // the command as typed, for run.md
  std::ostream* log = nullptr;  // progress (stderr when null)
};

struct MergedFigure {
  std::string figure, preset;
  int new_finished = 0, in_flight = 0;  // points added to the kept results; points now in flight
  int kept = 0, grid = 0;               // finished points kept after the merge, of the grid
  std::string tallies;                  // the verdicts as judged on them (TalliesLine)
};

// Merges the slice output at `returned` (a folder holding campaign/, or a .tgz of one) into the checkout.
absl::StatusOr<std::vector<MergedFigure>> MergeCampaign(const std::string& returned,
                                                        const MergeOptions& options);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CAMPAIGN_MERGE_H_
