// The paper's figures as targets:
//   tools/bazel run //mimetic/experiments:fig1 [-- --preset=cpu|gpu|paper|smoke --jobs=2 --set field=value]
//   tools/bazel run //mimetic/experiments:paper     (every figure, then runs/paper/report.md and .html)
// Each figure runs its preset's sweep (resumable), then writes runs/<name>/figure.png, claims.md,
// summary.csv and per-point logs; with --launcher=slurm it submits the sweep as a job array instead,
// and --aggregate draws it once the elements have finished. `--help` lists the flags.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/untrusted_tree.h"
#include "mimetic/experiments/config/checkpoint_init.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/figures/saved_results.h"
#include "mimetic/experiments/render/report.h"
#include "mimetic/experiments/runner/run_flags.h"
#include "mimetic/experiments/runner/stop_signal.h"
#include "mimetic/experiments/runner/threads.h"

ABSL_FLAG(std::string, figure, "",
          "the figure to run (fig1 ... fig11, gamma, transfer), or \"all\" for every figure and the report");
ABSL_FLAG(
    std::string, preset, "cpu",
    "cpu: sized for 2 CPU cores; gpu (Figs. 3, 4, 6, 8, 9, scaling): the whole grid at the cpu sizes, for a "
    "GPU; paper: the paper's sizes, steps, seeds and learning-rate sweep (for a GPU); smoke: seconds, for "
    "tests");
ABSL_FLAG(
    std::string, pretrained, "",
    "local safetensors file(s) of the published checkpoints a preset reads (Figs. 10, 11 at --preset=paper): "
    "/path/model.safetensors, or state-spaces/mamba-130m=/path/a.safetensors,state-spaces/mamba-370m=/path/"
    "b.safetensors; without it such a preset says which file to fetch and from where");
ABSL_FLAG(std::string, output_dir, "runs",
          "where run directories go (relative: to where `bazel run` started)");
ABSL_FLAG(bool, save_results, false,
          "after drawing and judging, keep the figure's small results in the checkout, "
          "mimetic/experiments/figures/<id>/results/<preset>/ (saved_results.h), with run.md");
ABSL_FLAG(bool, from_results, false,
          "draw and judge each figure again from its saved results in the checkout, without training (a copy "
          "in <output_dir>/from_results/; the report in <output_dir>/paper/)");
ABSL_FLAG(
    std::string, results_root, "",
    "the checkout --save_results and --from_results use (default: the workspace of `bazel run`, else .)");
ABSL_FLAG(std::string, results_note, "",
          "with --save_results: a line for run.md, e.g. that the machine was not idle");

