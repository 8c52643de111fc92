#include "mimetic/experiments/campaign/readme_coverage.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A checkout with Fig. 1 smoke results of 1 of its 4 points and one point in flight; presets from the
// test's runfiles (".").
class ReadmeCoverageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / "checkout";
    fs::remove_all(root_);
    const fs::path kept = root_ / "mimetic/experiments/figures/fig1/results/smoke";
    Write(kept / "points/default/seed1/result.textproto", "variant: \"default\"");
    Write(kept / "claims.json", "[]");
    Write(root_ /
              "mimetic/experiments/campaign/inflight/fig1_smoke/points/mimetic/seed1/checkpoints/"
              "step_00000003.safetensors",
          "x");
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"(items { id: "a" kind: FIGURE figure: "fig1" preset: "smoke" points: "seed1$" }
           items { id: "b" kind: FIGURE figure: "fig1" preset: "smoke" points: "seed2$" }
           items { id: "c" kind: CHECK command: "true" })",
        &plan_));
  }
  static void Write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    ASSERT_TRUE(core::WriteTextFile(p.string(), text).ok());
  }
  fs::path root_;
  CampaignPlan plan_;
};

TEST_F(ReadmeCoverageTest, OneLinePerFigureAndPresetWithItsPointsInFlightAndVerdicts) {
  absl::StatusOr<std::string> md = CoverageMarkdown(root_.string(), ".", plan_);
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_THAT(*md, HasSubstr("- Fig. 1 `smoke`: 1 of 4 points, 1 in flight; provisional: "));
  EXPECT_THAT(*md, HasSubstr("(mimetic/experiments/figures/fig1/results/smoke/claims.md)"));
  EXPECT_EQ(md->find("Fig. 1", md->find("Fig. 1") + 1), std::string::npos);  // once, though in two items
}

TEST_F(ReadmeCoverageTest, OnlyWhatIsBetweenTheMarkersChangesAndMissingMarkersAreNamed) {
  const fs::path readme = root_ / "README.md";
  Write(readme, absl::StrCat("# title\n\nbefore\n", kCoverageBegin, "\nstale\n", kCoverageEnd, "\nafter\n"));
  ASSERT_TRUE(WriteReadmeCoverage(root_.string(), ".", plan_).ok());
  const std::string text = core::ReadTextFile(readme.string()).value();
  EXPECT_THAT(text, HasSubstr("before\n"));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(kCoverageEnd, "\nafter\n")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("stale")));
  EXPECT_THAT(text, HasSubstr("1 of 4 points"));
  // Written twice, the same text.
  ASSERT_TRUE(WriteReadmeCoverage(root_.string(), ".", plan_).ok());
  EXPECT_EQ(core::ReadTextFile(readme.string()).value(), text);
  Write(readme, "# no markers\n");
  absl::Status s = WriteReadmeCoverage(root_.string(), ".", plan_);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("lacks the campaign coverage markers"));
}

}  // namespace
}  // namespace mimetic::experiments
