#include "mimetic/experiments/render/plots.h"

#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/render/gnuplot.h"

namespace mimetic::experiments {
namespace {

constexpr int64_t kMaxImageSide = 16384;

// The 10 stops of viridisLite's viridis(10) and magma(10) (t = 0, 1/9, ..., 1).
constexpr std::array<Rgb, 10> kViridis = {{{68, 1, 84},
                                           {72, 40, 120},
                                           {62, 74, 137},
                                           {49, 104, 142},
                                           {38, 130, 142},
                                           {31, 158, 137},
                                           {53, 183, 121},
                                           {109, 205, 89},
                                           {180, 222, 44},
                                           {253, 231, 37}}};
constexpr std::array<Rgb, 10> kMagma = {{{0, 0, 4},
                                         {24, 15, 62},
                                         {69, 16, 119},
                                         {114, 31, 129},
                                         {159, 47, 127},
                                         {205, 64, 113},
                                         {241, 96, 93},
                                         {253, 149, 103},
                                         {254, 201, 141},
                                         {252, 253, 191}}};

uint8_t Lerp(uint8_t a, uint8_t b, double f) {
  return static_cast<uint8_t>(std::lround(a + (static_cast<double>(b) - a) * f));
}

}  // namespace

absl::Status PlotCurves(const std::string& png_path, const std::string& title, const std::string& xlabel,
                        const std::string& ylabel, const std::vector<Series>& series,
                        const PlotOptions& options) {
  const std::string where = absl::StrCat("plot '", png_path, "'");
  if (options.width < 16 || options.height < 16 || options.width > kMaxImageSide ||
      options.height > kMaxImageSide) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": size ", options.width, "x", options.height,
                                                   " must be between 16 and ", kMaxImageSide, " a side"));
  }
  if (options.y_min && options.y_max && !(*options.y_min < *options.y_max)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": y range [", *options.y_min, ", ", *options.y_max, "] is empty"));
  }
  size_t points = 0;
  for (const Series& s : series) {
    if (s.xs.size() != s.ys.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": series \"", s.name, "\" has ", s.xs.size(), " xs but ", s.ys.size(), " ys"));
    }
    points += s.xs.size();
  }
  if (points == 0) return absl::InvalidArgumentError(absl::StrCat(where, ": no points to plot"));

  const std::string dir = core::DirName(png_path);
  const std::string base = core::BaseName(png_path);
  const std::string stem = absl::EndsWith(base, ".png") ? base.substr(0, base.size() - 4) : base;
  const std::string data_name = stem + ".dat";
  const std::string script_name = stem + ".gp";
  RETURN_IF_ERROR(core::MakeDirs(dir));

  // One block per non-empty series, separated by two blank lines (gnuplot's `index`).
  std::string data;
  std::vector<std::string> plots;
  for (const Series& s : series) {
    if (s.xs.empty()) continue;
    if (!plots.empty()) data += "\n\n";
    absl::StrAppend(&data, "# ", absl::StrReplaceAll(s.name, {{"\n", " "}}), "\n");
    for (size_t i = 0; i < s.xs.size(); ++i)
      absl::StrAppend(&data, GpNumber(s.xs[i]), " ", GpNumber(s.ys[i]), "\n");
    // Markers help for a few points (evaluations) and clutter many (per-step losses).
    const char* style = s.xs.size() <= 60 ? "linespoints pointtype 7 pointsize 0.7" : "lines";
    plots.push_back(absl::StrCat(plots.empty() ? GpQuote(data_name) : "''", " index ", plots.size(),
                                 " using 1:2 with ", style, " linewidth 2 title ", GpQuote(s.name)));
  }

  std::string script = absl::StrCat(
      "# Written by mimetic's PlotCurves. Redraw in this directory with: "
      "gnuplot ",
      script_name, "\n", PngPreamble(base, options.width, options.height, /*truecolor=*/false), "set title ",
      GpQuote(title), "\n", "set xlabel ", GpQuote(xlabel), "\n", "set ylabel ", GpQuote(ylabel), "\n",
      "set grid\nset key below\nset datafile missing 'NaN'\n");
  if (options.log_x) script += "set logscale x\n";
  if (options.log_y) script += "set logscale y\n";
  if (options.y_min || options.y_max) {
    absl::StrAppend(&script, "set yrange [", options.y_min ? GpNumber(*options.y_min) : "*", ":",
                    options.y_max ? GpNumber(*options.y_max) : "*", "]\n");
  }
  absl::StrAppend(&script, "plot ", absl::StrJoin(plots, ", \\\n     "), "\nset output\n");

  const std::string in_dir = dir == "/" ? "/" : dir + "/";
  RETURN_IF_ERROR(core::WriteTextFile(in_dir + data_name, data));
  RETURN_IF_ERROR(core::WriteTextFile(in_dir + script_name, script));
  return RunGnuplotToPng(options.gnuplot, script_name, dir, png_path, where);
}

Rgb ColormapColor(Colormap colormap, double t) {
  if (std::isnan(t)) return kMissingColor;
  t = std::clamp(t, 0.0, 1.0);
  if (colormap == Colormap::kGrayscale) {
    const uint8_t v = static_cast<uint8_t>(std::lround(255 * t));
    return {v, v, v};
  }
  const std::array<Rgb, 10>& stops = colormap == Colormap::kMagma ? kMagma : kViridis;
  const double pos = t * (stops.size() - 1);
  const size_t i = std::min(static_cast<size_t>(pos), stops.size() - 2);
  const double f = pos - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return {Lerp(a.r, b.r, f), Lerp(a.g, b.g, f), Lerp(a.b, b.b, f)};
}

