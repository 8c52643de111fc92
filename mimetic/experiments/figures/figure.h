// A paper figure as a target: a preset config (figures/<id>/<preset>.textproto), the sweep it runs, the
// picture it draws (figure.png) and the paper's claims about it, measured from the run and judged by code
// (claims.md). figure_main.cc runs one figure (or all of them into a report).
//
//   ASSIGN_OR_RETURN(const FigureDef* def, FindFigure("fig1"));
//   ASSIGN_OR_RETURN(ReportFigure out, RunFigure(*def, "cpu", /*overrides=*/{}, RunOptions{}));
//   // runs/fig1/figure.png, claims.md, summary.csv, points/...
//
// Adding a figure (mimetic/experiments/README.md): its folder figures/<id>/ (<id>.cc defining
// `FigureDef Make<Id>()`, cpu/paper/smoke presets, README.md), its entry in BUILD's FIGURES, and a row in
// Figures() (figure.cc). figure_folders_test names whichever is missing.
#ifndef MIMETIC_EXPERIMENTS_FIGURE_H_
#define MIMETIC_EXPERIMENTS_FIGURE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/render/figure_render.h"
#include "mimetic/experiments/render/report.h"
#include "mimetic/experiments/results/claims.h"
#include "mimetic/experiments/runner/runner.h"
#include "mimetic/experiments/runner/teacher.h"
#include "mimetic/models/attention_maps.h"

namespace mimetic::experiments {

// Every figure has cpu, paper and smoke presets; the optional `gpu` preset (Figs. 3, 4, 6, 8, 9 and
// scaling) holds the larger sizes that show the effect in minutes on one GPU where the cpu preset is cut
// to the 2-core budget.
inline const std::vector<std::string> kPresets = {"cpu", "gpu", "paper", "smoke"};
inline const std::vector<std::string> kOptionalPresets = {"gpu"};

// Every layer's attention map and average mask of a finished point's final model (figure_common.h
// ComputeFinalMaps).
struct FinalMaps {
  std::vector<models::LayerMap> maps;
  int64_t paste_start = 0;  // the token index of the separator before the paste (copy tasks)
  int64_t length = 0;       // the string's length
};

// What a figure's drawing and claims see: the experiment as run and its summary.
struct FigureRun {
  std::string preset;
  Experiment
      experiment;  // the preset with the overrides, unresolved (sweep.h), its teacher entries filled in
  ExperimentSummary summary;
  PreparedTeacher teacher;  // the experiment's teacher stage (teacher.h); empty file when it has none
  // When set, a point's final maps come from here instead of its checkpoint: the seam tests use to give
  // synthetic maps to the map claims.
  std::function<absl::StatusOr<FinalMaps>(const RunResult&)> maps;
};

struct FigureDef {
  std::string id;     // "fig1"
  std::string title;  // "Fig. 1: copy with a 4-layer Mamba, default vs mimetic init"
  std::function<absl::StatusOr<Figure>(const FigureRun&)> draw;
  std::function<absl::StatusOr<std::vector<Claim>>(const FigureRun&)> claims;
  // False for a target that is not one of the paper's figures (γ-init, the attention-to-Mamba
  // transfer): its claims are counted as "other target", apart from the paper's.
  bool paper_figure = true;
};

// Every figure, in the paper's order.
const std::vector<FigureDef>& Figures();
// NotFound listing the known ids.
absl::StatusOr<const FigureDef*> FindFigure(const std::string& id);

// The root the presets are read from, as a binary sees it: its runfiles (bazel run, bazel test, the GPU
// bundle's RUNFILES_DIR) or the current directory (a checkout).
std::string PresetRoot();

// The preset's path relative to the repository root
// ("mimetic/experiments/figures/fig1/cpu.textproto").
std::string PresetPath(const std::string& figure, const std::string& preset);
// Loads a preset from `root` (the repository or the runfiles root) and applies the overrides. InvalidArgument
// naming the preset for an unknown one (listing kPresets); NotFound naming the figures that have it for
// an optional preset the figure lacks.
absl::StatusOr<Experiment> LoadPreset(const std::string& root, const std::string& figure,
                                      const std::string& preset, const std::vector<std::string>& overrides);

// The figure's claims on `run`, each with its kind: every claim of a figure that is not the paper's is
// kOtherTarget. Claims that cannot be computed come back as one claim "<id>.all", not tested, saying why.
std::vector<Claim> JudgeFigure(const FigureDef& def, const FigureRun& run);

// Trains the preset's teacher first when it has one (teacher.h: a stand-in for a pretrained checkpoint,
// which claims.md and the report's note then describe), runs the figure's sweep (resuming finished and
// unfinished points), then writes figure.png,
// claims.md and claims.json (ClaimsJson) into the run directory; returns the entry for the paper's report. A
// figure or claim that cannot be drawn or computed is reported (status, a claim "not tested" saying why), not
// fatal. With options.launcher kSlurm the sweep is submitted instead, nothing is drawn, and the submission is
// stored in `submitted` (when given); RunFigure with options.aggregate_only draws it once finished.
absl::StatusOr<ReportFigure> RunFigure(const FigureDef& def, const std::string& preset,
                                       const Experiment& experiment, const RunOptions& options,
                                       std::optional<SlurmSubmission>* submitted = nullptr);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURE_H_
