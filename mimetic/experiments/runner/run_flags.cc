#include "mimetic/experiments/runner/run_flags.h"

#include <sys/prctl.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/runner/stop_signal.h"
#include "mimetic/experiments/runner/teacher.h"
#include "mimetic/experiments/runner/threads.h"

ABSL_FLAG(int, jobs, 1,
          "grid points run side by side in child processes; the cores are divided among them (each gets "
          "cores/jobs threads), so they never oversubscribe the machine (more jobs than cores: as many as "
          "cores, said at the start)");
ABSL_FLAG(int, threads, 0, "CPU threads for this process (0: every core it may use)");
ABSL_FLAG(bool, aggregate, false,
          "run nothing: summarise the grid points that have finished and list the others");
ABSL_FLAG(bool, plots, true, "write PNG plots (accuracy curves, attention maps)");
ABSL_FLAG(int64_t, step_budget, 0,
          "stop each grid point after this many steps in this process, checkpointing first (0: no limit)");
ABSL_FLAG(
    std::string, points, "",
    "train only the grid points whose directory (points/<variant>[/<axis>=<value>,...]/seed<k>) contains "
    "a match of this regular expression, e.g. 'lr=0.001/seed1$' (ECMAScript; empty: every point); the "
    "others are left as they are, and the summaries cover every finished point");
ABSL_FLAG(double, max_memory_gb, 0,
          "refuse a sweep whose grid points need more memory than this many GiB (0: what the machine has "
          "available)");
ABSL_FLAG(std::string, launcher, "local",
          "where grid points run: local (this machine; see --jobs) or slurm (one Slurm job array, submitted "
          "with sbatch; returns at once, collect with --aggregate)");
ABSL_FLAG(bool, dry_run, false, "with --launcher=slurm: print the batch script; submit and write nothing");
ABSL_FLAG(std::string, slurm_partition, "", "with --launcher=slurm: #SBATCH --partition");
ABSL_FLAG(std::string, slurm_account, "", "with --launcher=slurm: #SBATCH --account");
ABSL_FLAG(std::string, slurm_time, "",
          "with --launcher=slurm: #SBATCH --time per element (e.g. 90, 2:00:00, 1-00:00:00)");
ABSL_FLAG(int, slurm_cpus_per_task, 0,
          "with --launcher=slurm: #SBATCH --cpus-per-task; each element runs that many threads (0: one)");
ABSL_FLAG(int, slurm_gpus, -1,
          "with --launcher=slurm: #SBATCH --gres=gpu:N per element (-1: 1 when device is cuda, else none)");
ABSL_FLAG(std::string, slurm_mem, "",
          "with --launcher=slurm: #SBATCH --mem per element (e.g. 16G); grid points are checked against it");
ABSL_FLAG(std::string, slurm_extra, "",
          "with --launcher=slurm: more sbatch options, ';'-separated, one #SBATCH line each (e.g. "
          "\"--qos=long;--constraint=a100\")");
ABSL_FLAG(int, slurm_throttle, 0,
          "with --launcher=slurm: at most this many array elements at once (--array=...%K; 0: no limit)");
ABSL_FLAG(std::string, point_of, "",
          "internal: run one grid point of the sweep saved at this path (a run directory's sweep.textproto)");
ABSL_FLAG(int, point, -1, "internal: with --point_of, the grid point's index");

namespace mimetic::experiments {

std::vector<std::string> ExtractSetFlags(int* argc, char** argv) {
  std::vector<std::string> sets;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--set") == 0 || std::strcmp(argv[i], "-set") == 0) {
      if (i + 1 < *argc)
        sets.push_back(argv[++i]);
      else
        sets.push_back("");  // "--set" with no value: ApplyOverride names the problem
    } else if (absl::StartsWith(argv[i], "--set=") || absl::StartsWith(argv[i], "-set=")) {
      sets.push_back(std::strchr(argv[i], '=') + 1);
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  argv[out] = nullptr;
  return sets;
}

namespace {

absl::Status LauncherFromFlags(RunOptions* o) {
  const std::string launcher = absl::GetFlag(FLAGS_launcher);
  if (launcher == "slurm") {
    o->launcher = RunOptions::Launcher::kSlurm;
  } else if (launcher != "local") {
    return absl::InvalidArgumentError(absl::StrCat("--launcher=", launcher, "; expected local or slurm"));
  }
  if (o->launcher == RunOptions::Launcher::kSlurm && o->jobs > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs=", o->jobs,
                     " runs points side by side on this machine; with --launcher=slurm the cluster "
                     "runs them (limit how many at once with --slurm_throttle)"));
  }
  SlurmOptions& s = o->slurm;
  s.dry_run = absl::GetFlag(FLAGS_dry_run);
  if (s.dry_run && o->launcher != RunOptions::Launcher::kSlurm) {
    return absl::InvalidArgumentError("--dry_run previews a Slurm submission; it needs --launcher=slurm");
  }
  s.partition = absl::GetFlag(FLAGS_slurm_partition);
  s.account = absl::GetFlag(FLAGS_slurm_account);
  s.time = absl::GetFlag(FLAGS_slurm_time);
  s.cpus_per_task = absl::GetFlag(FLAGS_slurm_cpus_per_task);
  s.gpus = absl::GetFlag(FLAGS_slurm_gpus);
  s.mem = absl::GetFlag(FLAGS_slurm_mem);
  s.extra = absl::StrSplit(absl::GetFlag(FLAGS_slurm_extra), ';', absl::SkipWhitespace());
  s.throttle = absl::GetFlag(FLAGS_slurm_throttle);
  return ValidateSlurmOptions(s);
}

}  // namespace