namespace {

// The value range the colours span: `range` when given (checked), else the finite values' min and max.
absl::StatusOr<ValueRange> ColourRange(const std::vector<double>& values, std::optional<ValueRange> range,
                                       const std::string& where) {
  if (range) {
    if (!(range->lo < range->hi) || !std::isfinite(range->lo) || !std::isfinite(range->hi)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": value range [", range->lo, ", ", range->hi, "] is empty"));
    }
    return *range;
  }
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : values) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) lo = hi = 0;  // no finite value
  return ValueRange{lo, hi};
}

// (rows * scale, cols * scale, 3) RGB pixels, each value a scale x scale
// square.
std::vector<uint8_t> HeatmapPixels(const std::vector<double>& values, int64_t rows, int64_t cols, int scale,
                                   Colormap colormap, ValueRange range) {
  const double span = range.hi - range.lo;
  const int64_t width = cols * scale;
  std::vector<uint8_t> pixels(static_cast<size_t>(width * rows * scale * 3));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const double v = values[r * cols + c];
      double t = std::numeric_limits<double>::quiet_NaN();
      if (std::isinf(v)) {
        t = v > 0 ? 1 : 0;
      } else if (!std::isnan(v)) {
        t = span > 0 ? (v - range.lo) / span : 0;
      }
      const Rgb rgb = ColormapColor(colormap, t);
      for (int64_t y = r * scale; y < (r + 1) * scale; ++y) {
        uint8_t* p = &pixels[static_cast<size_t>((y * width + c * scale) * 3)];
        for (int x = 0; x < scale; ++x, p += 3) {
          p[0] = rgb.r;
          p[1] = rgb.g;
          p[2] = rgb.b;
        }
      }
    }
  }
  return pixels;
}

// Writes RGB `pixels` as a PNG through a temporary renamed over `png_path` (an
// earlier file survives a failed write).
absl::Status WriteRgbPng(const std::string& png_path, const std::vector<uint8_t>& pixels, int64_t width,
                         int64_t height, const std::string& where) {
  RETURN_IF_ERROR(core::MakeDirs(core::DirName(png_path)));
  // libpng's simplified API reports errors in image.message instead of by longjmp.
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = PNG_FORMAT_RGB;
  const std::string tmp = png_path + ".tmp";
  errno = 0;
  if (!png_image_write_to_file(&image, tmp.c_str(), /*convert_to_8bit=*/0, pixels.data(), /*row_stride=*/0,
                               /*colormap=*/nullptr)) {
    const int err = errno;
    const std::string message = image.message;
    png_image_free(&image);
    ::unlink(tmp.c_str());
    if (err != 0)
      return core::ErrnoError(err, absl::StrCat(where, ": writing '", tmp, "' (libpng: ", message, ")"));
    return absl::InternalError(absl::StrCat(where, ": libpng: ", message));
  }
  if (std::rename(tmp.c_str(), png_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return core::ErrnoError(err, absl::StrCat(where, ": renaming '", tmp, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteHeatmapPng(const std::string& png_path, const std::vector<double>& values, int64_t rows,
                             int64_t cols, int scale, Colormap colormap, std::optional<ValueRange> range) {
  const std::string where = absl::StrCat("heatmap '", png_path, "'");
  if (rows <= 0 || cols <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": grid (", rows, ", ", cols, ") is empty"));
  }
  if (static_cast<int64_t>(values.size()) != rows * cols) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", values.size(), " values for a (", rows, ", ",
                                                   cols, ") grid, expected ", rows * cols));
  }
  if (scale < 1) return absl::InvalidArgumentError(absl::StrCat(where, ": scale must be >= 1, got ", scale));
  if (rows * scale > kMaxImageSide || cols * scale > kMaxImageSide) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": image ", cols * scale, "x", rows * scale,
                                                   " pixels exceeds ", kMaxImageSide, " a side"));
  }
  ASSIGN_OR_RETURN(const ValueRange colours, ColourRange(values, range, where));
  return WriteRgbPng(png_path, HeatmapPixels(values, rows, cols, scale, colormap, colours), cols * scale,
                     rows * scale, where);
}

absl::Status WriteAttentionMapPngs(const std::string& dir, const std::string& prefix,
                                   const std::vector<models::LayerMap>& maps) {
  if (prefix.empty() || prefix.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention map file prefix \"", prefix, "\" must be non-empty without '/'"));
  }
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    const models::LayerMap& m = maps[layer];
    const int64_t L = m.length;
    if (L <= 0 || static_cast<int64_t>(m.map.size()) != L * L ||
        static_cast<int64_t>(m.mask.size()) != L * L) {
      return absl::InvalidArgumentError(absl::StrCat("attention map of layer ", layer, ": length ", L,
                                                     " with ", m.map.size(), " map and ", m.mask.size(),
                                                     " mask values, expected ", L, " x ", L));
    }
  }
  RETURN_IF_ERROR(core::MakeDirs(dir));
  for (size_t layer = 0; layer < maps.size(); ++layer) {
    const models::LayerMap& m = maps[layer];
    const int64_t L = m.length;
    const int scale = static_cast<int>(std::max<int64_t>(1, 512 / L));
    // Blank the upper triangle: it is not part of a causal map and would skew the map's range.
    std::vector<double> map = m.map, mask = m.mask;
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = i + 1; j < L; ++j) {
        map[i * L + j] = std::numeric_limits<double>::quiet_NaN();
        mask[i * L + j] = std::numeric_limits<double>::quiet_NaN();
      }
    }
    const std::string stem = absl::StrCat(dir, "/", prefix, "_layer", layer);
    RETURN_IF_ERROR(WriteHeatmapPng(stem + "_map.png", map, L, L, scale, Colormap::kViridis));
    RETURN_IF_ERROR(
        WriteHeatmapPng(stem + "_mask.png", mask, L, L, scale, Colormap::kViridis, ValueRange{0, 1}));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
