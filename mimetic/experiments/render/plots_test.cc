#include "mimetic/experiments/render/plots.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/render/png_test_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/plots_test_", name);
}

// The decoded size, (width, height); a test failure when libpng cannot read `path`.
std::pair<uint32_t, uint32_t> PngSize(const std::string& path) {
  const DecodedPng png = DecodePng(path);
  return {png.width, png.height};
}

void ExpectColor(const Rgb& got, const Rgb& want, const std::string& where) {
  EXPECT_TRUE(got == want) << where << ": got (" << int(got.r) << ", " << int(got.g) << ", " << int(got.b)
                           << "), want (" << int(want.r) << ", " << int(want.g) << ", " << int(want.b) << ")";
}

TEST(ColormapTest, EndsAndMiddle) {
  ExpectColor(ColormapColor(Colormap::kViridis, 0), {68, 1, 84}, "viridis 0");     // #440154
  ExpectColor(ColormapColor(Colormap::kViridis, 1), {253, 231, 37}, "viridis 1");  // #fde725
  ExpectColor(ColormapColor(Colormap::kViridis, -3), {68, 1, 84}, "clamped");
  ExpectColor(ColormapColor(Colormap::kMagma, 0), {0, 0, 4}, "magma 0");
  ExpectColor(ColormapColor(Colormap::kMagma, 1), {252, 253, 191}, "magma 1");
  ExpectColor(ColormapColor(Colormap::kGrayscale, 0.5), {128, 128, 128}, "gray 0.5");
  ExpectColor(ColormapColor(Colormap::kViridis, kNaN), kMissingColor, "NaN");
  // Halfway between stops 4 and 5 ((38,130,142) and (31,158,137)): viridis(0.5) is about #21918c.
  ExpectColor(ColormapColor(Colormap::kViridis, 0.5), {35, 144, 140}, "viridis 0.5");
  // Luminance rises monotonically along viridis (a perceptual map's defining property).
  double last = -1;
  for (int i = 0; i <= 100; ++i) {
    Rgb c = ColormapColor(Colormap::kViridis, i / 100.0);
    double lum = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
    EXPECT_GT(lum, last) << i;
    last = lum;
  }
}

TEST(HeatmapTest, WritesScaledCellsWithDataRange) {
  const std::string path = TestDir("heatmap") + "/sub/grid.png";  // parent created
  // (3, 5): min -1 at (0, 0), max 3 at (2, 4), NaN at (1, 2), +inf at (2, 0).
  std::vector<double> values = {-1,
                                0,
                                0,
                                0,
                                0,  //
                                0,
                                0,
                                kNaN,
                                0,
                                0,  //
                                std::numeric_limits<double>::infinity(),
                                1,
                                1,
                                1,
                                3};
  ASSERT_TRUE(WriteHeatmapPng(path, values, 3, 5, 4, Colormap::kViridis).ok());
  EXPECT_FALSE(core::FileExists(path + ".tmp"));
  EXPECT_EQ(PngSize(path), std::make_pair(20u, 12u));  // width = cols * scale, height = rows * scale

  DecodedPng png = DecodePng(path);
  ASSERT_EQ(png.width, 20u);
  ASSERT_EQ(png.height, 12u);
  const Rgb low = ColormapColor(Colormap::kViridis, 0);
  const Rgb high = ColormapColor(Colormap::kViridis, 1);
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 4; ++x) ExpectColor(png.At(x, y), low, "cell (0, 0)");
  }
  ExpectColor(png.At(19, 11), high, "cell (2, 4)");
  ExpectColor(png.At(10, 6), kMissingColor, "NaN cell (1, 2)");
  ExpectColor(png.At(1, 9), high, "+inf cell (2, 0)");
  ExpectColor(png.At(4, 0), ColormapColor(Colormap::kViridis, 0.25), "cell (0, 1) = 0 -> 1/4");
}

