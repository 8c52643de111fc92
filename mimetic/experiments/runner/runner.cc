#include "mimetic/experiments/runner/runner.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/dir_lock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/config/checkpoint_init.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/memory_estimate.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/experiments/runner/local_launcher.h"
#include "mimetic/experiments/runner/point_filter.h"
#include "mimetic/experiments/runner/progress.h"
#include "mimetic/experiments/runner/stop_signal.h"
#include "mimetic/experiments/runner/threads.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

absl::Status MakeRunDirectory(const fs::path& run_dir) {
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec || !fs::is_directory(run_dir)) {
    return absl::PermissionDeniedError(absl::StrCat("output_dir: cannot create run directory '",
                                                    run_dir.string(), "'", ec ? ": " + ec.message() : ""));
  }
  // Refuse an unwritable directory before any training starts.
  if (!core::WriteTextFile((run_dir / ".write_probe").string(), "").ok()) {
    return absl::PermissionDeniedError(absl::StrCat("output_dir: '", run_dir.string(), "' is not writable"));
  }
  fs::remove(run_dir / ".write_probe", ec);
  return absl::OkStatus();
}

// The binary that runs one grid point (--point_of/--point): a child process or a Slurm array element.
std::string SelfBinary(const RunOptions& options) {
  return options.self.empty() ? fs::read_symlink("/proc/self/exe").string() : options.self;
}

// The flags every point process gets besides its point and thread count.
std::vector<std::string> PointFlags(const RunOptions& options) {
  std::vector<std::string> flags;
  if (!options.plots) flags.push_back("--noplots");
  if (options.step_budget > 0) flags.push_back(absl::StrCat("--step_budget=", options.step_budget));
  return flags;
}

// What a run directory's experiment is, for comparing with a rerun's: its trained state (TrainedState, the
// point directories' notion, point_run.h) with its variants and sweep, less the seeds (a sweep grows by
// seeds; each seed's points are their own) and sweep.select_length (read when aggregating, as evaluation
// fields are), and the device: CPU and CUDA train the same function, so a sweep run on a GPU is judged
// (--aggregate, figure --from_results) under the same preset on a machine without one. A point directory
// still holds one device's run (TrainedState keeps it): a trajectory is not resumed on another device.
// A checkpoint the run directory holds itself (a stand-in teacher's weights, teacher.h) counts by its path
// inside the directory, so that a run directory moved or restored elsewhere (figure --from_results) is
// the same experiment.
Experiment RunIdentity(const Experiment& e) {
  Experiment id = TrainedState(e);
  id.clear_device();
  id.clear_seeds();
  id.mutable_sweep()->clear_select_length();
  if (id.has_teacher()) *id.mutable_teacher() = TrainedState(id.teacher());
  const fs::path run_dir = (fs::path(e.output_dir()) / e.name()).lexically_normal();
  for (Variant& v : *id.mutable_variants()) {
    for (InitTransform& t : *v.mutable_init()) {
      if (!IsCheckpointKind(t)) continue;
      CheckpointInit* c = MutableCheckpointOf(&t);
      const fs::path inside = fs::path(c->path()).lexically_normal().lexically_relative(run_dir);
      if (!inside.empty() && *inside.begin() != "..") c->set_path(inside.string());
    }
  }
  return id;
}

// A run directory holds one experiment, as a point directory holds one point: another experiment under the
// same name and output_dir is refused even when none of its points would collide with the first's, since
// its summaries would replace the first's. `fresh` (resume: false, not for --aggregate) starts the directory
// afresh instead; its colliding points are moved aside when they run (point_run.h).
absl::Status CheckRunDirectory(const Experiment& e, const fs::path& run_dir, bool fresh) {
  const fs::path saved_path = run_dir / "sweep.textproto";
  std::error_code ec;
  if (fresh || !fs::exists(saved_path, ec)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(saved_path.string()));
  Experiment saved;
  if (!MergeConfigText(text, &saved).ok()) {
    return absl::DataLossError(absl::StrCat("'", saved_path.string(), "' cannot be parsed; move the run ",
                                            "directory aside or set resume: false"));
  }
  const std::string difference = FirstDifference(RunIdentity(saved), RunIdentity(e));
  if (difference.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "'", run_dir.string(), "' holds a different experiment (first difference, its sweep.textproto -> ",
      "this run: ", difference, "); a run directory holds one experiment: every model, task, init, ",
      "optimiser, variant and sweep field must match, while seeds, evaluation, logging and device fields ",
      "may change. Use another name (--set name=...), delete the directory, or set resume: false (which ",
      "starts it afresh)"));
}