namespace mimetic::experiments {
namespace {

// The command line as given (before flag parsing), for run.md.
std::vector<std::string>& CommandArgs() {
  static std::vector<std::string> args;
  return args;
}

namespace fs = std::filesystem;

// --pretrained as overrides of the preset's entries (checkpoint_init.h), read from the unvalidated preset.
absl::StatusOr<std::vector<std::string>> PretrainedFileOverrides(const std::string& root,
                                                                 const std::string& id,
                                                                 const std::string& preset,
                                                                 const std::string& flag) {
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile((fs::path(root) / PresetPath(id, preset)).string()));
  ASSIGN_OR_RETURN(Experiment e, ParseExperiment(text));
  return PretrainedPathOverrides(e, flag);
}

int Fail(const absl::Status& s) {
  std::cerr << "error: " << s.message() << "\n";
  return 1;
}

// A figure that did not run or failed, in its place in the report.
ReportFigure Missing(const FigureDef& def, const std::string& preset, const std::string& why) {
  ReportFigure missing;
  missing.id = def.id;
  missing.title = def.title;
  missing.preset = preset;
  missing.status = why;
  return missing;
}

// --results_root, or the checkout `bazel run` started from, or the current directory.
std::string ResultsRoot() {
  if (!absl::GetFlag(FLAGS_results_root).empty()) return absl::GetFlag(FLAGS_results_root);
  if (const char* w = std::getenv("BUILD_WORKSPACE_DIRECTORY")) return w;
  return ".";
}

// The command as a user types it, the figure's target and the flags given (not the results flags), for
// run.md.
std::string UserCommand(const std::string& figure) {
  std::vector<std::string> kept;
  for (const std::string& a : CommandArgs()) {
    if (absl::StartsWith(a, "--figure=") || absl::StartsWith(a, "--save_results") ||
        absl::StartsWith(a, "--results_"))
      continue;
    kept.push_back(a.find_first_of(" \"'$[]{}") == std::string::npos ? a : absl::StrCat("'", a, "'"));
  }
  return absl::StrCat("tools/bazel run //mimetic/experiments:", figure == "all" ? "paper" : figure,
                      kept.empty() ? "" : " -- ", absl::StrJoin(kept, " "));
}

// --figure: one id, a comma-separated list, or "all" (the paper's order).
absl::StatusOr<std::vector<const FigureDef*>> SelectFigures(const std::string& which) {
  std::vector<const FigureDef*> defs;
  if (which == "all") {
    for (const FigureDef& f : Figures()) defs.push_back(&f);
    return defs;
  }
  for (const std::string& id : std::vector<std::string>(absl::StrSplit(which, ','))) {
    ASSIGN_OR_RETURN(const FigureDef* d, FindFigure(id));
    defs.push_back(d);
  }
  return defs;
}

// The figures whose presets loaded and validated (every one before anything
// runs), their experiments, and those skipped for a published checkpoint nobody
// gave.
struct LoadedPresets {
  std::vector<const FigureDef*> defs;
  std::vector<Experiment> experiments;
  std::vector<ReportFigure> skipped;
};

absl::StatusOr<LoadedPresets> LoadPresets(const std::vector<const FigureDef*>& defs,
                                          const std::string& preset,
                                          const std::vector<std::string>& overrides) {
  const std::string root = PresetRoot();
  const std::string pretrained = absl::GetFlag(FLAGS_pretrained);
  bool pretrained_used = false;
  LoadedPresets loaded;
  for (const FigureDef* d : defs) {
    std::vector<std::string> sets = overrides;
    sets.insert(sets.begin(), absl::StrCat("output_dir=", absl::GetFlag(FLAGS_output_dir)));
    bool has_file = false;
    if (!pretrained.empty()) {
      // The preset's published-model entries get the local file (before validation, which needs it).
      absl::StatusOr<std::vector<std::string>> files =
          PretrainedFileOverrides(root, d->id, preset, pretrained);
      if (files.ok()) {
        sets.insert(sets.end(), files->begin(), files->end());
        pretrained_used = has_file = true;
      } else if (defs.size() == 1) {
        return files.status();
      }
    }
    absl::StatusOr<Experiment> e = LoadPreset(root, d->id, preset, sets);
    if (!e.ok()) {
      const absl::Status named(e.status().code(),
                               absl::StrCat(d->id, " --preset=", preset, ": ", e.status().message()));
      // With several figures asked for (`all`), one that reads a published model nobody gave does not
      // stop the others (a researcher on a GPU without the files still gets the rest); it is named now,
      // before anything runs, in the report, and in the exit status.
      // Likewise a figure without an optional preset (`--figure=all --preset=gpu`) is named and skipped.
      std::error_code exists_error;  // the non-throwing overload: an unreadable folder is "lacks" too
      const bool lacks_preset = !fs::exists(fs::path(root) / PresetPath(d->id, preset), exists_error);
      if (defs.size() == 1 || has_file ||
          (!lacks_preset && !PretrainedFileOverrides(root, d->id, preset, "any").ok()))
        return named;
      std::cerr << "skipped: " << named.message() << "\n";
      loaded.skipped.push_back(Missing(*d, preset, absl::StrCat("not run: ", named.message())));
      continue;
    }
    ResolveOutputDir(&*e);
    loaded.experiments.push_back(*e);
    loaded.defs.push_back(d);
  }
  if (loaded.defs.empty()) return absl::FailedPreconditionError("no figure can run (see the lines above)");
  if (!pretrained.empty() && !pretrained_used) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pretrained=", pretrained, ": none of these presets reads a published checkpoint"));
  }
  return loaded;
}

