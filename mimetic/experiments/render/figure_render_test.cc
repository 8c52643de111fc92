#include "mimetic/experiments/render/figure_render.h"

#include <sys/stat.h>

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/experiments/render/png_test_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/figure_render_test_", name);
}

// Accuracy-like curves rising to `ceiling` with seed-dependent noise: rows = seeds.
std::vector<std::vector<double>> SeedCurves(const std::vector<double>& steps, double rate, double ceiling) {
  std::vector<std::vector<double>> ys;
  for (int seed = 0; seed < 3; ++seed) {
    std::vector<double> row;
    for (double step : steps) {
      const double noise = 0.04 * std::sin(0.7 * step / 100 + 2.1 * seed);
      row.push_back(std::clamp(ceiling * (1 - std::exp(-rate * step)) + noise, 0.0, 1.0));
    }
    ys.push_back(row);
  }
  return ys;
}

// The form of Fig. 1: two accuracy panels (bands, dotted at the training length and solid beyond),
// an annotated grid with labels (Fig. 3's form), and a causal attention map with the paste mark.
Figure DemoFigure() {
  std::vector<double> steps;
  for (int s = 0; s <= 2000; s += 100) steps.push_back(s);
  Figure figure;
  figure.title = "Demo: copy task, default vs mimetic";
  for (const char* metric : {"exact", "per-token"}) {
    CurvePanel panel{absl::StrCat("Copy, ", metric, " accuracy"), "step", absl::StrCat(metric, " accuracy")};
    panel.y_min = 0;
    panel.y_max = 1;
    for (int variant = 0; variant < 2; ++variant) {
      for (int length : {50, 100}) {
        const double ceiling = (variant == 1 ? 0.95 : 0.4) * (length == 50 ? 1.0 : 0.7);
        absl::StatusOr<Band> band = MeanBand(absl::StrCat(variant ? "mimetic" : "default", " @", length),
                                             steps, SeedCurves(steps, variant ? 0.004 : 0.001, ceiling));
        EXPECT_TRUE(band.ok()) << band.status();
        band->dotted = length == 50;
        band->color = variant;
        panel.bands.push_back(*band);
      }
    }
    figure.panels.push_back(panel);
  }
  HeatmapPanel grid{"Exact accuracy at 2x, per component set", "model", "components", "accuracy"};
  grid.rows = 4;
  grid.cols = 2;
  grid.values = {0.05, 0.10, 0.42, 0.51, 0.93, 0.88, kNaN, 0.97};
  grid.lo = 0;
  grid.hi = 1;
  grid.row_labels = {"none", "A", "A+C", "all"};
  grid.col_labels = {"Mamba 1", "Mamba 2"};
  grid.annotate = true;
  figure.panels.push_back(grid);

  const int64_t L = 40;
  HeatmapPanel map{"mimetic, layer 2 (head average)", "key position", "query position", "attention"};
  map.rows = map.cols = L;
  map.mark = 21;
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < L; ++j) {
      // A copy head: after the mark, query i attends to key i - 20; elsewhere to itself.
      const int64_t target = i >= 21 ? i - 20 : i;
      map.values.push_back(j > i ? kNaN : (j == target ? 0.9 : 0.1 / (i + 1)));
    }
  }
  figure.panels.push_back(map);
  return figure;
}

class FigureRenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProgramOnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox)";
  }
};