// Refuses a directory of another experiment (CheckRunDirectory), then records this one.
absl::Status WriteSweepConfig(const Experiment& e, const fs::path& run_dir) {
  RETURN_IF_ERROR(CheckRunDirectory(e, run_dir, /*fresh=*/!e.resume()));
  std::string text;
  google::protobuf::TextFormat::PrintToString(e, &text);
  return core::WriteTextFile((run_dir / "sweep.textproto").string(), text);
}

// Hands the unfinished points to Slurm as one job array and returns without waiting.
absl::Status SubmitToSlurm(const Experiment& e, const std::vector<GridPoint>& to_train,
                           const fs::path& run_dir, const RunOptions& options, ExperimentSummary* summary,
                           std::ostream& progress) {
  // The cluster's nodes are not this machine: a point is checked against the memory each element asks
  // for (--slurm_mem, or --max_memory_gb), when given.
  int64_t limit = options.max_memory_bytes;
  if (limit == 0 && !options.slurm.mem.empty()) {
    ASSIGN_OR_RETURN(limit, SlurmMemoryBytes(options.slurm.mem));
  }
  if (limit > 0) {
    absl::Status fits = CheckMemory(e, to_train, limit, 1);
    if (!fits.ok() && options.max_memory_bytes == 0) {
      return absl::Status(fits.code(),
                          absl::StrCat("--slurm_mem=", options.slurm.mem, " per element: ", fits.message()));
    }
    RETURN_IF_ERROR(fits);
  }
  // A submission writes the sweep's config and script: the same one-writer lock as a local run, held
  // until sbatch has answered (array elements lock only their own point directories).
  core::DirLock lock;
  if (!options.slurm.dry_run) {
    RETURN_IF_ERROR(CheckSlurmReady(options.slurm));  // before the run directory is made
    RETURN_IF_ERROR(MakeRunDirectory(run_dir));
    ASSIGN_OR_RETURN(lock, core::DirLock::Acquire(run_dir.string()));
    RETURN_IF_ERROR(WriteSweepConfig(e, run_dir));
  }
  ASSIGN_OR_RETURN(summary->submitted, SubmitSweep(e, to_train, run_dir.string(), SelfBinary(options),
                                                   PointFlags(options), options.slurm, progress));
  return absl::OkStatus();
}

// Every point in this process, one after another.
absl::Status RunInProcess(const Experiment& e, const std::vector<GridPoint>& grid, const fs::path& run_dir,
                          const RunOptions& options, std::vector<RunResult>* runs) {
  PointOptions po{options.progress, options.plots, options.step_budget};
  for (const GridPoint& p : grid) {
    if (const int signo = StopSignal(); signo != 0) {
      return StoppedError(signo, absl::StrCat("before grid point ", p.dir, " (finished points are kept)"));
    }
    ASSIGN_OR_RETURN(Experiment one, PointExperiment(e, p));
    ASSIGN_OR_RETURN(RunResult r, RunPoint(one, p, (run_dir / p.dir).string(), po));
    (*runs)[p.index] = std::move(r);
  }
  return absl::OkStatus();
}

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Unfinished points in child processes, `options.jobs` at a time, the cores divided among them.
// `grid` is the points to train (all, or those --points selects) of a grid of `grid_size`.
absl::Status RunInChildren(const Experiment& e, const std::vector<GridPoint>& grid, size_t grid_size,
                           const fs::path& run_dir, const RunOptions& options, std::ostream& progress) {
  const int cores = std::max(1, options.cores > 0 ? options.cores : AvailableCores());
  // More children than cores would oversubscribe the machine (each needs at least one thread):
  // --jobs is capped at the core count, and the run says so.
  const int parallel = std::min(options.jobs, cores);
  const int threads = std::max(1, cores / parallel);
  if (parallel < options.jobs) {
    progress << absl::StrFormat(
        "--jobs=%d is more than the %d core%s this process may use: running %d at a time\n", options.jobs,
        cores, cores == 1 ? "" : "s", parallel);
  }
  const std::string self = SelfBinary(options);
  std::vector<ChildJob> jobs;
  std::vector<const GridPoint*> pending;
  for (const GridPoint& p : grid) {
    absl::StatusOr<PointResult> done = ReadGridPointResult(run_dir.string(), e, p);
    if (done.ok()) continue;
    if (!absl::IsNotFound(done.status())) return done.status();  // rerunning would not fix a refused result
    std::error_code ec;
    fs::create_directories(run_dir / p.dir, ec);
    ChildJob job;
    job.argv = {self, absl::StrCat("--point_of=", (run_dir / "sweep.textproto").string()),
                absl::StrCat("--point=", p.index), absl::StrCat("--threads=", threads)};
    for (const std::string& flag : PointFlags(options)) job.argv.push_back(flag);
    job.env = {absl::StrCat("OMP_NUM_THREADS=", threads), absl::StrCat("OPENBLAS_NUM_THREADS=", threads),
               "OMP_WAIT_POLICY=passive"};
    job.log_path = (run_dir / p.dir / "progress.log").string();
    jobs.push_back(std::move(job));
    pending.push_back(&p);
  }
  progress << absl::StrFormat("running %d of %d grid points, %d at a time, %d thread%s each\n", jobs.size(),
                              grid_size, std::min<int>(parallel, jobs.size()), threads,
                              threads == 1 ? "" : "s");
  // Live status of the running points (their progress.log) and the sweep; a
  // line rewritten in place when the progress goes to a terminal.
  const bool terminal = options.progress == nullptr && ::isatty(STDERR_FILENO) == 1;
  // Counts over the points this run may train (all, or those --points selects).
  SweepProgress status(progress, terminal, static_cast<int>(grid.size()),
                       static_cast<int>(grid.size() - jobs.size()), parallel);
  std::vector<std::string> failed;
  int done = 0;
  ASSIGN_OR_RETURN(
      std::vector<int> codes,
      RunChildren(
          jobs, parallel,
          [&](const ChildEvent& ev) {
            const GridPoint& p = *pending[ev.index];
            if (ev.started) {
              status.Line(absl::StrCat("started ", p.dir, " (log: ", jobs[ev.index].log_path, ")"));
              status.Started(ev.index, p.dir, jobs[ev.index].log_path);
              return;
            }
            ++done;
            status.Ended(ev.index);
            if (StopSignal() != 0 && ev.exit_code == 128 + StopSignal()) {
              status.Line(absl::StrFormat("[%d/%d] stopped %s (checkpointed; see %s)", done, jobs.size(),
                                          p.dir, jobs[ev.index].log_path));
            } else if (ev.exit_code == 0) {
              status.Line(absl::StrFormat("[%d/%d] finished %s", done, jobs.size(), p.dir));
            } else {
              status.Line(absl::StrFormat("[%d/%d] FAILED %s (exit %d): see %s", done, jobs.size(), p.dir,
                                          ev.exit_code, jobs[ev.index].log_path));
              failed.push_back(p.dir);
            }
          },
          [&] { status.Tick(MonotonicSeconds()); }));
  if (const int signo = StopSignal(); signo != 0) {
    return StoppedError(signo,
                        absl::StrCat("; the child processes checkpointed and stopped (their ",
                                     "progress.log says where); running the same command again resumes",
                                     failed.empty() ? "" : "; failed: " + absl::StrJoin(failed, ", ")));
  }
  if (!failed.empty()) {
    return absl::InternalError(absl::StrCat(
        failed.size(), " grid point(s) failed (their progress.log says why; ",
        "finished points are kept and a rerun resumes the rest): ", absl::StrJoin(failed, ", ")));
  }
  return absl::OkStatus();
}