TEST(HeatmapTest, FixedRangeAndConstantValues) {
  const std::string dir = TestDir("ranges");
  ASSERT_TRUE(
      WriteHeatmapPng(dir + "/half.png", {0.5, 2.0}, 1, 2, 1, Colormap::kGrayscale, ValueRange{0, 1}).ok());
  DecodedPng half = DecodePng(dir + "/half.png");
  ASSERT_EQ(half.width, 2u);
  ExpectColor(half.At(0, 0), {128, 128, 128}, "0.5 of [0, 1]");
  ExpectColor(half.At(1, 0), {255, 255, 255}, "2 clamps to 1");

  ASSERT_TRUE(WriteHeatmapPng(dir + "/flat.png", {7, 7, 7, 7}, 2, 2, 3, Colormap::kMagma).ok());
  DecodedPng flat = DecodePng(dir + "/flat.png");
  ASSERT_EQ(flat.width, 6u);
  ExpectColor(flat.At(5, 5), ColormapColor(Colormap::kMagma, 0), "constant values draw the low colour");
}

TEST(HeatmapTest, Errors) {
  const std::string dir = TestDir("errors");
  auto invalid = [](absl::Status s) { return absl::IsInvalidArgument(s); };
  EXPECT_TRUE(invalid(WriteHeatmapPng(dir + "/a.png", {1, 2, 3}, 2, 2, 1)));
  EXPECT_TRUE(invalid(WriteHeatmapPng(dir + "/a.png", {1, 2, 3, 4}, 2, 2, 0)));
  EXPECT_TRUE(invalid(WriteHeatmapPng(dir + "/a.png", {}, 0, 0, 1)));
  EXPECT_TRUE(invalid(WriteHeatmapPng(dir + "/a.png", {1}, 1, 1, 20000)));
  EXPECT_TRUE(invalid(WriteHeatmapPng(dir + "/a.png", {1}, 1, 1, 1, Colormap::kViridis, ValueRange{1, 1})));

  ASSERT_TRUE(WriteHeatmapPng(dir + "/file.png", {1}, 1, 1, 1).ok());
  absl::Status s = WriteHeatmapPng(dir + "/file.png/inside.png", {1}, 1, 1, 1);  // parent is a file
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("file.png"));
}

models::LayerMap TestMap(int64_t L, double scale) {
  models::LayerMap m;
  m.length = L;
  m.map.assign(L * L, 0);
  m.mask.assign(L * L, 0);
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      m.map[i * L + j] = scale / (1 + i - j);        // strongest on the diagonal
      m.mask[i * L + j] = std::exp(-0.3 * (i - j));  // decays with distance
    }
  }
  return m;
}

TEST(AttentionMapPngsTest, WritesMapAndMaskPerLayer) {
  const std::string dir = TestDir("attention") + "/maps";
  ASSERT_TRUE(WriteAttentionMapPngs(dir, "mimetic", {TestMap(8, 1.0), TestMap(100, -2.0)}).ok());
  for (const char* kind : {"map", "mask"}) {
    EXPECT_EQ(PngSize(absl::StrCat(dir, "/mimetic_layer0_", kind, ".png")), std::make_pair(512u, 512u));
    EXPECT_EQ(PngSize(absl::StrCat(dir, "/mimetic_layer1_", kind, ".png")), std::make_pair(500u, 500u));
  }
  DecodedPng mask = DecodePng(dir + "/mimetic_layer0_mask.png");
  ASSERT_EQ(mask.width, 512u);
  ExpectColor(mask.At(511, 0), kMissingColor, "upper triangle is blank");
  ExpectColor(mask.At(0, 511), ColormapColor(Colormap::kViridis, std::exp(-0.3 * 7)), "mask on [0, 1]");
  ExpectColor(mask.At(100, 100), ColormapColor(Colormap::kViridis, 1), "diagonal of the mask is 1");
  DecodedPng map = DecodePng(dir + "/mimetic_layer0_map.png");
  ExpectColor(map.At(5, 5), ColormapColor(Colormap::kViridis, 1), "map maximum on the diagonal");
  ExpectColor(map.At(0, 511), ColormapColor(Colormap::kViridis, 0), "map minimum at (7, 0)");
}

TEST(AttentionMapPngsTest, Errors) {
  models::LayerMap bad = TestMap(4, 1);
  bad.mask.pop_back();
  absl::Status s = WriteAttentionMapPngs(TestDir("attention_errors"), "x", {TestMap(4, 1), bad});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("layer 1"));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteAttentionMapPngs(TestDir("attention_errors"), "a/b", {})));
}

