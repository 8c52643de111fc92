// One multi-panel PNG in the paper's figure form, drawn by gnuplot's multiplot: curve panels (a mean
// line per variant with a shaded band over seeds, dotted or solid) and heatmap panels (attention maps,
// grids of accuracies), laid out in rows of `columns` panels.
//
//   CurvePanel acc{"Copy, train length 50", "step", "exact accuracy"};
//   acc.y_min = 0;
//   acc.y_max = 1;
//   ASSIGN_OR_RETURN(Band m50, MeanBand("mimetic @50", steps, per_seed_acc50));  // rows = seeds
//   m50.dotted = true;   // at the training length
//   m50.color = 1;       // "mimetic @100" (solid) uses color 1 too
//   acc.bands.push_back(m50);
//   HeatmapPanel map{"mimetic, layer 2 (head average)", "key position", "query position", "attention"};
//   map.rows = map.cols = L;
//   map.values = attention;  // (L, L) row-major, NaN above the diagonal
//   map.mark = 26;           // where the paste string starts
//   Figure fig{"Fig. 1: copy, 4-layer Mamba", /*columns=*/2, {acc, map}};
//   RETURN_IF_ERROR(RenderFigure("runs/fig1/figure.png", fig));
//   // also runs/fig1/figure.gp and runs/fig1/figure.panel<i>.dat: `gnuplot figure.gp` redraws it.
#ifndef MIMETIC_EXPERIMENTS_FIGURE_RENDER_H_
#define MIMETIC_EXPERIMENTS_FIGURE_RENDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/models/attention_maps.h"

namespace mimetic::experiments {

// A mean line with a shaded band between lo and hi (e.g. mean -+ standard error over seeds) in the same
// colour, semi-transparent. Non-finite values are gaps.
struct Band {
  std::string name;  // the legend entry; empty = no entry
  std::vector<double> xs, mean, lo, hi;
  bool dotted = false;  // dashed line (the paper: dotted at the training length, solid beyond)
  int color = -1;       // index into LineColor(); -1 = the band's position in its panel
};

struct CurvePanel {
  std::string title, xlabel, ylabel;
  std::vector<Band> bands;
  std::optional<double> y_min, y_max;  // gnuplot's autoscale for an unset end
  bool log_x = false;                  // every x must then be > 0
};

// A grid of values drawn as an image with a colour bar, row 0 at the top (matrix convention, as an
// attention map: row = query position, column = key position).
struct HeatmapPanel {
  std::string title, xlabel, ylabel, cb_label;
  int64_t rows = 0, cols = 0;
  std::vector<double> values;           // (rows, cols) row-major; NaN = blank (white), +-inf = the ends
  std::optional<double> lo, hi;         // the colour bar's range; min/max of the finite values if unset
  std::optional<double> mark;           // a token index: dashed lines at row and column `mark` - 0.5
  std::vector<std::string> row_labels;  // empty, or one tick label per row
  std::vector<std::string> col_labels;  // empty, or one tick label per column
  bool annotate = false;                // print each cell's value ("0.93") for small grids
};

using Panel = std::variant<CurvePanel, HeatmapPanel>;

struct Figure {
  std::string title;
  int columns = 2;
  std::vector<Panel> panels;
  int panel_width = 520, panel_height = 400;  // pixels per panel
  std::string gnuplot = "gnuplot";            // the program, looked up on PATH
};

// The PNG's size in pixels: columns x panel_width wide (columns capped at the number of panels) and
// rows x panel_height high, plus kFigureTitleHeight when the figure has a title.
inline constexpr int kFigureTitleHeight = 40;
struct PixelSize {
  int width = 0, height = 0;
};
PixelSize FigureSize(const Figure& figure);

// The line colours, as "#rrggbb" (the 10 colours of matplotlib's "tab10", then repeating).
std::string LineColor(int index);
// The opacity of a band's fill; on a white background it shows as
// (1 - kBandFillAlpha) * 255 + kBandFillAlpha * line colour per channel.
inline constexpr double kBandFillAlpha = 0.2;

// Draws `figure` into `png_path`. Writes `<stem>.gp` (the gnuplot script) and `<stem>.panel<i>.dat`
// (each panel's data) next to the PNG, so `gnuplot <stem>.gp` in that directory redraws it; gnuplot
// draws into a temporary file renamed over the PNG, so a failure leaves an earlier PNG intact. Uses the
// pngcairo terminal when gnuplot has it and libgd's png otherwise (which draws dotted lines solid). Text is
// drawn literally (noenhanced). Errors: InvalidArgument naming the panel (and band) for an empty figure,
// mismatched vector sizes, a value range that is empty, labels that do not match the grid, a mark outside it,
// or log_x with x <= 0; FailedPrecondition when gnuplot is not installed; Internal with gnuplot's output when
// it fails.
absl::Status RenderFigure(const std::string& png_path, const Figure& figure);

// The mean and mean -+ standard error over seeds at each x: per_seed_ys[s][i] is seed s at xs[i]. Each
// point uses the seeds with a finite value there (a seed that stopped early is left out); with one
// such seed lo = hi = mean, with none all three are NaN (a gap). InvalidArgument naming the band and
// seed when a row's length differs from xs.
absl::StatusOr<Band> MeanBand(const std::string& name, const std::vector<double>& xs,
                              const std::vector<std::vector<double>>& per_seed_ys);

// MeanBand over seeds whose curves were evaluated at different xs (a seed that stopped early, evals
// at other steps): the band's xs are the union of every seed's finite xs, sorted, and a seed without a
// point at some x is left out there. Each seed is a plots.h Series (its name is not used).
// InvalidArgument naming the band and seed when a seed's xs and ys differ in length or it repeats an x.
absl::StatusOr<Band> MeanBandOfSeeds(const std::string& name, const std::vector<Series>& seeds);

// A heatmap panel of one layer's attention map (`use_mask` false) or its average decay mask (true),
// as computed by models::ComputeLayerMap: axes "key position j" and "query position i", the upper
// triangle (j > i, not part of a causal map) blank, the map's colours ranged over its lower triangle
// and the mask's over [0, 1] so that layers compare. `mark` as in HeatmapPanel (where the paste string
// starts). InvalidArgument naming `title` when the map is not (L, L).
absl::StatusOr<HeatmapPanel> AttentionMapPanel(const std::string& title, const models::LayerMap& map,
                                               bool use_mask, std::optional<double> mark = std::nullopt);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURE_RENDER_H_
