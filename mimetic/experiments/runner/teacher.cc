#include "mimetic/experiments/runner/teacher.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/checkpoint_init.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/checkpoint.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// "2 x attention, d_model 64" from a resolved spec.
std::string ModelLine(const models::ModelSpec& spec) {
  std::string kinds;
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::string k = models::MixerKind(spec.layers(i));
    if (i == 0 || k != models::MixerKind(spec.layers(i - 1)))
      absl::StrAppend(&kinds, kinds.empty() ? "" : "+", k);
  }
  return absl::StrCat(spec.layers_size(), "-layer ", kinds, ", d_model ", spec.d_model());
}

std::string Describe(const Experiment& t, const models::ModelSpec& spec, const RunResult& r) {
  std::string init;
  for (const InitTransform& i : t.variants(0).init())
    absl::StrAppend(&init, init.empty() ? "" : ", ", OneLineText(i));
  std::string acc;
  for (const LengthAccuracy& a : r.result.final()) {
    absl::StrAppend(&acc, acc.empty() ? "" : ", ",
                    absl::StrFormat("%.2f at length %d", a.exact(), a.length()));
  }
  return absl::StrCat(
      "The checkpoint is a stand-in teacher that this target trained itself first (not a "
      "published model): a ",
      ModelLine(spec), " model, init ", init.empty() ? "mamba_ssm's default" : init, ", trained ",
      r.result.steps(), " steps (batch ", t.train().batch_size(), ", lr ", t.train().lr(), ", seed ",
      t.seeds(0), ") on ", OneLineText(t.task()), "; final exact accuracy ", acc.empty() ? "n/a" : acc,
      "; weights: ", t.name(), "/", kTeacherWeightsFile, " in the run directory");
}

}  // namespace

absl::StatusOr<PreparedTeacher> PrepareTeacher(const Experiment& experiment, const RunOptions& options) {
  PreparedTeacher out;
  out.experiment = experiment;
  if (!experiment.has_teacher()) return out;
  Experiment t = experiment.teacher();
  if (t.name().empty()) t.set_name("teacher");
  t.set_output_dir((fs::path(experiment.output_dir()) / experiment.name()).string());
  if (!t.has_device()) t.set_device(experiment.device());
  if (options.launcher == RunOptions::Launcher::kSlurm && options.slurm.dry_run && !options.aggregate_only) {
    // Nothing may be written: say what would happen, leave the teacher entries as they are.
    out.description = absl::StrCat("dry run: the teacher would first train here in ",
                                   (fs::path(t.output_dir()) / t.name()).string(),
                                   " and the submitted sweep read its teacher.safetensors");
    return out;
  }
  RunOptions local = options;
  local.launcher = RunOptions::Launcher::kLocal;
  local.jobs = 1;
  ASSIGN_OR_RETURN(ExperimentSummary summary, RunExperiment(t, local));
  if (summary.runs.size() != 1 || !summary.runs[0].finished) {
    return absl::FailedPreconditionError(
        absl::StrCat("the teacher in ", summary.run_dir,
                     " has not finished training; running the same command again resumes it"));
  }
  const RunResult& r = summary.runs[0];
  ASSIGN_OR_RETURN(Experiment point, PointExperiment(t, r.point));
  ASSIGN_OR_RETURN(init::Transform transform, MakeTransform(point.variants(0)));
  ASSIGN_OR_RETURN(init::Model model, init::MakeModel(VariantModel(point, point.variants(0)), transform,
                                                      core::Key::FromSeed(r.point.seed)));
  out.file = (fs::path(summary.run_dir) / kTeacherWeightsFile).string();
  // Drawing and judging (--aggregate) reuses the weights written when the teacher finished: saved results
  // (saved_results.h) keep them but not the checkpoints.
  std::error_code ec;
  if (!options.aggregate_only || !fs::is_regular_file(out.file, ec)) {
    // The final weights: the point's model structure, filled from its latest checkpoint.
    const fs::path ckpts = fs::path(summary.run_dir) / r.point.dir / "checkpoints";
    ASSIGN_OR_RETURN(train::LoadedCheckpoint ckpt, train::LoadLatestCheckpoint(ckpts.string(), model.params));
    RETURN_IF_ERROR(init::WriteMambaCheckpoint(
        out.file, ckpt.state.params,
        {{"source", absl::StrCat("teacher of ", experiment.name(), ", trained by mimetic")},
         {"step", absl::StrCat(ckpt.state.step)}}));
  }
  out.description = Describe(t, model.spec, r);
  out.run = r;
  for (const InitTransform& i : t.variants(0).init()) out.from_mimetic_init |= i.has_mimetic();
  out.experiment.clear_teacher();
  for (Variant& v : *out.experiment.mutable_variants()) {
    for (InitTransform& i : *v.mutable_init()) {
      if (!IsCheckpointKind(i) || !CheckpointOf(i).teacher()) continue;
      CheckpointInit* c = MutableCheckpointOf(&i);
      c->set_teacher(false);
      c->set_path(out.file);
      *c->mutable_model() = model.spec;
    }
  }
  return out;
}

}  // namespace mimetic::experiments
