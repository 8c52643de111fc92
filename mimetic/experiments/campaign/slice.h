// One GPU slice of the campaign, on the device machine (tools/gpu/campaign.sh calls these through the
// `campaign` binary): before a figure item trains, PrepareRunDir makes its run directory from what the
// checkout keeps (the figure's kept results, so finished points are skipped, and the campaign's in-flight
// points, campaign/inflight/<figure>_<preset>/, so stopped points resume from their checkpoints); after
// the slice, PackRunDir copies what it made into the slice's output for `campaign_tool --merge`:
//
//   OUT/campaign/<figure>/<preset>/sweep.textproto
//   OUT/campaign/<figure>/<preset>/points/.../seed<k>/  a point finished in this slice: config.textproto,
//       result.textproto, final_maps.pb, provenance.textproto; a point in flight: config.textproto,
//       progress.textproto, provenance.textproto and its newest checkpoints/step_*.safetensors only
//
// Points that were finished before the slice are not packed (the checkout has them). Every copy is
// core/untrusted_tree.h's: the checkout and the run directory may come from anyone.
#ifndef MIMETIC_EXPERIMENTS_CAMPAIGN_SLICE_H_
#define MIMETIC_EXPERIMENTS_CAMPAIGN_SLICE_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/campaign/campaign.pb.h"
#include "mimetic/experiments/campaign/campaign_files.h"

namespace mimetic::experiments {

// Where the slice runs: the figure's preset (read from `preset_root`), the checkout (`root`), the runs
// folder (the figure binary's --output_dir) and the model code this slice trains with.
struct SliceFigure {
  std::string figure, preset;
  std::string root, preset_root, runs;
  std::string model_digest;  // tools/gpu/model_digest.sh of the binary's commit
};

// Makes <runs>/<experiment name> from the checkout's kept results and in-flight points, and returns its
// path; a run directory this slice made earlier (its marker is there) is returned as it is, so a second
// item of the same figure continues it. An in-flight point whose provenance names other model code than
// `model_digest` is left out (said on `log`): resuming it would mix two models' training; it starts afresh.
absl::StatusOr<std::string> PrepareRunDir(const SliceFigure& f, std::ostream& log);

// How many of the grid points `points` selects (runner/point_filter.h) have not finished in `run_dir`:
// campaign.sh starts an item only when its share of the estimate fits in the time left.
struct Unfinished {
  int unfinished = 0, selected = 0;
};
absl::StatusOr<Unfinished> CountUnfinished(const SliceFigure& f, const std::string& run_dir,
                                           const std::string& points);

// Copies what this slice made in the figure's run directory into <out>/<figure>/<preset>/ (see above),
// writing each packed point's provenance first (`item` is the plan's first FIGURE item of this figure and
// preset whose points match the point). What a slice sends back is kept small (docs/gpu.md, "What travels"): a
// point in flight whose newest checkpoint is larger than `limits.max_checkpoint_bytes`, or that would take
// the checkpoints packed over `limits.max_inflight_bytes` (each > 0 to apply), is left out and named in
// `skipped`; its next slice starts it afresh. Returns the number of points packed.
struct PackLimits {
  int64_t max_checkpoint_bytes = 0;  // one checkpoint
  int64_t max_inflight_bytes = 0;    // every checkpoint this call packs
};
struct PackCount {
  int finished = 0, in_flight = 0;
  int64_t checkpoint_bytes = 0;      // packed
  std::vector<std::string> skipped;  // "<point dir> (<size> bytes)"
};
absl::StatusOr<PackCount> PackRunDir(const SliceFigure& f, const CampaignPlan& plan,
                                     const PointProvenance& made, const std::string& out,
                                     const PackLimits& limits = {});

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CAMPAIGN_SLICE_H_