// --from_results: each figure's run directory becomes a restored copy of its saved results under
// <output_dir>/from_results, which --aggregate then draws and judges; a figure without saved results is
// named in the report instead.
absl::Status UseSavedResults(const std::string& preset, LoadedPresets* loaded) {
  LoadedPresets kept;
  kept.skipped = loaded->skipped;
  for (size_t i = 0; i < loaded->defs.size(); ++i) {
    const FigureDef& def = *loaded->defs[i];
    Experiment e = loaded->experiments[i];
    e.set_output_dir((fs::path(e.output_dir()) / "from_results").string());
    const std::string saved = ResultsPath(ResultsRoot(), def.id, preset);
    absl::Status s = core::CheckNoLinksBelow(ResultsRoot(), saved);
    if (s.ok()) s = RestoreResults(saved, (fs::path(e.output_dir()) / e.name()).string());
    if (!s.ok()) {
      std::cerr << "skipped: " << def.id << ": " << s.message() << "\n";
      kept.skipped.push_back(Missing(def, preset, absl::StrCat("not drawn: ", s.message())));
      continue;
    }
    kept.defs.push_back(&def);
    kept.experiments.push_back(std::move(e));
  }
  if (kept.defs.empty())
    return absl::NotFoundError("--from_results: no figure has saved results (see above)");
  *loaded = std::move(kept);
  return absl::OkStatus();
}

// --save_results after a figure was drawn and judged: its small results into the checkout.
absl::Status SaveFigureResults(const FigureDef& def, const std::string& preset, const Experiment& e,
                               const ReportFigure& drawn, const RunOptions& options, int finished_before,
                               absl::Time start) {
  const std::string run_dir = (fs::path(e.output_dir()) / e.name()).string();
  RunRecord record;
  record.figure = def.id;
  record.preset = preset;
  record.command = UserCommand(def.id);
  record.machine = MachineLine();
  record.finished = absl::Now();
  record.aggregate_only = options.aggregate_only;
  record.points = CountFinishedPoints(run_dir);
  record.trained_here = record.points - finished_before;
  record.wall_seconds = absl::ToDoubleSeconds(record.finished - start);
  record.training_seconds = drawn.wall_seconds;
  record.note = absl::GetFlag(FLAGS_results_note);
  const std::string dest = ResultsPath(ResultsRoot(), def.id, preset);
  // A checkout is anyone's: a folder of it committed as a link must not carry the save outside it.
  RETURN_IF_ERROR(core::CheckNoLinksBelow(ResultsRoot(), dest));
  RETURN_IF_ERROR(SaveResults(run_dir, dest, RunMarkdown(record)));
  std::cout << "  saved: " << dest << "\n";
  return absl::OkStatus();
}

// Runs each loaded figure in turn, appending its result (or why it failed) to
// `report`. Returns the number of failures, or the exit status 128 + n when a
// stop signal arrived.
int RunFigures(const LoadedPresets& loaded, const std::string& preset, const RunOptions& options,
               std::vector<ReportFigure>* report, bool* stopped) {
  int failures = 0;
  for (size_t i = 0; i < loaded.defs.size(); ++i) {
    const FigureDef& def = *loaded.defs[i];
    std::cerr << "== " << def.title << " (preset " << preset << ") ==\n";
    std::optional<SlurmSubmission> submitted;
    const Experiment& e = loaded.experiments[i];
    const int finished_before = CountFinishedPoints((fs::path(e.output_dir()) / e.name()).string());
    const absl::Time start = absl::Now();
    absl::StatusOr<ReportFigure> r = RunFigure(def, preset, e, options, &submitted);
    if (const int signo = StopSignalOf(r.status()); signo != 0) {
      std::cerr << def.id << ": " << r.status().message() << "\n";
      *stopped = true;
      return 128 + signo;
    }
    if (!r.ok()) {
      std::cerr << "error: " << def.id << ": " << r.status().message()
                << "\n(finished points are kept; running the same command "
                   "again resumes)\n";
      ++failures;
      report->push_back(Missing(def, preset, absl::StrCat("failed: ", r.status().message())));
      continue;
    }
    if (submitted.has_value()) {
      std::cout << SubmissionMessage(*submitted, loaded.experiments[i].name(), options.slurm.dry_run);
      continue;
    }
    std::cout << def.title << ": " << TalliesLine(r->claims) << "\n  " << r->claims_md_path << "\n  "
              << (r->png_path.empty() ? "(no figure: " + r->status + ")" : r->png_path) << "\n";
    report->push_back(*r);
    if (absl::GetFlag(FLAGS_save_results)) {
      const absl::Status saved = SaveFigureResults(def, preset, e, *r, options, finished_before, start);
      if (!saved.ok()) {
        std::cerr << "error: " << def.id << ": " << saved.message() << "\n";
        ++failures;
      }
    }
  }
  return failures;
}

