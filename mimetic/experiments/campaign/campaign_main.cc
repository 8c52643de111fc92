// The campaign's one binary (docs/gpu.md, "The campaign"): on the checkout, --merge brings a GPU slice's
// output into the kept results and --coverage rewrites the README's coverage; on the GPU machine,
// tools/gpu/campaign.sh calls --list, --prepare and --pack around the figure binary.
//
//   tools/bazel run //mimetic/experiments:campaign_tool -- --merge=/path/to/OUT
//   tools/bazel run //mimetic/experiments:campaign_tool -- --list
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/campaign/merge.h"
#include "mimetic/experiments/campaign/plan.h"
#include "mimetic/experiments/campaign/readme_coverage.h"
#include "mimetic/experiments/campaign/slice.h"
#include "mimetic/experiments/figures/figure.h"

ABSL_FLAG(
    std::string, merge, "",
    "merge a slice's output (a folder holding campaign/, or a .tgz of it) into the checkout's kept "
    "results, judge the figures on the points they have, replace the in-flight points, update README.md");
ABSL_FLAG(bool, coverage, false, "rewrite README.md's campaign coverage from the kept results");
ABSL_FLAG(
    bool, list, false,
    "print the plan's items, one a line, tab-separated (an empty field as -): kind id figure preset points "
    "jobs step_budget device_minutes command (what tools/gpu/campaign.sh reads)");
ABSL_FLAG(bool, prepare, false,
          "make the run directory of --figure/--preset under --runs from the kept results and in-flight "
          "points; print its path");
ABSL_FLAG(bool, pack, false, "copy what this slice made in --runs for --figure/--preset into --out");
ABSL_FLAG(std::string, root, "",
          "the checkout (default: the workspace of `bazel run`, else the current directory)");
ABSL_FLAG(std::string, plan, "", "the plan (default: <root>/mimetic/experiments/campaign/plan.textproto)");
ABSL_FLAG(std::string, figure, "", "with --prepare, --pack: the figure");
ABSL_FLAG(std::string, preset, "", "with --prepare, --pack: the preset");
ABSL_FLAG(std::string, runs, "", "with --prepare, --pack: the figure binary's --output_dir");
ABSL_FLAG(std::string, out, "", "with --pack: the slice's output folder (OUT/campaign)");
ABSL_FLAG(std::string, points, "",
          "with --prepare: the item's points regex; then it also prints how many of them are unfinished and "
          "how many it selects (tab-separated after the path)");
ABSL_FLAG(
    double, max_checkpoint_mb, 0,
    "with --pack: leave out a point in flight whose newest checkpoint is larger (0: no limit), naming it");
ABSL_FLAG(
    double, max_inflight_mb, 0,
    "with --pack: leave out the points in flight whose checkpoints would take the packed ones over this "
    "(0: no limit), naming them");
ABSL_FLAG(std::string, device, "", "with --pack: the GPU's name, or cpu");
ABSL_FLAG(std::string, commit, "", "with --pack: the commit the binaries were built from");
ABSL_FLAG(std::string, model_digest, "",
          "the model code's digest (tools/gpu/model_digest.sh); for --merge, default: the checkout's");

