// Hands a sweep to Slurm as one job array: the launcher behind `--launcher=slurm`. Element K of the
// array runs grid point K exactly as a `--jobs` child process does (the same binary with
// `--point_of=<run_dir>/sweep.textproto --point=K`), in its own point directory, so elements never
// contend and a killed element resumes from its checkpoint when the sweep is submitted again.
//
//   SlurmOptions slurm;
//   slurm.partition = "gpu";
//   slurm.time = "2:00:00";
//   ASSIGN_OR_RETURN(SlurmSubmission s, SubmitSweep(experiment, grid, run_dir, binary, {}, slurm,
//   std::cerr)); std::cout << "job " << s.job_id << ", script " << s.script_path << "\n";
//
// What it writes into the run directory (never into a point directory):
//   slurm.sbatch             the batch script (`sbatch slurm.sbatch` resubmits it by hand)
//   slurm/<binary>           a copy of the binary the elements run, so a rebuild or a cleaned Bazel
//                            cache cannot change or remove it under a queued array
//   slurm/%A_%a.out          Slurm's own log of each element (the point's progress.log has its training)
//   slurm/submissions.txt    one line per submission: time, job id, array
// The array holds only the points that have not finished (`0-3` at first; `1,3` when resubmitted after
// points 0 and 2 finished); an element whose point finished meanwhile exits 0 at once.
#ifndef MIMETIC_EXPERIMENTS_SLURM_LAUNCHER_H_
#define MIMETIC_EXPERIMENTS_SLURM_LAUNCHER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/config/sweep.h"

namespace mimetic::experiments {

// What clusters differ in. Empty strings and zeros leave the cluster's defaults.
struct SlurmOptions {
  std::string partition;           // #SBATCH --partition
  std::string account;             // #SBATCH --account
  std::string time;                // #SBATCH --time (Slurm's forms: "90", "2:00:00", "1-12:00:00")
  std::string mem;                 // #SBATCH --mem per element ("8G", "16000"; Slurm's units, MB default)
  int cpus_per_task = 0;           // #SBATCH --cpus-per-task; each element runs that many threads (0: 1)
  int gpus = -1;                   // #SBATCH --gres=gpu:N (-1: 1 when the sweep's device is cuda, else 0)
  std::vector<std::string> extra;  // more options, one #SBATCH line each ("--qos=long")
  int throttle = 0;                // at most this many elements at once (--array=...%K; 0: no limit)
  bool dry_run = false;            // print the script; submit nothing, write nothing
  std::string sbatch = "sbatch";   // the submitting program (looked up on PATH)
  std::string sinfo = "sinfo";     // lists the cluster's partitions, to check --slurm_partition
  std::string squeue = "squeue";   // lists active jobs, to refuse a second array while one still runs
};

// Checks the options themselves (InvalidArgument naming the option and what was expected): no
// whitespace inside a value (it would split an #SBATCH line), counts >= 0, extra lines that are options.
absl::Status ValidateSlurmOptions(const SlurmOptions& options);

// What a submission needs before anything is written: valid options, `sbatch` on PATH
// (FailedPrecondition saying how to get it) and, when `sinfo` can list them, an existing partition
// (NotFound naming the cluster's partitions).
absl::Status CheckSlurmReady(const SlurmOptions& options);

// Slurm's memory value in bytes ("8G" -> 8 GiB; a bare number is MB), or InvalidArgument.
absl::StatusOr<int64_t> SlurmMemoryBytes(const std::string& mem);

// The --array value for these grid indices (ascending), runs compressed: {0,1,2,3} -> "0-3",
// {1,3,4,5} -> "1,3-5"; with throttle K > 0, "%K" appended.
std::string ArraySpec(const std::vector<int>& indices, int throttle);

// Everything the batch script needs to know about the sweep.
struct SlurmSweep {
  std::string name;                     // the experiment's name (the job name is "mimetic-<name>")
  std::string binary;                   // absolute path of the binary the elements run
  std::string run_dir;                  // absolute path of the run directory
  std::vector<std::string> point_dirs;  // every grid point's directory, relative to run_dir, in grid order
  std::vector<int> indices;             // the grid points to run
  bool cuda = false;                    // device: cuda (one GPU per element unless options.gpus says)
  std::vector<std::string> point_args;  // more arguments for each element ("--noplots", "--step_budget=N")
};

// The batch script (pure: the same inputs give the same text).
std::string SlurmScript(const SlurmSweep& sweep, const SlurmOptions& options);

struct SlurmSubmission {
  std::string job_id;       // empty for a dry run or when nothing was left to run
  std::string array;        // the --array value ("" when every point had finished)
  int points = 0;           // grid points in the array
  std::string script_path;  // where the script is (where it would be, for a dry run)
  std::string script;       // its text
};

// What the user reads after a submission: the script for a dry run; otherwise the job id, the array,
// where the script and the logs are, and how to watch, collect and resubmit.
std::string SubmissionMessage(const SlurmSubmission& submission, const std::string& name, bool dry_run);

// Submits the unfinished points of `grid` (an expanded, checked sweep whose sweep.textproto is already
// in `run_dir`; for a dry run neither need exist) with `sbatch --parsable` and returns the job id.
// Errors, each before anything is submitted and leaving every point directory as it was:
// FailedPrecondition when sbatch is not on PATH, when a CUDA sweep is submitted from a binary without
// the CUDA backend, or when an array submitted earlier for this run directory is still queued or running
// (squeue; its points would get a second writer); NotFound for a partition that `sinfo` does not list (naming
// those it does); InvalidArgument for bad options or paths; Unavailable with sbatch's own message when it
// rejects the script. `point_args` are passed to every element. Progress lines go to `progress`.
absl::StatusOr<SlurmSubmission> SubmitSweep(const Experiment& experiment, const std::vector<GridPoint>& grid,
                                            const std::string& run_dir, const std::string& binary,
                                            const std::vector<std::string>& point_args,
                                            const SlurmOptions& options, std::ostream& progress);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_SLURM_LAUNCHER_H_