TEST_F(FigureRenderTest, DrawsAllPanelTypes) {
  const std::string dir = TestDir("all");
  const std::string png = dir + "/figure.png";
  const Figure figure = DemoFigure();
  ASSERT_TRUE(RenderFigure(png, figure).ok()) << RenderFigure(png, figure);

  const PixelSize size = FigureSize(figure);
  EXPECT_EQ(size.width, 2 * 520);
  EXPECT_EQ(size.height, 2 * 400 + kFigureTitleHeight);
  const DecodedPng image = DecodePng(png);
  EXPECT_EQ(image.width, static_cast<uint32_t>(size.width));
  EXPECT_EQ(image.height, static_cast<uint32_t>(size.height));
  EXPECT_GE(CountDistinctColors(image), 50u);
  // The bands' fills (20% of the line colour over white) and the lines themselves.
  for (int color : {0, 1}) {
    const Rgb line = ParseHexColor(LineColor(color));
    const auto blend = [](uint8_t c) {
      return static_cast<uint8_t>(std::lround((1 - kBandFillAlpha) * 255 + kBandFillAlpha * c));
    };
    const Rgb fill{blend(line.r), blend(line.g), blend(line.b)};
    EXPECT_GT(CountNear(image, fill, 3), 200u) << "band fill of colour " << color;
    EXPECT_GT(CountNear(image, line, 3), 200u) << "line of colour " << color;
  }
  // The heatmaps: both ends of viridis, and the red paste mark.
  EXPECT_GT(CountNear(image, ColormapColor(Colormap::kViridis, 0), 3), 1000u);
  EXPECT_GT(CountNear(image, ColormapColor(Colormap::kViridis, 1), 3), 100u);
  EXPECT_GT(CountNear(image, {0xe4, 0x1a, 0x1c}, 3), 50u);

  // The script and data stay next to the PNG, and redraw it.
  for (const char* name : {"figure.gp", "figure.panel0.dat", "figure.panel3.dat"})
    EXPECT_TRUE(core::FileExists(absl::StrCat(dir, "/", name))) << name;
  EXPECT_FALSE(core::FileExists(png + ".tmp"));
  ASSERT_EQ(::unlink(png.c_str()), 0);
  absl::StatusOr<core::ProgramResult> redraw = core::RunProgram({"gnuplot", "figure.gp"}, dir);
  ASSERT_TRUE(redraw.ok()) << redraw.status();
  EXPECT_EQ(redraw->exit_code, 0) << redraw->output;
  EXPECT_EQ(DecodePng(png).width, static_cast<uint32_t>(size.width));
}

TEST_F(FigureRenderTest, ABandOfOneXIsDrawnAsAMarkerWithItsErrorBar) {
  // A sweep that varies one factor at a time leaves panels with one x (:scaling's N 32 panel, width
  // 128 only): a line or area of one point draws nothing, so the reading vanished from the picture.
  CurvePanel panel{"N 32, 4 layers", "width D", "exact accuracy at 2L"};
  panel.y_min = 0;
  panel.y_max = 1;
  panel.bands.push_back(Band{"mimetic", {128}, {0.6}, {0.5}, {0.7}, false, 2});
  Figure figure;
  figure.panels.push_back(panel);
  const std::string png = TestDir("one_x") + "/f.png";
  ASSERT_TRUE(RenderFigure(png, figure).ok());
  EXPECT_GT(CountNear(DecodePng(png), ParseHexColor(LineColor(2)), 3), 100u);  // 37 before: the legend alone
}

TEST_F(FigureRenderTest, OddPanelCountAndNoTitle) {
  Figure figure = DemoFigure();
  figure.title.clear();
  figure.columns = 2;
  figure.panels.pop_back();  // 3 panels: two rows, the second half empty
  const std::string png = TestDir("odd") + "/f.png";
  ASSERT_TRUE(RenderFigure(png, figure).ok());
  const DecodedPng image = DecodePng(png);
  EXPECT_EQ(image.width, 1040u);
  EXPECT_EQ(image.height, 800u);
}

TEST_F(FigureRenderTest, InfinitiesTakeTheColourBarEnds) {
  HeatmapPanel map{"inf", "j", "i", "v"};
  map.rows = map.cols = 2;
  map.values = {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(), 0.5, kNaN};
  map.lo = 0;
  map.hi = 1;
  const std::string png = TestDir("inf") + "/f.png";
  ASSERT_TRUE(RenderFigure(png, Figure{"", 1, {map}}).ok());
  const DecodedPng image = DecodePng(png);
  EXPECT_GT(CountNear(image, ColormapColor(Colormap::kViridis, 0), 2), 5000u);
  EXPECT_GT(CountNear(image, ColormapColor(Colormap::kViridis, 1), 2), 5000u);
}

