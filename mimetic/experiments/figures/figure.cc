#include "mimetic/experiments/figures/figure.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/figures/figure_common.h"
#include "mimetic/experiments/figures/variant_setup.h"

namespace mimetic::experiments {

FigureDef MakeFig1();
FigureDef MakeFig2();
FigureDef MakeFig3();
FigureDef MakeFig4();
FigureDef MakeFig5();
FigureDef MakeFig6();
FigureDef MakeFig7();
FigureDef MakeFig8();
FigureDef MakeFig9();
FigureDef MakeFig10();
FigureDef MakeFig11();
FigureDef MakeGammaFigure();
FigureDef MakeTransferFigure();
FigureDef MakeScalingFigure();

namespace {

namespace fs = std::filesystem;

std::string SetupLine(const Experiment& e, const PreparedTeacher& teacher) {
  std::string lengths = absl::StrJoin(e.eval().lengths(), ", ");
  const std::string note = teacher.description.empty() ? "" : absl::StrCat(". ", teacher.description);
  return absl::StrCat(e.variants_size(), " variant(s), ", e.seeds_size(), " seed(s), ", e.train().steps(),
                      " steps, batch ", e.train().batch_size(), ", evaluated at lengths ", lengths,
                      e.sweep().axes().empty() ? "" : absl::StrCat(", sweep axes: ", e.sweep().axes_size()),
                      "; config: sweep.textproto in the run directory", note);
}

}  // namespace

const std::vector<FigureDef>& Figures() {
  static const std::vector<FigureDef>* figures = new std::vector<FigureDef>{
      MakeFig1(),  MakeFig2(),        MakeFig3(),           MakeFig4(),         MakeFig5(),
      MakeFig6(),  MakeFig7(),        MakeFig8(),           MakeFig9(),         MakeFig10(),
      MakeFig11(), MakeGammaFigure(), MakeTransferFigure(), MakeScalingFigure()};
  return *figures;
}

absl::StatusOr<const FigureDef*> FindFigure(const std::string& id) {
  std::vector<std::string> ids;
  for (const FigureDef& f : Figures()) {
    if (f.id == id) return &f;
    ids.push_back(f.id);
  }
  return absl::NotFoundError(absl::StrCat("no figure '", id, "'; figures are: ", absl::StrJoin(ids, ", ")));
}

std::string PresetRoot() {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (const char* r = std::getenv("RUNFILES_DIR")) candidates.push_back(std::string(r) + "/mimetic");
  if (const char* t = std::getenv("TEST_SRCDIR")) candidates.push_back(std::string(t) + "/mimetic");
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(self.string() + ".runfiles/mimetic");
  candidates.push_back(".");
  for (const std::string& c : candidates) {
    if (fs::exists(fs::path(c) / PresetPath("fig1", "cpu"), ec)) return c;
  }
  return ".";
}

std::string PresetPath(const std::string& figure, const std::string& preset) {
  return absl::StrCat("mimetic/experiments/figures/", figure, "/", preset, ".textproto");
}

absl::StatusOr<Experiment> LoadPreset(const std::string& root, const std::string& figure,
                                      const std::string& preset, const std::vector<std::string>& overrides) {
  if (std::find(kPresets.begin(), kPresets.end(), preset) == kPresets.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--preset=", preset, " does not exist; presets are: ", absl::StrJoin(kPresets, ", ")));
  }
  RETURN_IF_ERROR(FindFigure(figure).status());
  std::error_code ec;
  if (!fs::exists(fs::path(root) / PresetPath(figure, preset), ec) &&
      std::find(kOptionalPresets.begin(), kOptionalPresets.end(), preset) != kOptionalPresets.end()) {
    std::vector<std::string> with;
    for (const FigureDef& f : Figures()) {
      if (fs::exists(fs::path(root) / PresetPath(f.id, preset), ec)) with.push_back(f.id);
    }
    return absl::NotFoundError(absl::StrCat(figure, " has no --preset=", preset, " (",
                                            PresetPath(figure, preset),
                                            "); figures with one: ", absl::StrJoin(with, ", ")));
  }
  return LoadExperiment((fs::path(root) / PresetPath(figure, preset)).string(), overrides);
}

std::vector<Claim> JudgeFigure(const FigureDef& def, const FigureRun& run) {
  absl::StatusOr<std::vector<Claim>> judged = def.claims(run);
  std::vector<Claim> claims;
  if (judged.ok()) {
    claims = *std::move(judged);
  } else {
    claims.push_back(Claim{def.id + ".all", def.title, std::string(judged.status().message()),
                           Verdict::kNotTested, "the claims could not be computed from this run"});
  }
  if (!def.paper_figure) {
    for (Claim& c : claims) c.kind = ClaimKind::kOtherTarget;
  }
  MarkNoRoom(run, &claims);
  MarkUnlearnedTeacher(run, &claims);
  return claims;
}

namespace {

// The points the verdicts stand on: finished ones, the rest not finished or refused on reading.
Coverage CoverageOf(const ExperimentSummary& summary) {
  Coverage c;
  c.total = static_cast<int>(summary.runs.size());
  std::set<std::string> refused;
  for (const auto& r : summary.refused) {
    refused.insert(r.dir);
    c.refused.push_back(r.why);
  }
  for (const RunResult& r : summary.runs) {
    if (r.finished) {
      ++c.judged;
    } else if (!refused.count(r.point.dir)) {
      c.missing.push_back(r.point.dir);
    }
  }
  return c;
}

}  // namespace

absl::StatusOr<ReportFigure> RunFigure(const FigureDef& def, const std::string& preset,
                                       const Experiment& experiment, const RunOptions& options,
                                       std::optional<SlurmSubmission>* submitted) {
  FigureRun run;
  run.preset = preset;
  ASSIGN_OR_RETURN(run.teacher, PrepareTeacher(experiment, options));
  run.experiment = run.teacher.experiment;
  ASSIGN_OR_RETURN(run.summary, RunExperiment(run.experiment, options));
  const fs::path dir(run.summary.run_dir);
  ReportFigure out;
  out.id = def.id;
  out.title = def.title;
  out.preset = preset;
  out.note = run.teacher.description;
  if (run.summary.submitted.has_value()) {
    // Handed to Slurm: nothing to draw or judge until the points finish (then --aggregate).
    const std::string& job = run.summary.submitted->job_id;
    out.status = job.empty() ? "not submitted" : absl::StrCat("submitted as Slurm job ", job);
    if (submitted != nullptr) *submitted = run.summary.submitted;
    return out;
  }
  out.summary_csv_path = (dir / "summary.csv").string();
  out.claims_md_path = (dir / "claims.md").string();
  // Training time: every process that trained a point, by its own clock, summed (not the wall clock
  // of a --jobs run, which overlaps them), plus this one's drawing.
  for (const RunResult& r : run.summary.runs) out.wall_seconds += r.finished ? r.result.seconds() : 0;
  if (run.teacher.run.has_value()) out.wall_seconds += run.teacher.run->result.seconds();
  std::vector<std::string> problems;
  const Coverage coverage = CoverageOf(run.summary);
  if (!coverage.missing.empty()) {
    problems.push_back(absl::StrCat(coverage.missing.size(), " grid points not finished"));
  }
  if (!coverage.refused.empty()) {
    problems.push_back(absl::StrCat(coverage.refused.size(), " grid points refused (see claims.md)"));
  }
  if (options.plots) {
    absl::StatusOr<Figure> figure = def.draw(run);
    absl::Status drawn = figure.ok() ? RenderFigure((dir / "figure.png").string(), *figure) : figure.status();
    if (drawn.ok()) {
      out.png_path = (dir / "figure.png").string();
    } else {
      problems.push_back(absl::StrCat("figure not drawn: ", drawn.message()));
    }
  }
  out.claims = JudgeFigure(def, run);
  out.room = RoomLines(run);
  RETURN_IF_ERROR(core::WriteTextFile(
      out.claims_md_path, ClaimsMarkdown(def.title, preset, SetupLine(run.experiment, run.teacher),
                                         out.claims, out.room, VariantSetupLines(run), coverage)));
  // The verdicts as data beside the table, so they can be gathered without recomputing them.
  RETURN_IF_ERROR(core::WriteTextFile((dir / "claims.json").string(), ClaimsJson(out.claims)));
  out.status = problems.empty() ? "done" : absl::StrJoin(problems, "; ");
  return out;
}

}  // namespace mimetic::experiments