// Exact accuracy against step, one line per finished point, one plot per eval length.
void PlotAccuracyCurves(const Experiment& e, const std::vector<RunResult>& runs, const fs::path& run_dir,
                        std::ostream& progress) {
  for (int len : e.eval().lengths()) {
    std::vector<Series> series;
    for (const RunResult& r : runs) {
      if (r.result.curve().empty()) continue;
      Series s;
      std::vector<std::string> axes;
      for (const AxisValue& a : r.point.axes) axes.push_back(absl::StrCat(a.axis, "=", a.value));
      s.name = absl::StrCat(r.point.variant, axes.empty() ? "" : " " + absl::StrJoin(axes, ","), " seed ",
                            r.point.seed);
      for (const EvalPoint& p : r.result.curve()) {
        for (const LengthAccuracy& a : p.accuracy()) {
          if (a.length() != len) continue;
          s.xs.push_back(static_cast<double>(p.step()));
          s.ys.push_back(a.exact());
        }
      }
      if (!s.xs.empty()) series.push_back(std::move(s));
    }
    if (series.empty()) continue;
    absl::Status s = PlotCurves((run_dir / "plots" / absl::StrCat("accuracy_len", len, ".png")).string(),
                                absl::StrCat(e.name(), ": exact-string accuracy at length ", len), "step",
                                "exact accuracy", series);
    if (!s.ok()) progress << "warning: plot not written: " << s.message() << "\n";
  }
}

}  // namespace