TEST_F(FigureRenderTest, PanelWithoutDataSaysSo) {
  Figure figure;
  CurvePanel empty{"nothing ran", "step", "accuracy"};
  empty.bands.push_back(Band{"default", {0, 100}, {kNaN, kNaN}, {kNaN, kNaN}, {kNaN, kNaN}});
  figure.panels.push_back(empty);
  EXPECT_TRUE(RenderFigure(TestDir("nodata") + "/f.png", figure).ok());
}

TEST_F(FigureRenderTest, FailureKeepsTheOldPngAndReportsGnuplot) {
  const std::string png = TestDir("keep") + "/figure.png";
  ASSERT_TRUE(RenderFigure(png, DemoFigure()).ok());
  const absl::StatusOr<std::string> before = core::ReadTextFile(png);
  ASSERT_TRUE(before.ok());

  Figure failing = DemoFigure();
  failing.gnuplot = "false";  // exits 1 without drawing
  absl::Status status = RenderFigure(png, failing);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("exited with status 1"));
  EXPECT_EQ(*core::ReadTextFile(png), *before);

  // gnuplot's own complaint comes back in the error (a stand-in that fails as gnuplot would).
  const std::string fake = TestDir("keep") + "/fake_gnuplot.sh";
  ASSERT_TRUE(
      core::WriteTextFile(fake, "#!/bin/sh\necho 'line 7: undefined variable: boom' >&2\nexit 1\n").ok());
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  failing.gnuplot = fake;
  status = RenderFigure(png, failing);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("exited with status 1:\nline 7: undefined variable: boom"));
  EXPECT_EQ(*core::ReadTextFile(png), *before);

  // gnuplot not installed: the error says which package to install.
  failing.gnuplot = "/nonexistent/gnuplot";
  status = RenderFigure(png, failing);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("gnuplot-nox"));
  EXPECT_EQ(*core::ReadTextFile(png), *before);
}

// The other forms the paper's figures take: Fig. 3's 16-combination grid, Fig. 5's many head dims
// (one colour each, dotted at 2x and solid at 4x) and accuracy against head dim on a log axis, and
// attention maps from models::LayerMap side by side.
TEST_F(FigureRenderTest, PaperForms) {
  Figure figure{"Paper forms", 2, {}, 560, 480};
  HeatmapPanel grid{"Fig. 3 form: exact accuracy at 2x", "model, eval length", "mimetic components",
                    "accuracy"};
  grid.rows = 16;
  grid.cols = 4;
  grid.lo = 0;
  grid.hi = 1;
  grid.col_labels = {"M1 @2x", "M1 @6x", "M2 @2x", "M2 @6x"};
  for (int combo = 0; combo < 16; ++combo) {
    std::string label;
    for (int bit = 0; bit < 4; ++bit) {
      if (combo & (1 << bit)) absl::StrAppend(&label, label.empty() ? "" : "+", std::string(1, "ADCV"[bit]));
    }
    grid.row_labels.push_back(label.empty() ? "none" : label);
    for (int c = 0; c < 4; ++c) grid.values.push_back(std::fmod(0.07 * combo + 0.11 * c, 1.0));
  }
  grid.annotate = true;
  figure.panels.push_back(grid);

  CurvePanel dims{"Fig. 5 form: linear attention head dims", "step", "exact accuracy"};
  dims.y_min = 0;
  dims.y_max = 1;
  std::vector<double> steps;
  for (int s = 0; s <= 1000; s += 50) steps.push_back(s);
  CurvePanel by_dim{"accuracy against head dim", "head dim", "exact accuracy at 2x"};
  by_dim.log_x = true;
  by_dim.y_min = 0;
  by_dim.y_max = 1;
  std::vector<double> head_dims;
  std::vector<std::vector<double>> finals(3);
  for (int k = 0; k < 8; ++k) {
    const int dim = 8 << k;
    head_dims.push_back(dim);
    for (int length : {2, 4}) {
      absl::StatusOr<Band> band = MeanBand(absl::StrCat("d=", dim, " @", length, "x"), steps,
                                           SeedCurves(steps, 0.003, (k + 1) / (length == 2 ? 8.0 : 10.0)));
      ASSERT_TRUE(band.ok());
      band->dotted = length == 2;
      band->color = k;
      dims.bands.push_back(*band);
    }
    for (int seed = 0; seed < 3; ++seed) finals[seed].push_back(0.1 * k + 0.03 * seed);
  }
  figure.panels.push_back(dims);
  absl::StatusOr<Band> final_band = MeanBand("linear attention", head_dims, finals);
  ASSERT_TRUE(final_band.ok());
  by_dim.bands.push_back(*final_band);
  figure.panels.push_back(by_dim);

  const int64_t L = 24;
  models::LayerMap layer;
  layer.length = L;
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j < L; ++j) {
      layer.map.push_back(j <= i ? std::exp(-0.3 * (i - j)) : 0.0);
      layer.mask.push_back(j <= i ? std::exp(-0.05 * (i - j)) : 0.0);
    }
  }
  for (bool use_mask : {false, true}) {
    absl::StatusOr<HeatmapPanel> panel =
        AttentionMapPanel(use_mask ? "default, layer 1 (mask)" : "default, layer 1 (channel average)", layer,
                          use_mask, /*mark=*/11);
    ASSERT_TRUE(panel.ok()) << panel.status();
    figure.panels.push_back(*panel);
  }
  const std::string png = TestDir("paper_forms") + "/figure.png";
  ASSERT_TRUE(RenderFigure(png, figure).ok()) << RenderFigure(png, figure);
  const DecodedPng image = DecodePng(png);
  EXPECT_EQ(image.width, 1120u);
  EXPECT_EQ(image.height, 3u * 480 + kFigureTitleHeight);
  for (int color : {0, 7}) EXPECT_GT(CountNear(image, ParseHexColor(LineColor(color)), 3), 50u) << color;
}

