// The campaign's plan (campaign/plan.textproto, a CampaignPlan): the ordered work that trains the paper-size
// figures on short turns of GPU time, a slice at a time. tools/gpu/campaign.sh walks its FIGURE items in
// order on the GPU machine; CHECK items are commands a person runs first; PENDING items wait for an
// earlier item's results; FUTURE items name work without a preset yet (docs/gpu.md, "The campaign").
//
//   ASSIGN_OR_RETURN(CampaignPlan plan, LoadPlan("mimetic/experiments/campaign/plan.textproto"));
//   RETURN_IF_ERROR(ValidatePlan(plan, preset_root));
#ifndef MIMETIC_EXPERIMENTS_CAMPAIGN_PLAN_H_
#define MIMETIC_EXPERIMENTS_CAMPAIGN_PLAN_H_

#include <string>

#include "absl/status/statusor.h"
#include "mimetic/experiments/campaign/campaign.pb.h"

namespace mimetic::experiments {

// The plan in the repository, relative to its root.
inline constexpr char kPlanPath[] = "mimetic/experiments/campaign/plan.textproto";

// Parses the plan at `path` (text format). InvalidArgument naming the file and the parser's complaint.
absl::StatusOr<CampaignPlan> LoadPlan(const std::string& path);

// OK when every item is complete for its kind: a unique id of [a-z0-9_]; a positive device_minutes with
// the speed it rests on, and a why; CHECK: a command; FIGURE and PENDING: a figure and a preset it has
// (read from `preset_root`, the repository or a binary's runfiles); FIGURE: a points regex that matches
// at least one point of that preset's grid, jobs and step_budget >= 0; PENDING: decided_by naming an
// earlier item; FUTURE: a why and no points. InvalidArgument naming the item, the field, its value and
// what was expected.
absl::Status ValidatePlan(const CampaignPlan& plan, const std::string& preset_root);

// The item called `id`. NotFound listing the plan's ids.
absl::StatusOr<const CampaignItem*> FindItem(const CampaignPlan& plan, const std::string& id);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CAMPAIGN_PLAN_H_
