#include "mimetic/experiments/render/figure_render.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/render/gnuplot.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/experiments/results/stats.h"

namespace mimetic::experiments {
namespace {

constexpr int kMaxImageSide = 16384;
// Annotated grids print one label per cell; beyond this many cells the numbers are unreadable.
constexpr int64_t kMaxAnnotatedCells = 400;

// matplotlib's "tab10": distinct colours that stay distinct as 20% fills.
constexpr std::array<const char*, 10> kTab10 = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string PanelName(size_t index, const std::string& title) {
  return absl::StrCat("panel ", index, title.empty() ? std::string() : absl::StrCat(" (\"", title, "\")"));
}

bool HasFinite(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

absl::Status ValidateCurves(const CurvePanel& panel, const std::string& where) {
  if (panel.y_min && panel.y_max && !(*panel.y_min < *panel.y_max)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": y range [", *panel.y_min, ", ", *panel.y_max, "] is empty"));
  }
  for (const Band& band : panel.bands) {
    const size_t n = band.xs.size();
    const bool has_band = !band.lo.empty() || !band.hi.empty();
    if (band.mean.size() != n || (has_band && (band.lo.size() != n || band.hi.size() != n))) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ", band \"", band.name, "\": ", n, " xs, ", band.mean.size(), " means, ", band.lo.size(),
          " lows and ", band.hi.size(), " highs; expected the same number of each (or no lows and highs)"));
    }
    if (panel.log_x) {
      for (double x : band.xs) {
        if (std::isfinite(x) && x <= 0) {
          return absl::InvalidArgumentError(absl::StrCat(where, ", band \"", band.name, "\": x = ", x,
                                                         " on a logarithmic x axis; expected x > 0"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateHeatmap(const HeatmapPanel& panel, const std::string& where) {
  if (panel.rows <= 0 || panel.cols <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": grid (", panel.rows, ", ", panel.cols, ") is empty"));
  }
  if (static_cast<int64_t>(panel.values.size()) != panel.rows * panel.cols) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", panel.values.size(), " values for a (",
                                                   panel.rows, ", ", panel.cols, ") grid, expected ",
                                                   panel.rows * panel.cols));
  }
  if (panel.lo && panel.hi && !(*panel.lo < *panel.hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": colour range [", *panel.lo, ", ", *panel.hi, "] is empty"));
  }
  if (!panel.row_labels.empty() && static_cast<int64_t>(panel.row_labels.size()) != panel.rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", panel.row_labels.size(), " row labels for ", panel.rows, " rows"));
  }
  if (!panel.col_labels.empty() && static_cast<int64_t>(panel.col_labels.size()) != panel.cols) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", panel.col_labels.size(), " column labels for ", panel.cols, " columns"));
  }
  if (panel.mark && !(*panel.mark >= 0 && *panel.mark <= std::max(panel.rows, panel.cols))) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": mark ", *panel.mark, " is outside the grid [0, ",
                                                   std::max(panel.rows, panel.cols), "]"));
  }
  if (panel.annotate && panel.rows * panel.cols > kMaxAnnotatedCells) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": annotate is for grids of at most ",
                                                   kMaxAnnotatedCells, " cells, this one has ",
                                                   panel.rows * panel.cols));
  }
  return absl::OkStatus();
}

absl::Status Validate(const Figure& figure) {
  if (figure.panels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("figure \"", figure.title, "\" has no panels"));
  }
  if (figure.columns < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("figure \"", figure.title, "\": columns must be >= 1, got ", figure.columns));
  }
  if (figure.panel_width < 100 || figure.panel_height < 100) {
    return absl::InvalidArgumentError(absl::StrCat("figure \"", figure.title, "\": panels of ",
                                                   figure.panel_width, "x", figure.panel_height,
                                                   " pixels; expected at least 100x100"));
  }
  const PixelSize size = FigureSize(figure);
  if (size.width > kMaxImageSide || size.height > kMaxImageSide) {
    return absl::InvalidArgumentError(absl::StrCat("figure \"", figure.title, "\": ", size.width, "x",
                                                   size.height, " pixels exceeds ", kMaxImageSide,
                                                   " a side"));
  }
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    if (const auto* curves = std::get_if<CurvePanel>(&figure.panels[i])) {
      RETURN_IF_ERROR(ValidateCurves(*curves, PanelName(i, curves->title)));
    } else {
      const auto& heatmap = std::get<HeatmapPanel>(figure.panels[i]);
      RETURN_IF_ERROR(ValidateHeatmap(heatmap, PanelName(i, heatmap.title)));
    }
  }
  return absl::OkStatus();
}

