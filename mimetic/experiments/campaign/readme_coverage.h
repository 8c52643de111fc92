// The README's campaign coverage: for every figure and preset the plan trains, how many of its grid points
// the kept results hold ("Fig. 1 `paper`: 12 of 30 points"), how many are in flight, and the verdicts as
// judged on them (provisional on a partial grid). Written by code between two marker lines of README.md,
// by `campaign_tool --merge` after every merge and by `campaign_tool --coverage` alone; never edited by hand.
#ifndef MIMETIC_EXPERIMENTS_CAMPAIGN_README_COVERAGE_H_
#define MIMETIC_EXPERIMENTS_CAMPAIGN_README_COVERAGE_H_

#include <string>

#include "absl/status/statusor.h"
#include "mimetic/experiments/campaign/campaign.pb.h"

namespace mimetic::experiments {

inline constexpr char kCoverageBegin[] =
    "<!-- campaign coverage: written by `campaign_tool --merge` and `campaign_tool --coverage` "
    "(mimetic/experiments/campaign/readme_coverage.h); do not edit by hand -->";
inline constexpr char kCoverageEnd[] = "<!-- end of campaign coverage -->";

// The section's Markdown (without the markers) for the checkout at `root`, presets read from
// `preset_root`: one line per FIGURE or PENDING figure and preset of `plan`, in plan order.
absl::StatusOr<std::string> CoverageMarkdown(const std::string& root, const std::string& preset_root,
                                             const CampaignPlan& plan);

// Replaces what is between the markers in <root>/README.md with CoverageMarkdown. FailedPrecondition
// naming the README when it lacks either marker (they are written once by hand, in order).
absl::Status WriteReadmeCoverage(const std::string& root, const std::string& preset_root,
                                 const CampaignPlan& plan);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CAMPAIGN_README_COVERAGE_H_
