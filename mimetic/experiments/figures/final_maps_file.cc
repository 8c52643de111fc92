#include "mimetic/experiments/figures/final_maps_file.h"

#include <cmath>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

namespace fs = std::filesystem;

// Longer than any example a figure maps (its rows are a few hundred tokens); a larger length is damage.
constexpr int64_t kMaxMapLength = 1 << 16;

absl::Status WriteFinalMaps(const std::string& point_dir, const FinalMaps& maps, int64_t checkpoint_step) {
  FinalMapsRecord record;
  record.set_paste_start(maps.paste_start);
  record.set_length(maps.length);
  record.set_checkpoint_step(checkpoint_step);
  for (const models::LayerMap& layer : maps.maps) {
    LayerMapRecord* r = record.add_layers();
    r->set_length(layer.length);
    r->mutable_map()->Add(layer.map.begin(), layer.map.end());
    r->mutable_mask()->Add(layer.mask.begin(), layer.mask.end());
  }
  std::string bytes;
  if (!record.SerializeToString(&bytes)) return absl::InternalError("final maps: cannot serialise");
  return core::WriteTextFile((fs::path(point_dir) / kFinalMapsFile).string(), bytes);
}

absl::StatusOr<FinalMaps> ReadFinalMaps(const std::string& point_dir) {
  const std::string path = (fs::path(point_dir) / kFinalMapsFile).string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  ASSIGN_OR_RETURN(std::string bytes, core::ReadTextFile(path));
  FinalMapsRecord record;
  if (!record.ParseFromString(bytes)) {
    return absl::DataLossError(absl::StrCat(path, ": not a FinalMapsRecord (damaged or another file)"));
  }
  // Values a map computation could have made (figure_common.cc ComputeMaps): a positive example length,
  // a paste start inside the mapped row, a step, and finite map and mask entries.
  if (record.length() <= 0 || record.length() > kMaxMapLength) {
    return absl::DataLossError(absl::StrCat(path, ": length is ", record.length(), "; expected 1..",
                                            kMaxMapLength));
  }
  // The paste starts inside the mapped row (ComputeMaps cuts the row two tokens after the last answer).
  for (const LayerMapRecord& r : record.layers()) {
    if (record.paste_start() < 0 || record.paste_start() >= r.length()) {
      return absl::DataLossError(absl::StrCat(path, ": paste_start is ", record.paste_start(),
                                              "; expected 0..", r.length() - 1, " (inside the mapped row)"));
    }
  }
  if (record.checkpoint_step() < 0) {
    return absl::DataLossError(
        absl::StrCat(path, ": checkpoint_step is ", record.checkpoint_step(), "; expected >= 0"));
  }
  FinalMaps out;
  out.paste_start = record.paste_start();
  out.length = record.length();
  for (int l = 0; l < record.layers_size(); ++l) {
    const LayerMapRecord& r = record.layers(l);
    const int64_t n = r.length() * r.length();
    if (r.length() <= 0 || r.length() > kMaxMapLength || r.map_size() != n || r.mask_size() != n) {
      return absl::DataLossError(absl::StrCat(path, ": layer ", l, " has length ", r.length(), " but ",
                                              r.map_size(), " map and ", r.mask_size(),
                                              " mask values; expected length x length"));
    }
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(r.map(i)) || !std::isfinite(r.mask(i))) {
        return absl::DataLossError(absl::StrCat(path, ": layer ", l, " entry ", i, " is ",
                                                std::isfinite(r.map(i)) ? r.mask(i) : r.map(i),
                                                "; expected a finite map and mask value"));
      }
    }
    models::LayerMap layer;
    layer.length = r.length();
    layer.map.assign(r.map().begin(), r.map().end());
    layer.mask.assign(r.mask().begin(), r.mask().end());
    out.maps.push_back(std::move(layer));
  }
  return out;
}

}  // namespace mimetic::experiments