// The settings every panel starts from (after `reset`, which keeps the terminal and the multiplot).
std::string PanelPreamble(const std::string& title, const std::string& xlabel, const std::string& ylabel) {
  return absl::StrCat("reset\nset title ", GpQuote(title), " font ',12'\nset xlabel ", GpQuote(xlabel),
                      "\nset ylabel ", GpQuote(ylabel), "\n");
}

// Appends the curve panel's script to `script` and returns its data file's contents: one block per
// band with points, columns x mean lo hi.
std::string CurveScript(const CurvePanel& panel, const std::string& data_name, std::string* script) {
  std::string data;
  std::vector<std::string> fills, lines;
  bool any_finite = false;
  int block = 0;
  for (size_t b = 0; b < panel.bands.size(); ++b) {
    const Band& band = panel.bands[b];
    if (band.xs.empty()) continue;
    const bool has_band = !band.lo.empty();
    any_finite =
        any_finite || HasFinite(band.mean) || (has_band && (HasFinite(band.lo) || HasFinite(band.hi)));
    if (block > 0) data += "\n\n";
    absl::StrAppend(&data, "# ", absl::StrReplaceAll(band.name, {{"\n", " "}}), ": x mean lo hi\n");
    for (size_t i = 0; i < band.xs.size(); ++i) {
      absl::StrAppend(&data, GpNumber(band.xs[i]), " ", GpNumber(band.mean[i]), " ",
                      GpNumber(has_band ? band.lo[i] : band.mean[i]), " ",
                      GpNumber(has_band ? band.hi[i] : band.mean[i]), "\n");
    }
    const std::string color = LineColor(band.color >= 0 ? band.color : static_cast<int>(b));
    const std::string source = absl::StrCat(GpQuote(data_name), " index ", block);
    // A band of one x has no line or area to draw: a marker with an error bar instead.
    const bool single = band.xs.size() == 1;
    if (has_band) {
      fills.push_back(single ? absl::StrCat(source, " using 1:2:3:4 with yerrorbars pointtype 7 pointsize 0 ",
                                            "linecolor rgb '", color, "' notitle")
                             : absl::StrCat(source, " using 1:3:4 with filledcurves fillcolor rgb '", color,
                                            "' fillstyle transparent solid ", kBandFillAlpha,
                                            " noborder notitle"));
    }
    lines.push_back(
        absl::StrCat(source, " using 1:2 with ", single ? "linespoints pointtype 7 pointsize 1.2" : "lines",
                     " linewidth 2 linecolor rgb '", color, "' dashtype ", band.dotted ? "(3,3)" : "solid",
                     " ", band.name.empty() ? std::string("notitle") : "title " + GpQuote(band.name)));
    ++block;
  }
  // The legend goes below the axes so it never covers a curve; several entries share a row.
  absl::StrAppend(script, "set grid\nset key below horizontal maxrows 4 font ',9' height 1\n");
  if (panel.log_x) {
    // gnuplot widens a log axis to whole decades; keep it to the data, with a tic at each x when the
    // xs are few (head dims 8, 16, ..., 1024).
    absl::StrAppend(script, "set logscale x\nset autoscale xfix\n");
    std::set<double> xs;
    for (const Band& band : panel.bands) {
      for (double x : band.xs) {
        if (std::isfinite(x)) xs.insert(x);
      }
    }
    if (!xs.empty() && xs.size() <= 12) {
      std::vector<std::string> tics;
      for (double x : xs) tics.push_back(absl::StrFormat("%g", x));
      absl::StrAppend(script, "set xtics (", absl::StrJoin(tics, ", "), ")\n");
      // A tic exactly at an end of a log axis may be dropped by rounding: pad the range by 5%.
      if (xs.size() > 1) {
        absl::StrAppend(script, "set xrange [", GpNumber(*xs.begin() / 1.05), ":",
                        GpNumber(*xs.rbegin() * 1.05), "]\n");
      }
    }
  }
  if (panel.y_min || panel.y_max) {
    absl::StrAppend(script, "set yrange [", panel.y_min ? GpNumber(*panel.y_min) : "*", ":",
                    panel.y_max ? GpNumber(*panel.y_max) : "*", "]\n");
  }
  if (!any_finite) {
    // gnuplot cannot autoscale an axis without a point; draw empty axes that say so.
    absl::StrAppend(script, "set xrange [0:1]\n", panel.y_min || panel.y_max ? "" : "set yrange [0:1]\n",
                    "set label 'no data' at graph 0.5, graph 0.5 center\nplot NaN notitle\n");
    return data;
  }
  // Fills first, so every line is drawn over every band.
  fills.insert(fills.end(), lines.begin(), lines.end());
  absl::StrAppend(script, "plot ", absl::StrJoin(fills, ", \\\n     "), "\n");
  return data;
}