TEST(MeanBandTest, SeedsAtDifferentXs) {
  // Seed 1 stopped after step 100; seed 2 was also evaluated at step 50.
  absl::StatusOr<Band> band =
      MeanBandOfSeeds("m", {Series{"s0", {0, 100, 200}, {0.1, 0.5, 0.9}}, Series{"s1", {0, 100}, {0.3, 0.7}},
                            Series{"s2", {200, 0, 50, kNaN}, {0.7, 0.2, 0.4, 1.0}}});
  ASSERT_TRUE(band.ok()) << band.status();
  EXPECT_EQ(band->xs, (std::vector<double>{0, 50, 100, 200}));
  EXPECT_NEAR(band->mean[0], 0.2, 1e-12);  // all three seeds
  EXPECT_NEAR(band->mean[1], 0.4, 1e-12);  // seed 2 only
  EXPECT_EQ(band->lo[1], band->hi[1]);
  EXPECT_NEAR(band->mean[2], 0.6, 1e-12);  // seeds 0 and 1
  EXPECT_NEAR(band->mean[3], 0.8, 1e-12);  // seeds 0 and 2
  EXPECT_NEAR(band->hi[3] - band->mean[3], 0.1, 1e-12);

  EXPECT_THAT(MeanBandOfSeeds("m", {Series{"s0", {0, 1}, {0.5}}}).status().message(),
              HasSubstr("band \"m\": seed 0 has 2 xs but 1 ys"));
  EXPECT_THAT(
      MeanBandOfSeeds("m", {Series{"s0", {0}, {1}}, Series{"s1", {1, 1}, {0.5, 0.6}}}).status().message(),
      HasSubstr("seed 1 has two points at x = 1"));
}