namespace mimetic::experiments {
namespace {

int Fail(const absl::Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  return 1;
}

std::string Root() {
  if (!absl::GetFlag(FLAGS_root).empty()) return absl::GetFlag(FLAGS_root);
  if (const char* w = std::getenv("BUILD_WORKSPACE_DIRECTORY")) return w;
  return ".";
}

// The checkout's model digest, from tools/gpu/model_digest.sh (one definition of it).
absl::StatusOr<std::string> CheckoutDigest(const std::string& root) {
  if (!absl::GetFlag(FLAGS_model_digest).empty()) return absl::GetFlag(FLAGS_model_digest);
  ASSIGN_OR_RETURN(core::ProgramResult r,
                   core::RunProgram({"bash", "tools/gpu/model_digest.sh", core::AbsolutePath(root)}, root));
  // The digest is the last line; a warning may come before it.
  std::vector<std::string> lines = absl::StrSplit(r.output, '\n', absl::SkipWhitespace());
  const std::string digest = lines.empty() ? "" : std::string(absl::StripAsciiWhitespace(lines.back()));
  if (r.exit_code != 0 || digest.size() != 16) {
    return absl::FailedPreconditionError(absl::StrCat("tools/gpu/model_digest.sh in '", root,
                                                      "' failed (exit ", r.exit_code, "): ", r.output,
                                                      "; give --model_digest"));
  }
  return digest;
}

absl::StatusOr<CampaignPlan> Plan(const std::string& root) {
  const std::string path =
      absl::GetFlag(FLAGS_plan).empty() ? absl::StrCat(root, "/", kPlanPath) : absl::GetFlag(FLAGS_plan);
  ASSIGN_OR_RETURN(CampaignPlan plan, LoadPlan(path));
  RETURN_IF_ERROR(ValidatePlan(plan, PresetRoot()));
  return plan;
}

int List(const CampaignPlan& plan) {
  for (const CampaignItem& i : plan.items()) {
    // "-" for an empty field: a shell's `read` with IFS=$'\t' merges empty fields.
    auto field = [](const std::string& v) { return v.empty() ? std::string("-") : v; };
    std::cout << absl::StrJoin(
                     {CampaignItem::Kind_Name(i.kind()), i.id(), field(i.figure()), field(i.preset()),
                      field(i.points()), absl::StrCat(i.jobs() > 0 ? i.jobs() : 1),
                      absl::StrCat(i.step_budget()), absl::StrCat(i.device_minutes()), field(i.command())},
                     "\t")
              << "\n";
  }
  return 0;
}

SliceFigure FromFlags(const std::string& root) {
  return {absl::GetFlag(FLAGS_figure), absl::GetFlag(FLAGS_preset),      root, PresetRoot(),
          absl::GetFlag(FLAGS_runs),   absl::GetFlag(FLAGS_model_digest)};
}

int Merge(const std::string& root, const std::string& returned) {
  absl::StatusOr<std::string> digest = CheckoutDigest(root);
  if (!digest.ok()) return Fail(digest.status());
  MergeOptions o{root, PresetRoot(), *digest,
                 absl::StrCat("tools/bazel run //mimetic/experiments:campaign_tool -- --merge=", returned)};
  absl::StatusOr<std::vector<MergedFigure>> merged = MergeCampaign(returned, o);
  if (!merged.ok()) return Fail(merged.status());
  for (const MergedFigure& m : *merged) {
    std::cout << m.figure << " `" << m.preset << "`: " << m.new_finished << " new points, " << m.kept
              << " of " << m.grid << " kept, " << m.in_flight << " in flight; " << m.tallies << "\n";
  }
  std::cout << "kept results, in-flight points and README.md updated in " << root
            << "; commit them (git add mimetic/experiments README.md)\n";
  return 0;
}

int Main() {
  const std::string root = Root();
  absl::StatusOr<CampaignPlan> plan = Plan(root);
  if (!plan.ok()) return Fail(plan.status());
  if (absl::GetFlag(FLAGS_list)) return List(*plan);
  if (!absl::GetFlag(FLAGS_merge).empty()) return Merge(root, absl::GetFlag(FLAGS_merge));
  if (absl::GetFlag(FLAGS_coverage)) {
    absl::Status s = WriteReadmeCoverage(root, PresetRoot(), *plan);
    return s.ok() ? 0 : Fail(s);
  }
  const SliceFigure f = FromFlags(root);
  if (absl::GetFlag(FLAGS_prepare) || absl::GetFlag(FLAGS_pack)) {
    if (f.figure.empty() || f.preset.empty() || f.runs.empty() || f.model_digest.empty()) {
      return Fail(absl::InvalidArgumentError(
          "--prepare and --pack need --figure, --preset, --runs and --model_digest"));
    }
  }
  if (absl::GetFlag(FLAGS_prepare)) {
    absl::StatusOr<std::string> dir = PrepareRunDir(f, std::cerr);
    if (!dir.ok()) return Fail(dir.status());
    std::cout << *dir;
    if (!absl::GetFlag(FLAGS_points).empty()) {
      absl::StatusOr<Unfinished> u = CountUnfinished(f, *dir, absl::GetFlag(FLAGS_points));
      if (!u.ok()) return Fail(u.status());
      std::cout << "\t" << u->unfinished << "\t" << u->selected;
    }
    std::cout << "\n";
    return 0;
  }
  if (absl::GetFlag(FLAGS_pack)) {
    PointProvenance made;
    made.set_device(absl::GetFlag(FLAGS_device));
    made.set_commit(absl::GetFlag(FLAGS_commit));
    made.set_model_digest(f.model_digest);
    made.set_date(absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone()));
    const PackLimits limits{static_cast<int64_t>(absl::GetFlag(FLAGS_max_checkpoint_mb) * 1e6),
                            static_cast<int64_t>(absl::GetFlag(FLAGS_max_inflight_mb) * 1e6)};
    absl::StatusOr<PackCount> n = PackRunDir(f, *plan, made, absl::GetFlag(FLAGS_out), limits);
    if (!n.ok()) return Fail(n.status());
    std::cout << f.figure << " " << f.preset << ": packed " << n->finished << " finished, " << n->in_flight
              << " in flight\n";
    for (const std::string& s : n->skipped) {
      std::cout << f.figure << " " << f.preset << ": not packed (the next slice starts it afresh), its "
                << "checkpoint is over --max_checkpoint_mb=" << absl::GetFlag(FLAGS_max_checkpoint_mb)
                << " or would take the packed ones over --max_inflight_mb="
                << absl::GetFlag(FLAGS_max_inflight_mb) << ": " << s << "\n";
    }
    return 0;
  }
  return Fail(
      absl::InvalidArgumentError("say what to do: --merge=OUT, --coverage, --list, --prepare or --pack"));
}

}  // namespace
}  // namespace mimetic::experiments

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the campaign that trains the paper-size figures a GPU slice at a time (docs/gpu.md, The campaign).\n"
      "usage: campaign_tool --merge=OUT | --coverage | --list | --prepare|--pack --figure=F --preset=P "
      "--runs=DIR "
      "...");
  absl::ParseCommandLine(argc, argv);
  return mimetic::experiments::Main();
}