// Tick labels "(\"a\" 0, \"b\" 1)", rotated when any label is longer than a few characters.
std::string TicsCommand(const char* axis, const std::vector<std::string>& labels) {
  if (labels.empty()) return "";
  std::vector<std::string> tics;
  size_t longest = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    tics.push_back(absl::StrCat(GpQuote(labels[i]), " ", i));
    longest = std::max(longest, labels[i].size());
  }
  const bool rotate = axis[0] == 'x' && longest > 4;
  return absl::StrCat("set ", axis, "tics (", absl::StrJoin(tics, ", "), ")",
                      rotate ? " rotate by 30 right" : "", "\n");
}

// The viridis palette of plots.h as gnuplot stops.
std::string ViridisPalette() {
  std::vector<std::string> stops;
  for (int i = 0; i <= 10; ++i) {
    const Rgb c = ColormapColor(Colormap::kViridis, i / 10.0);
    stops.push_back(absl::StrFormat("%d '#%02x%02x%02x'", i, c.r, c.g, c.b));
  }
  return absl::StrCat("set palette defined (", absl::StrJoin(stops, ", "), ")\n");
}

// Appends the heatmap panel's script to `script` and returns its data file's contents: the grid as a
// whitespace matrix, then (annotated grids) a second block of labels "col row text rgb".
std::string HeatmapScript(const HeatmapPanel& panel, const std::string& data_name, std::string* script) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : panel.values) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (lo > hi) lo = 0, hi = 1;  // no finite value: an all-blank map
  if (panel.lo) lo = *panel.lo;
  if (panel.hi) hi = *panel.hi;
  if (!(lo < hi)) lo -= 0.5, hi += 0.5;  // one value everywhere

  std::string data = absl::StrCat("# ", panel.rows, " x ", panel.cols, " grid, row 0 first\n");
  for (int64_t r = 0; r < panel.rows; ++r) {
    for (int64_t c = 0; c < panel.cols; ++c) {
      // +-inf take the colour bar's ends (as plots.h's heatmaps do); NaN stays blank.
      const double v = panel.values[r * panel.cols + c];
      absl::StrAppend(&data, c ? " " : "", GpNumber(std::isinf(v) ? (v > 0 ? hi : lo) : v));
    }
    data += "\n";
  }
  absl::StrAppend(script, "set cblabel ", GpQuote(panel.cb_label), "\n", ViridisPalette(), "set cbrange [",
                  GpNumber(lo), ":", GpNumber(hi), "]\nset xrange [-0.5:", panel.cols - 0.5,
                  "]\nset yrange [", panel.rows - 0.5, ":-0.5]\nset tics out scale 0.5\nunset key\n",
                  TicsCommand("x", panel.col_labels), TicsCommand("y", panel.row_labels));
  // Square cells unless the grid is so elongated that they would be slivers.
  const double aspect = static_cast<double>(panel.rows) / panel.cols;
  if (aspect >= 0.5 && aspect <= 2) absl::StrAppend(script, "set size ratio -1\n");
  if (panel.mark) {
    const std::string at = GpNumber(*panel.mark - 0.5);
    absl::StrAppend(script, "set arrow from first ", at, ", graph 0 to first ", at,
                    ", graph 1 nohead front dashtype (6,4) linewidth 2 linecolor rgb '#e41a1c'\n",
                    "set arrow from graph 0, first ", at, " to graph 1, first ", at,
                    " nohead front dashtype (6,4) linewidth 2 linecolor rgb '#e41a1c'\n");
  }
  std::string plot = absl::StrCat("plot ", GpQuote(data_name), " index 0 matrix with image notitle");
  if (panel.annotate) {
    data += "\n\n# labels: col row text rgb\n";
    for (int64_t r = 0; r < panel.rows; ++r) {
      for (int64_t c = 0; c < panel.cols; ++c) {
        const double v = panel.values[r * panel.cols + c];
        if (!std::isfinite(v)) continue;
        // Dark text on the bright (yellow-green) end of viridis, white on the dark end.
        const bool bright = (v - lo) / (hi - lo) > 0.6;
        absl::StrAppend(&data, c, " ", r, " \"",
                        std::fabs(v) < 10 ? absl::StrFormat("%.2f", v) : absl::StrFormat("%.3g", v), "\" ",
                        bright ? 0x000000 : 0xffffff, "\n");
      }
    }
    absl::StrAppend(&plot, ", ", GpQuote(data_name),
                    " index 1 using 1:2:3:4 with labels textcolor rgb variable font ',9' notitle");
  }
  absl::StrAppend(script, plot, "\n");
  return data;
}

}  // namespace