absl::StatusOr<ExperimentSummary> RunExperiment(const Experiment& e, const RunOptions& options) {
  std::ostream& progress = options.progress != nullptr ? *options.progress : std::cerr;
  if (options.jobs < 1)
    return absl::InvalidArgumentError(absl::StrCat("--jobs=", options.jobs, "; expected >= 1"));
  ExperimentSummary summary;
  ASSIGN_OR_RETURN(summary.grid, ExpandGrid(e, &progress));
  const fs::path run_dir = fs::path(e.output_dir()) / e.name();
  summary.run_dir = run_dir.string();
  summary.runs.resize(summary.grid.size());
  core::DirLock lock;
  for (const GridPoint& p : summary.grid) summary.runs[p.index].point = p;
  // The points this run may train (--points); a regex matching none is refused even with --aggregate.
  ASSIGN_OR_RETURN(const std::vector<GridPoint> to_train, SelectPoints(summary.grid, options.points));
  if (to_train.size() < summary.grid.size() && !options.aggregate_only) {
    progress << "--points=" << options.points << ": training at most " << to_train.size() << " of "
             << summary.grid.size() << " grid points\n";
  }
  if (options.launcher == RunOptions::Launcher::kSlurm && !options.aggregate_only) {
    RETURN_IF_ERROR(SubmitToSlurm(e, to_train, run_dir, options, &summary, progress));
    return summary;
  }
  if (!options.aggregate_only) {
    RETURN_IF_ERROR(CheckMemory(e, to_train, options.max_memory_bytes, options.jobs));
    RETURN_IF_ERROR(MakeRunDirectory(run_dir));
    // One writer per run directory (its points are locked by whoever runs them: this process, or the
    // child processes of --jobs, which do not inherit this lock).
    ASSIGN_OR_RETURN(lock, core::DirLock::Acquire(run_dir.string()));
    RETURN_IF_ERROR(WriteSweepConfig(e, run_dir));
    if (options.jobs == 1) {
      RETURN_IF_ERROR(RunInProcess(e, to_train, run_dir, options, &summary.runs));
    } else {
      // Refuse an unavailable device here, before any child starts.
      ASSIGN_OR_RETURN(Experiment first, PointExperiment(e, to_train[0]));
      RETURN_IF_ERROR(CheckDevice(first));
      RETURN_IF_ERROR(RunInChildren(e, to_train, summary.grid.size(), run_dir, options, progress));
    }
  } else if (!fs::is_regular_file(run_dir / "sweep.textproto")) {
    // Every run and every submission writes sweep.textproto first: without it nothing was started here.
    return absl::NotFoundError(
        absl::StrCat("--aggregate: '", run_dir.string(),
                     "' holds no sweep (no sweep.textproto): nothing of experiment '", e.name(),
                     "' was run or submitted there; run it without "
                     "--aggregate first, or check output_dir and the experiment's name"));
  } else {
    ASSIGN_OR_RETURN(lock, core::DirLock::Acquire(run_dir.string()));
    RETURN_IF_ERROR(CheckRunDirectory(e, run_dir, /*fresh=*/false));
  }
  // Results of points run elsewhere (children, earlier processes, cluster jobs, kept or merged results)
  // come from their files; one that could not have been made by its point is refused by name and left out,
  // so the summaries and verdicts say on which points they stand.
  for (RunResult& r : summary.runs) {
    if (r.finished) continue;
    absl::StatusOr<PointResult> done = ReadGridPointResult(run_dir.string(), e, r.point);
    if (done.ok()) {
      r.result = *done;
      r.finished = true;
    } else if (!absl::IsNotFound(done.status())) {
      summary.refused.push_back({r.point.dir, std::string(done.status().message())});
      progress << "refused: " << done.status().message() << "\n";
    }
  }
  summary.aggregate = AggregateRuns(e, summary.runs);
  summary.table = SummaryMarkdown(e, summary.aggregate);
  if (!summary.refused.empty()) {
    absl::StrAppend(&summary.table, "\nRefused (", summary.refused.size(), "; not counted above):\n");
    for (const auto& r : summary.refused) absl::StrAppend(&summary.table, "- ", r.why, "\n");
  }
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  RETURN_IF_ERROR(core::WriteTextFile((run_dir / "summary.md").string(), summary.table));
  RETURN_IF_ERROR(core::WriteTextFile((run_dir / "summary.csv").string(), SummaryCsv(e, summary.aggregate)));
  RETURN_IF_ERROR(core::WriteTextFile((run_dir / "runs.csv").string(), RunsCsv(e, summary.runs)));
  if (options.plots) PlotAccuracyCurves(e, summary.runs, run_dir, progress);
  return summary;
}

absl::StatusOr<RunResult> RunSavedPoint(const std::string& sweep_config, int index,
                                        const PointOptions& options) {
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(sweep_config));
  ASSIGN_OR_RETURN(Experiment e, ParseExperiment(text));
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
  if (index < 0 || index >= static_cast<int>(grid.size())) {
    return absl::InvalidArgumentError(absl::StrCat("--point=", index, " is outside the grid of ",
                                                   sweep_config, " (", grid.size(), " points: 0..",
                                                   grid.size() - 1, ")"));
  }
  const GridPoint& p = grid[index];
  ASSIGN_OR_RETURN(Experiment one, PointExperiment(e, p));
  const fs::path run_dir = fs::path(e.output_dir()) / e.name();
  return RunPoint(one, p, (run_dir / p.dir).string(), options);
}

}  // namespace mimetic::experiments