TEST(AttentionMapPanelTest, BlanksTheUpperTriangleAndRangesTheMask) {
  models::LayerMap layer{2, {0.5, 0.0, 0.25, 0.75}, {1.0, 0.0, 0.5, 1.0}};
  absl::StatusOr<HeatmapPanel> map = AttentionMapPanel("m", layer, /*use_mask=*/false, 1);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->rows, 2);
  EXPECT_EQ(map->values[0], 0.5);
  EXPECT_TRUE(std::isnan(map->values[1]));
  EXPECT_EQ(map->values[2], 0.25);
  EXPECT_FALSE(map->lo.has_value());
  EXPECT_EQ(map->mark, 1);
  EXPECT_EQ(map->cb_label, "attention");
  absl::StatusOr<HeatmapPanel> mask = AttentionMapPanel("m", layer, /*use_mask=*/true);
  ASSERT_TRUE(mask.ok());
  EXPECT_EQ(mask->values[2], 0.5);
  EXPECT_EQ(mask->lo, 0);
  EXPECT_EQ(mask->hi, 1);
  layer.mask.pop_back();
  EXPECT_THAT(AttentionMapPanel("layer 3", layer, true).status().message(),
              HasSubstr("attention map \"layer 3\": length 2 with 3 mask values, expected 2 x 2"));
}

TEST(FigureRenderValidationTest, BadInputNamesThePanelAndBand) {
  const std::string png = TestDir("bad") + "/f.png";
  EXPECT_THAT(RenderFigure(png, Figure{"empty"}).message(), HasSubstr("has no panels"));

  Figure figure = DemoFigure();
  std::get<CurvePanel>(figure.panels[1]).bands[2].hi.pop_back();
  absl::Status status = RenderFigure(png, figure);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("panel 1 (\"Copy, per-token accuracy\"), band \"mimetic @50\""));

  figure = DemoFigure();
  std::get<HeatmapPanel>(figure.panels[2]).values.pop_back();
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("7 values for a (4, 2) grid, expected 8"));

  figure = DemoFigure();
  std::get<HeatmapPanel>(figure.panels[2]).row_labels.pop_back();
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("3 row labels for 4 rows"));

  figure = DemoFigure();
  std::get<HeatmapPanel>(figure.panels[3]).mark = 41;
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("mark 41 is outside the grid"));

  figure = DemoFigure();
  std::get<HeatmapPanel>(figure.panels[3]).annotate = true;
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("annotate is for grids of at most"));

  figure = DemoFigure();
  std::get<HeatmapPanel>(figure.panels[2]).lo = 1;
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("colour range [1, 1] is empty"));

  figure = DemoFigure();
  std::get<CurvePanel>(figure.panels[0]).log_x = true;  // the steps start at 0
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("on a logarithmic x axis"));

  figure = DemoFigure();
  figure.columns = 0;
  EXPECT_THAT(RenderFigure(png, figure).message(), HasSubstr("columns must be >= 1"));
  EXPECT_FALSE(core::FileExists(png));
}

TEST(MeanBandTest, MeanAndStandardErrorOverSeeds) {
  absl::StatusOr<Band> band = MeanBand("m", {0, 1, 2}, {{1, 2, kNaN}, {3, kNaN, kNaN}, {5, 4, kNaN}});
  ASSERT_TRUE(band.ok()) << band.status();
  EXPECT_EQ(band->name, "m");
  // x = 0: {1, 3, 5}: mean 3, sd 2, se 2 / sqrt(3).
  EXPECT_DOUBLE_EQ(band->mean[0], 3);
  EXPECT_NEAR(band->hi[0] - band->mean[0], 2 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(band->mean[0] - band->lo[0], 2 / std::sqrt(3.0), 1e-12);
  // x = 1: the seed without a value is left out: {2, 4}, se = sqrt(2) / sqrt(2) = 1.
  EXPECT_DOUBLE_EQ(band->mean[1], 3);
  EXPECT_NEAR(band->hi[1], 4, 1e-12);
  // x = 2: no seed: a gap.
  EXPECT_TRUE(std::isnan(band->mean[2]) && std::isnan(band->lo[2]) && std::isnan(band->hi[2]));

  absl::StatusOr<Band> one = MeanBand("one", {0}, {{0.5}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->lo[0], 0.5);
  EXPECT_EQ(one->hi[0], 0.5);

  absl::StatusOr<Band> bad = MeanBand("m", {0, 1}, {{1, 2}, {3}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("band \"m\": seed 1 has 1 values for 2 xs"));
}

}  // namespace
}  // namespace mimetic::experiments