std::string LineColor(int index) { return kTab10[static_cast<size_t>(std::max(index, 0)) % kTab10.size()]; }

PixelSize FigureSize(const Figure& figure) {
  const int n = static_cast<int>(figure.panels.size());
  const int columns = std::max(1, std::min(figure.columns, n));
  const int rows = n == 0 ? 0 : (n + columns - 1) / columns;
  return {columns * figure.panel_width,
          rows * figure.panel_height + (figure.title.empty() ? 0 : kFigureTitleHeight)};
}

absl::Status RenderFigure(const std::string& png_path, const Figure& figure) {
  if (absl::Status s = Validate(figure); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("figure '", png_path, "': ", s.message()));
  }
  const std::string dir = core::DirName(png_path);
  const std::string base = core::BaseName(png_path);
  const std::string stem = absl::EndsWith(base, ".png") ? base.substr(0, base.size() - 4) : base;
  const std::string in_dir = dir == "/" ? "/" : dir + "/";
  const PixelSize size = FigureSize(figure);
  const int columns = std::min<int>(figure.columns, figure.panels.size());
  const int rows = (static_cast<int>(figure.panels.size()) + columns - 1) / columns;

  std::string script = absl::StrCat(
      "# Written by mimetic's RenderFigure. Redraw in this directory with: "
      "gnuplot ",
      stem, ".gp\n", PngPreamble(base, size.width, size.height, /*truecolor=*/true), "set multiplot layout ",
      rows, ",", columns,
      figure.title.empty() ? std::string() : absl::StrCat(" title ", GpQuote(figure.title), " font ',14'"),
      "\n");
  std::vector<std::pair<std::string, std::string>> data_files;  // name, contents
  for (size_t i = 0; i < figure.panels.size(); ++i) {
    const std::string data_name = absl::StrCat(stem, ".panel", i, ".dat");
    absl::StrAppend(&script, "\n# ", PanelName(i, ""), "\n");
    std::string data;
    if (const auto* curves = std::get_if<CurvePanel>(&figure.panels[i])) {
      absl::StrAppend(&script, PanelPreamble(curves->title, curves->xlabel, curves->ylabel));
      data = CurveScript(*curves, data_name, &script);
    } else {
      const auto& heatmap = std::get<HeatmapPanel>(figure.panels[i]);
      absl::StrAppend(&script, PanelPreamble(heatmap.title, heatmap.xlabel, heatmap.ylabel));
      data = HeatmapScript(heatmap, data_name, &script);
    }
    data_files.emplace_back(data_name, std::move(data));
  }
  script += "\nunset multiplot\nset output\n";

  RETURN_IF_ERROR(core::MakeDirs(dir));
  for (const auto& [name, contents] : data_files)
    RETURN_IF_ERROR(core::WriteTextFile(in_dir + name, contents));
  RETURN_IF_ERROR(core::WriteTextFile(in_dir + stem + ".gp", script));

  return RunGnuplotToPng(figure.gnuplot, stem + ".gp", dir, png_path,
                         absl::StrCat("figure '", png_path, "'"));
}

