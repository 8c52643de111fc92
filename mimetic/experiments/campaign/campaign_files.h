// The files the campaign keeps and moves (slice.h on the device machine, merge.h on the checkout): where a
// figure's in-flight points live in the checkout, a point's provenance record, its newest checkpoint, and
// the one way they are copied: exactly the files chosen, through core/untrusted_tree.h (nothing followed,
// nothing written outside the destination).
//
//   ASSIGN_OR_RETURN(std::vector<std::string> copied, CopyChosenFiles(run_dir, staging,
//   {"sweep.textproto"}));
#ifndef MIMETIC_EXPERIMENTS_CAMPAIGN_CAMPAIGN_FILES_H_
#define MIMETIC_EXPERIMENTS_CAMPAIGN_CAMPAIGN_FILES_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/campaign/campaign.pb.h"

namespace mimetic::experiments {

// Beside a point's result.textproto (kept results) or checkpoint (in flight): where it was trained.
inline constexpr char kProvenanceFile[] = "provenance.textproto";

// <root>/mimetic/experiments/campaign/inflight/<figure>_<preset>: the points the campaign has started and
// not finished, each with its newest checkpoint, kept in the checkout between slices.
std::string InflightPath(const std::string& root, const std::string& figure, const std::string& preset);

// The provenance.textproto in `point_dir` (NotFound without one; DataLoss naming the file when it does
// not parse).
absl::StatusOr<PointProvenance> ReadProvenance(const std::string& point_dir);
absl::Status WriteProvenance(const std::string& point_dir, const PointProvenance& p);

// The newest of a point's checkpoint names (step_<8 digits>.safetensors, zero-padded so the greatest name
// is the latest step), or "" when none is one.
std::string NewestCheckpoint(const std::vector<std::string>& names);

// The point directory of a file below a run directory ("points/default/seed1/checkpoints/step_3..." ->
// "points/default/seed1"), or "" for a file of the run directory itself.
std::string PointDirOf(const std::string& rel);

// Copies the files `rel` (paths relative to `from`, e.g. "points/default/seed1/result.textproto") into
// `to`, which must not exist, refusing a link, FIFO or device where one of them or a folder above it is
// (core/untrusted_tree.h). Files listed but absent are not copied; returns those copied.
absl::StatusOr<std::vector<std::string>> CopyChosenFiles(const std::string& from, const std::string& to,
                                                         const std::set<std::string>& rel);

// The files below `root` whose names `keep` accepts, relative to it (for choosing what to copy), refusing
// as CopyChosenFiles does. An absent root lists nothing.
absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& root,
                                                   const std::function<bool(const std::string&)>& keep);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CAMPAIGN_CAMPAIGN_FILES_H_