absl::StatusOr<RunOptions> OptionsFromFlags() {
  RunOptions o;
  o.jobs = absl::GetFlag(FLAGS_jobs);
  if (o.jobs < 1) return absl::InvalidArgumentError(absl::StrCat("--jobs=", o.jobs, "; expected >= 1"));
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 0) return absl::InvalidArgumentError(absl::StrCat("--threads=", threads, "; expected >= 0"));
  if (threads > 0) SetThreadCount(threads);
  o.cores = threads;
  o.aggregate_only = absl::GetFlag(FLAGS_aggregate);
  o.plots = absl::GetFlag(FLAGS_plots);
  o.step_budget = absl::GetFlag(FLAGS_step_budget);
  o.points = absl::GetFlag(FLAGS_points);
  const double gb = absl::GetFlag(FLAGS_max_memory_gb);
  if (!(gb >= 0)) return absl::InvalidArgumentError(absl::StrCat("--max_memory_gb=", gb, "; expected >= 0"));
  o.max_memory_bytes = static_cast<int64_t>(gb * 1024 * 1024 * 1024);
  if (o.step_budget < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--step_budget=", o.step_budget, "; expected >= 0"));
  }
  RETURN_IF_ERROR(LauncherFromFlags(&o));
  return o;
}

bool IsPointMode() { return !absl::GetFlag(FLAGS_point_of).empty(); }

int RunPointMode() {
  InstallStopHandlers();
  // A parent that dies (even by kill -9) stops this point the same way, with a checkpoint. A --jobs parent
  // has already asked for this before exec (core/spawn.h, which also covers a parent that died while
  // starting us); asked again here for a point started another way (a cluster job step).
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  absl::StatusOr<RunOptions> o = OptionsFromFlags();
  if (!o.ok()) {
    std::cerr << "error: " << o.status().message() << "\n";
    return 2;
  }
  PointOptions po{nullptr, o->plots, o->step_budget};
  absl::StatusOr<RunResult> r = RunSavedPoint(absl::GetFlag(FLAGS_point_of), absl::GetFlag(FLAGS_point), po);
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    const int signo = StopSignalOf(r.status());
    return signo != 0 ? 128 + signo : 1;
  }
  return 0;
}

void ResolveOutputDir(Experiment* e) {
  if (const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
      cwd != nullptr && !e->output_dir().empty() && e->output_dir()[0] != '/') {
    e->set_output_dir(std::string(cwd) + "/" + e->output_dir());
  }
}

int RunAndReport(Experiment e) {
  InstallStopHandlers();
  absl::StatusOr<RunOptions> o = OptionsFromFlags();
  if (!o.ok()) {
    std::cerr << "error: " << o.status().message() << "\n";
    return 2;
  }
  ResolveOutputDir(&e);
  std::cerr << "experiment " << e.name() << ": " << e.variants_size() << " variants x " << e.seeds_size()
            << " seeds" << (e.sweep().axes().empty() ? "" : " x sweep axes") << ", " << e.train().steps()
            << " steps each; outputs in " << e.output_dir() << "/" << e.name() << "\n";
  // A teacher (experiment.proto) trains first; the sweep then reads its file.
  absl::StatusOr<PreparedTeacher> teacher = PrepareTeacher(e, *o);
  if (teacher.ok() && !teacher->description.empty()) std::cerr << teacher->description << "\n";
  absl::StatusOr<ExperimentSummary> s = teacher.ok() ? RunExperiment(teacher->experiment, *o)
                                                     : absl::StatusOr<ExperimentSummary>(teacher.status());
  if (const int signo = StopSignalOf(s.status()); signo != 0) {
    std::cerr << s.status().message() << "\n";
    return 128 + signo;
  }
  if (!s.ok()) {
    std::cerr << "error: " << s.status().message() << "\n(earlier checkpoints, results and logs are kept in "
              << e.output_dir() << "/" << e.name() << "; running the same command again resumes)\n";
    return 1;
  }
  if (s->submitted.has_value()) {
    std::cout << SubmissionMessage(*s->submitted, e.name(), o->slurm.dry_run);
    return 0;
  }
  std::cout << "\n"
            << e.name() << ": final accuracy (mean ± standard error over seeds)\n\n"
            << s->table << "\n";
  std::cout
      << "run directory: " << s->run_dir
      << " (summary.md, summary.csv, runs.csv, plots/, points/<variant>/.../seed<k>/ with metrics.jsonl, "
         "tb/, checkpoints/)\n";
  return 0;
}

}  // namespace mimetic::experiments
