// The PNG plots of a run directory: accuracy/loss curves (drawn by gnuplot) and heatmaps of attention
// maps and average masks (written directly with libpng, no external program).
//
//   RETURN_IF_ERROR(PlotCurves("run/plots/accuracy.png", "Copy, L=64", "step", "accuracy",
//                              {{"default", steps, acc_default}, {"mimetic", steps, acc_mimetic}}));
//   RETURN_IF_ERROR(WriteHeatmapPng("run/plots/m.png", values, rows, cols, /*scale=*/4, Colormap::kViridis));
//   ASSIGN_OR_RETURN(std::vector<models::LayerMap> maps, models::ComputeAllLayerMaps(params, spec, tokens,
//   0)); RETURN_IF_ERROR(WriteAttentionMapPngs("run/plots", "mimetic", maps));
//     // run/plots/mimetic_layer0_map.png, run/plots/mimetic_layer0_mask.png, ...
//
// Every function creates the output's parent directories when missing.
#ifndef MIMETIC_EXPERIMENTS_PLOTS_H_
#define MIMETIC_EXPERIMENTS_PLOTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mimetic/experiments/render/gnuplot.h"  // IWYU pragma: export (ProgramOnPath for tests)
#include "mimetic/models/attention_maps.h"

namespace mimetic::experiments {

// One curve: points (xs[i], ys[i]); non-finite ys are gaps.
struct Series {
  std::string name;
  std::vector<double> xs;
  std::vector<double> ys;
};

struct PlotOptions {
  int width = 800;  // pixels
  int height = 500;
  bool log_x = false;
  bool log_y = false;
  std::optional<double> y_min, y_max;  // gnuplot's autoscale for an unset end
  std::string gnuplot = "gnuplot";     // the program, looked up on PATH
};

// Writes `<stem>.gp` (a gnuplot script) and `<stem>.dat` (the series, one block each) next to `png_path`
// (stem = png_path less ".png"), then runs gnuplot on them in the PNG's directory; `gnuplot <stem>.gp`
// redraws the plot by hand later. The script uses the pngcairo terminal when gnuplot has it (it checks
// GPVAL_TERMINALS, the list `gnuplot -e "set terminal"` prints) and the libgd png terminal otherwise.
// gnuplot draws into a temporary file renamed over `png_path` on success, so a failed plot leaves an
// earlier PNG intact. Text is drawn literally (noenhanced: "seed_1" keeps its underscore).
// Errors: InvalidArgument for mismatched xs/ys, no points at all, or a bad size; FailedPrecondition
// when gnuplot is not installed; Internal with gnuplot's exit status and stderr when it fails.
absl::Status PlotCurves(const std::string& png_path, const std::string& title, const std::string& xlabel,
                        const std::string& ylabel, const std::vector<Series>& series,
                        const PlotOptions& options = {});

// Perceptually uniform maps, matplotlib's viridis and magma approximated by the 10 stops of viridisLite's
// viridis(10) and magma(10) interpolated linearly in sRGB (close to, not identical with, matplotlib's
// 256-entry tables), and plain grayscale (black to white).
enum class Colormap { kViridis, kMagma, kGrayscale };

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
};
// The colour of `t` in [0, 1] (clamped; NaN gives kMissingColor).
Rgb ColormapColor(Colormap colormap, double t);
// Cells holding NaN are drawn in this colour: white, e.g. the empty upper triangle of a causal map.
inline constexpr Rgb kMissingColor{255, 255, 255};

// The values that map to the two ends of the colormap.
struct ValueRange {
  double lo = 0, hi = 1;
};

// Writes `values` ((rows, cols), row-major; row 0 at the top) as an 8-bit RGB PNG of
// (rows * scale) x (cols * scale) pixels, each cell a scale x scale square. Colours: (v - lo) / (hi - lo)
// through `colormap`, clamped, with [lo, hi] = `range`, or the min and max of the finite values when
// unset (all cells the low colour when they are equal). +-inf clamp to the ends; NaN is kMissingColor.
// Written to a temporary file and renamed. InvalidArgument for a size mismatch, scale < 1, an empty
// grid, an image over 16384 pixels a side, or lo >= hi; the errno's or libpng's message otherwise.
absl::Status WriteHeatmapPng(const std::string& png_path, const std::vector<double>& values, int64_t rows,
                             int64_t cols, int scale, Colormap colormap = Colormap::kViridis,
                             std::optional<ValueRange> range = std::nullopt);

// For each layer i: `dir/<prefix>_layer<i>_map.png` (the map, viridis, ranged over its lower triangle)
// and `dir/<prefix>_layer<i>_mask.png` (the average mask, viridis on the fixed range [0, 1] so that
// layers compare), the upper triangle (j > i, not part of a causal map) white. Cells are drawn
// max(1, 512 / L) pixels wide, so an image is about 512 pixels a side. `prefix` must be non-empty
// without '/'; a map whose vectors are not (L, L) is InvalidArgument naming the layer.
absl::Status WriteAttentionMapPngs(const std::string& dir, const std::string& prefix,
                                   const std::vector<models::LayerMap>& maps);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_PLOTS_H_