// runs/paper/report.{md,html} (runs/paper_<preset>/ for other presets), figures
// in the paper's order with skipped ones in their place.
absl::Status WriteReportForAll(const std::string& output_dir, const std::string& preset,
                               const std::string& source, std::vector<ReportFigure> report) {
  auto position = [](const ReportFigure& f) {
    const std::vector<FigureDef>& all = Figures();
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i].id == f.id) return i;
    }
    return all.size();
  };
  std::stable_sort(report.begin(), report.end(),
                   [&](const ReportFigure& a, const ReportFigure& b) { return position(a) < position(b); });
  const std::string dir = (fs::path(output_dir) / (preset == "cpu" ? "paper" : "paper_" + preset)).string();
  RETURN_IF_ERROR(WriteReport(dir,
                              absl::StrCat("mimetic: reproducing the paper (preset ", preset, source, ")"),
                              MachineLine(), report));
  std::cout << "report: " << dir << "/report.md and " << dir << "/report.html\n";
  return absl::OkStatus();
}

int Main(const std::vector<std::string>& overrides) {
  const std::string which = absl::GetFlag(FLAGS_figure);
  const std::string preset = absl::GetFlag(FLAGS_preset);
  if (which.empty())
    return Fail(absl::InvalidArgumentError("--figure is required (fig1 ... fig11, gamma, transfer, or all)"));
  InstallStopHandlers();  // SIGINT / SIGTERM: checkpoint, then exit 128 + n
                          // (stop_signal.h)
  absl::StatusOr<RunOptions> options = OptionsFromFlags();
  if (!options.ok()) return Fail(options.status());
  absl::StatusOr<std::vector<const FigureDef*>> defs = SelectFigures(which);
  if (!defs.ok()) return Fail(defs.status());
  const bool from_results = absl::GetFlag(FLAGS_from_results);
  if (from_results &&
      (absl::GetFlag(FLAGS_save_results) || options->launcher == RunOptions::Launcher::kSlurm))
    return Fail(
        absl::InvalidArgumentError("--from_results draws saved results: not with --save_results or "
                                   "--launcher=slurm"));
  absl::StatusOr<LoadedPresets> loaded = LoadPresets(*defs, preset, overrides);
  if (!loaded.ok()) return Fail(loaded.status());
  const std::string report_root = loaded->experiments[0].output_dir();
  if (from_results) {
    options->aggregate_only = true;
    if (absl::Status s = UseSavedResults(preset, &*loaded); !s.ok()) return Fail(s);
  }
  std::vector<ReportFigure> report = loaded->skipped;
  bool stopped = false;
  const int ran = RunFigures(*loaded, preset, *options, &report, &stopped);
  if (stopped) return ran;
  const int failures = static_cast<int>(loaded->skipped.size()) + ran;
  if (which == "all" && options->launcher == RunOptions::Launcher::kSlurm && !options->aggregate_only) {
    std::cout << "report: once the jobs have finished, the same command with --aggregate writes it\n";
  } else if (which == "all") {
    absl::Status s =
        WriteReportForAll(report_root, preset, from_results ? ", from saved results" : "", report);
    if (!s.ok()) return Fail(s);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace mimetic::experiments

int main(int argc, char** argv) {
  mimetic::experiments::UseShortSpinWaits(argv);  // first: it may restart the process
  mimetic::experiments::CommandArgs().assign(argv + 1, argv + argc);
  std::vector<std::string> overrides = mimetic::experiments::ExtractSetFlags(&argc, argv);
  absl::SetProgramUsageMessage(
      "runs a paper figure: its preset's sweep, then figure.png and claims.md.\n"
      "usage: figure --figure=fig1 [--preset=cpu|gpu|paper|smoke] [--jobs=N | --launcher=slurm ...] "
      "[--aggregate] [--set field=value ...]");
  absl::ParseCommandLine(argc, argv);
  if (mimetic::experiments::IsPointMode()) return mimetic::experiments::RunPointMode();
  return mimetic::experiments::Main(overrides);
}
