#include "mimetic/experiments/campaign/plan.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

// Tests run in the runfiles root, which holds the plan and every preset.
constexpr char kRoot[] = ".";

CampaignPlan Parse(const std::string& text) {
  CampaignPlan plan;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &plan)) << text;
  return plan;
}

// One item a line (a raw string without "pb", so clang-format leaves it so), for the edits below.
constexpr char kGood[] = R"(
items { id: "check" kind: CHECK command: "bash gpu_bundle/run.sh OUT" device_minutes: 1 speed: "s" why: "w" }
items { id: "seed1" kind: FIGURE figure: "fig1" preset: "smoke" points: "seed1$" device_minutes: 1 speed: "s" why: "w" }
items { id: "later" kind: PENDING figure: "fig1" preset: "smoke" decided_by: "seed1" device_minutes: 1 speed: "s" why: "w" }
items { id: "future" kind: FUTURE figure: "scaling" why: "no preset" }
)";

TEST(PlanTest, TheRepositorysPlanIsValidAndInTheIssuesOrder) {
  absl::StatusOr<CampaignPlan> plan = LoadPlan(kPlanPath);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Every FIGURE item's preset exists and its points regex matches part of the preset's grid.
  EXPECT_TRUE(ValidatePlan(*plan, kRoot).ok()) << ValidatePlan(*plan, kRoot);
  std::vector<std::string> order;
  for (const CampaignItem& item : plan->items()) order.push_back(item.id());
  EXPECT_THAT(order, ::testing::ElementsAre("runner_cuda", "gpu_check_300", "fig1_paper_lr1e3_seed1",
                                            "fig1_paper_lr5e4_seed1", "fig1_paper_lr1e4_seed1",
                                            "fig1_paper_best_lr_seeds", "scaling_paper_widths", "fig9_gpu",
                                            "fig6_gpu", "fig4_gpu", "fig8_gpu", "fig3_gpu"));
  EXPECT_EQ(FindItem(*plan, "fig1_paper_best_lr_seeds").value()->kind(), CampaignItem::PENDING);
}

TEST(PlanTest, AGoodPlanValidatesAndItemsAreFoundById) {
  CampaignPlan plan = Parse(kGood);
  EXPECT_TRUE(ValidatePlan(plan, kRoot).ok()) << ValidatePlan(plan, kRoot);
  EXPECT_EQ(FindItem(plan, "seed1").value()->points(), "seed1$");
  EXPECT_THAT(FindItem(plan, "nope").status().message(), HasSubstr("check, seed1, later, future"));
}

// Each mistake is named: the item, the field, the value and what was expected.
TEST(PlanTest, EveryMistakeIsNamed) {
  struct Case {
    std::string edit_from, edit_to, expected;
  };
  const std::vector<Case> cases = {
      {"points: \"seed1$\"", "points: \"seed9$\"",
       "item 'seed1': fig1 --preset=smoke: --points=seed9$ matches none"},
      {"preset: \"smoke\" points", "preset: \"gpu\" points", "item 'seed1'"},
      {"figure: \"fig1\" preset: \"smoke\" points", "figure: \"fig99\" preset: \"smoke\" points", "fig99"},
      {"decided_by: \"seed1\"", "decided_by: \"future\"",
       "decided_by 'future'; expected the id of an earlier item"},
      {"id: \"later\"", "id: \"seed1\"", "'seed1' is used twice"},
      {"id: \"check\"", "id: \"Check\"", "id 'Check'; expected [a-z0-9_]+"},
      {"command: \"bash gpu_bundle/run.sh OUT\" ", "", "a CHECK item needs the command"},
      {"points: \"seed1$\" device_minutes: 1", "points: \"seed1$\" device_minutes: 0",
       "device_minutes 0; expected > 0"},
      {"why: \"no preset\"", "why: \"\"", "item 'future': why is empty"},
  };
  for (const Case& c : cases) {
    std::string text = kGood;
    const size_t at = text.find(c.edit_from);
    ASSERT_NE(at, std::string::npos) << c.edit_from;
    text.replace(at, c.edit_from.size(), c.edit_to);
    absl::Status s = ValidatePlan(Parse(text), kRoot);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.edit_to;
    EXPECT_THAT(s.message(), HasSubstr(c.expected)) << c.edit_to;
  }
}

TEST(PlanTest, AnUnparsablePlanNamesTheFileAndLine) {
  const std::string path = ::testing::TempDir() + "/bad_plan.textproto";
  FILE* f = fopen(path.c_str(), "w");
  fputs("items {\n  id: \"x\"\n  colour: 3\n}\n", f);
  fclose(f);
  absl::StatusOr<CampaignPlan> plan = LoadPlan(path);
  EXPECT_THAT(plan.status().message(), HasSubstr("bad_plan.textproto': line 3"));
}

}  // namespace
}  // namespace mimetic::experiments
