// A finished point's final attention maps as a file beside its result.textproto (final_maps.pb): map
// claims need the final checkpoint, which a figure's committed results do not keep (megabytes per
// point), so a figure that computes maps from a checkpoint also writes them here and reads them back
// when the checkpoint is gone. Binary proto of doubles: a claim judged again from the file gives the
// same bits as from the checkpoint.
//
//   RETURN_IF_ERROR(WriteFinalMaps(point_dir, maps, /*checkpoint_step=*/1200));
//   ASSIGN_OR_RETURN(FinalMaps again, ReadFinalMaps(point_dir));  // NotFound when never written
#ifndef MIMETIC_EXPERIMENTS_FIGURES_FINAL_MAPS_FILE_H_
#define MIMETIC_EXPERIMENTS_FIGURES_FINAL_MAPS_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "mimetic/experiments/figures/figure.h"

namespace mimetic::experiments {

inline constexpr char kFinalMapsFile[] = "final_maps.pb";

// Writes <point_dir>/final_maps.pb atomically.
absl::Status WriteFinalMaps(const std::string& point_dir, const FinalMaps& maps, int64_t checkpoint_step);

// Reads <point_dir>/final_maps.pb: NotFound when absent; DataLoss naming the file when it does not parse
// or a layer's map or mask is not length x length.
absl::StatusOr<FinalMaps> ReadFinalMaps(const std::string& point_dir);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURES_FINAL_MAPS_FILE_H_