TEST(PlotCurvesTest, DrawsAPngWithGnuplot) {
  if (!ProgramOnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox); skipping";
  const std::string dir = TestDir("curves");
  std::vector<double> steps, default_acc, mimetic_acc;
  for (int i = 0; i <= 20; ++i) {
    steps.push_back(100.0 * i);
    default_acc.push_back(0.1 + 0.3 * (1 - std::exp(-i / 8.0)));
    mimetic_acc.push_back(i == 7 ? kNaN : 1 - 0.9 * std::exp(-i / 4.0));  // a gap at i = 7
  }
  PlotOptions options;
  options.y_min = 0;
  options.y_max = 1;
  absl::Status s = PlotCurves(
      dir + "/accuracy.png", "Copy task, it's L=64", "step", "accuracy_at_L",
      {{"default_init", steps, default_acc}, {"mimetic", steps, mimetic_acc}, {"empty", {}, {}}}, options);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(PngSize(dir + "/accuracy.png"), std::make_pair(800u, 500u));
  EXPECT_TRUE(core::FileExists(dir + "/accuracy.gp"));
  EXPECT_TRUE(core::FileExists(dir + "/accuracy.dat"));
  EXPECT_FALSE(core::FileExists(dir + "/accuracy.png.tmp"));
  EXPECT_FALSE(core::FileExists(dir + "/accuracy.gnuplot.log"));
  absl::StatusOr<std::string> script = core::ReadTextFile(dir + "/accuracy.gp");
  ASSERT_TRUE(script.ok()) << script.status();
  EXPECT_THAT(*script, HasSubstr("'Copy task, it''s L=64'"));

  PlotOptions log_options;
  log_options.log_x = true;
  log_options.log_y = true;
  log_options.width = 640;
  log_options.height = 480;
  std::vector<double> xs, ys;
  for (int i = 1; i <= 200; ++i) {
    xs.push_back(i);
    ys.push_back(5.0 / i);
  }
  s = PlotCurves(dir + "/loss.png", "loss", "step", "loss", {{"run", xs, ys}}, log_options);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(PngSize(dir + "/loss.png"), std::make_pair(640u, 480u));
}

TEST(PlotCurvesTest, Errors) {
  const std::string dir = TestDir("curve_errors");
  const std::vector<Series> one = {{"a", {1, 2}, {3, 4}}};
  absl::Status s = PlotCurves(dir + "/a.png", "t", "x", "y", {{"a", {1, 2}, {3}}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("\"a\" has 2 xs but 1 ys"));
  EXPECT_TRUE(absl::IsInvalidArgument(PlotCurves(dir + "/a.png", "t", "x", "y", {{"a", {}, {}}})));

  PlotOptions missing;
  missing.gnuplot = "mimetic-no-such-gnuplot";
  s = PlotCurves(dir + "/a.png", "t", "x", "y", one, missing);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("not found on PATH"));

  PlotOptions failing;
  failing.gnuplot = "false";  // exits 1 without drawing
  s = PlotCurves(dir + "/a.png", "t", "x", "y", one, failing);
  EXPECT_TRUE(absl::IsInternal(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("exited with status 1"));
  EXPECT_FALSE(core::FileExists(dir + "/a.png"));

  if (ProgramOnPath("gnuplot")) {
    // gnuplot's own complaint comes back in the Status: a log axis with no positive values.
    PlotOptions log_y;
    log_y.log_y = true;
    log_y.y_min = -2;
    log_y.y_max = -1;
    s = PlotCurves(dir + "/neg.png", "t", "x", "y", {{"a", {1, 2}, {-3, -4}}}, log_y);
    EXPECT_TRUE(absl::IsInternal(s)) << s;
    EXPECT_THAT(s.message(), HasSubstr("y range must be greater than 0 for log scale"));
  }

  ASSERT_TRUE(WriteHeatmapPng(dir + "/file.png", {1}, 1, 1, 1).ok());
  s = PlotCurves(dir + "/file.png/inside.png", "t", "x", "y", one);  // parent is a file
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("file.png"));
}

}  // namespace
}  // namespace mimetic::experiments