absl::StatusOr<Band> MeanBand(const std::string& name, const std::vector<double>& xs,
                              const std::vector<std::vector<double>>& per_seed_ys) {
  for (size_t s = 0; s < per_seed_ys.size(); ++s) {
    if (per_seed_ys[s].size() != xs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "band \"", name, "\": seed ", s, " has ", per_seed_ys[s].size(), " values for ", xs.size(), " xs"));
    }
  }
  Band band;
  band.name = name;
  band.xs = xs;
  std::vector<double> column(per_seed_ys.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t s = 0; s < per_seed_ys.size(); ++s) column[s] = per_seed_ys[s][i];
    const Stat stat = MeanSe(column);
    band.mean.push_back(stat.mean);
    band.lo.push_back(stat.mean - stat.se);
    band.hi.push_back(stat.mean + stat.se);
  }
  return band;
}

absl::StatusOr<Band> MeanBandOfSeeds(const std::string& name, const std::vector<Series>& seeds) {
  std::set<double> all_xs;
  std::vector<std::map<double, double>> by_x(seeds.size());
  for (size_t s = 0; s < seeds.size(); ++s) {
    if (seeds[s].xs.size() != seeds[s].ys.size()) {
      return absl::InvalidArgumentError(absl::StrCat("band \"", name, "\": seed ", s, " has ",
                                                     seeds[s].xs.size(), " xs but ", seeds[s].ys.size(),
                                                     " ys"));
    }
    for (size_t i = 0; i < seeds[s].xs.size(); ++i) {
      const double x = seeds[s].xs[i];
      if (!std::isfinite(x)) continue;
      if (!by_x[s].emplace(x, seeds[s].ys[i]).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("band \"", name, "\": seed ", s, " has two points at x = ", x));
      }
      all_xs.insert(x);
    }
  }
  const std::vector<double> xs(all_xs.begin(), all_xs.end());
  std::vector<std::vector<double>> rows(
      seeds.size(), std::vector<double>(xs.size(), std::numeric_limits<double>::quiet_NaN()));
  for (size_t s = 0; s < seeds.size(); ++s) {
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto it = by_x[s].find(xs[i]);
      if (it != by_x[s].end()) rows[s][i] = it->second;
    }
  }
  return MeanBand(name, xs, rows);
}

absl::StatusOr<HeatmapPanel> AttentionMapPanel(const std::string& title, const models::LayerMap& map,
                                               bool use_mask, std::optional<double> mark) {
  const int64_t L = map.length;
  const std::vector<double>& values = use_mask ? map.mask : map.map;
  if (L <= 0 || static_cast<int64_t>(values.size()) != L * L) {
    return absl::InvalidArgumentError(absl::StrCat("attention map \"", title, "\": length ", L, " with ",
                                                   values.size(), use_mask ? " mask" : " map",
                                                   " values, expected ", L, " x ", L));
  }
  HeatmapPanel panel{title, "key position j", "query position i", use_mask ? "average mask" : "attention"};
  panel.rows = panel.cols = L;
  panel.values = values;
  // Blank the upper triangle: it is not part of a causal map and would skew the colour range.
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = i + 1; j < L; ++j) panel.values[i * L + j] = std::numeric_limits<double>::quiet_NaN();
  }
  if (use_mask) {
    panel.lo = 0;
    panel.hi = 1;
  }
  panel.mark = mark;
  return panel;
}

}  // namespace mimetic::experiments
