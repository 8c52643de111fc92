#include "mimetic/experiments/runner/slurm_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/status.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/point_run.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

constexpr char kInstallHint[] = "the Slurm client tools (Debian: slurm-client)";

bool HasSpace(const std::string& s) {
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

// A word for a bash script, single-quoted when it holds anything but safe characters.
std::string ShellQuote(const std::string& s) {
  bool safe = !s.empty();
  for (char c : s) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) || std::string("/._-=+,:@%").find(c) != std::string::npos;
    safe = safe && plain;
  }
  if (safe) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// "--qos=long" from "--qos=long" or "#SBATCH --qos=long".
std::string ExtraOption(const std::string& line) {
  absl::string_view v = absl::StripAsciiWhitespace(line);
  absl::ConsumePrefix(&v, "#SBATCH");
  return std::string(absl::StripAsciiWhitespace(v));
}

bool IsExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// Where `program` is found (a path holding '/' is taken as is), or "" when nowhere on PATH.
std::string FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return IsExecutableFile(program) ? program : "";
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty())) {
    const fs::path candidate = fs::path(std::string(dir)) / program;
    if (IsExecutableFile(candidate)) return candidate.string();
  }
  return "";
}

std::string Trimmed(const std::string& output) { return std::string(absl::StripAsciiWhitespace(output)); }

// NotFound when sinfo lists partitions and `partition` is none of them. When sinfo is absent or fails,
// sbatch is left to judge (its message is shown).
absl::Status CheckPartition(const SlurmOptions& o) {
  if (o.partition.empty() || FindProgram(o.sinfo).empty()) return absl::OkStatus();
  absl::StatusOr<core::ProgramResult> r = core::RunProgram({o.sinfo, "--noheader", "--format=%R"});
  if (!r.ok() || r->exit_code != 0) return absl::OkStatus();
  std::vector<std::string> names;
  for (absl::string_view line : absl::StrSplit(r->output, '\n', absl::SkipWhitespace())) {
    names.emplace_back(absl::StripAsciiWhitespace(line));
  }
  if (names.empty()) return absl::OkStatus();
  // --partition may list several ("gpu,gpu-long"); each must exist.
  for (absl::string_view p : absl::StrSplit(o.partition, ',')) {
    if (std::find(names.begin(), names.end(), p) == names.end()) {
      return absl::NotFoundError(absl::StrCat("--slurm_partition=", o.partition,
                                              ": this cluster has no partition '", p,
                                              "'; its partitions (sinfo) are: ", absl::StrJoin(names, ", ")));
    }
  }
  return absl::OkStatus();
}

// FailedPrecondition when a job array submitted earlier for this run directory (slurm/submissions.txt) is
// still pending or running: submitting again would give its points a second writer each. When squeue is
// absent or fails, nothing can be told and nothing is refused.
absl::Status CheckNoActiveSubmission(const fs::path& slurm_dir, const std::string& name,
                                     const SlurmOptions& o) {
  absl::StatusOr<std::string> log = core::ReadTextFile((slurm_dir / "submissions.txt").string());
  if (!log.ok() || FindProgram(o.squeue).empty()) return absl::OkStatus();
  std::vector<std::string> ours;  // "<date> <time> UTC job <id> array <spec>"
  for (absl::string_view line : absl::StrSplit(*log, '\n', absl::SkipWhitespace())) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() >= 5 && words[3] == "job") ours.push_back(words[4]);
  }
  absl::StatusOr<core::ProgramResult> r =
      core::RunProgram({o.squeue, "--noheader", "--format=%F", absl::StrCat("--name=mimetic-", name)});
  if (!r.ok() || r->exit_code != 0) return absl::OkStatus();
  for (absl::string_view active : absl::StrSplit(r->output, '\n', absl::SkipWhitespace())) {
    active = absl::StripAsciiWhitespace(active);
    if (std::find(ours.begin(), ours.end(), active) != ours.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("Slurm job ", active,
                       " of this sweep is still queued or running (squeue); submitting again would "
                       "run its unfinished points twice. Wait for it (squeue -j ",
                       active, "), or cancel it (scancel ", active,
                       ") and submit again: the points resume from their checkpoints"));
    }
  }
  return absl::OkStatus();
}

// `binary` copied to `dest` through a temporary file and a rename, so elements of an earlier submission
// that still run the old copy keep it.
absl::Status CopyBinary(const std::string& binary, const fs::path& dest) {
  const fs::path tmp = dest.string() + ".tmp";
  std::error_code ec;
  fs::remove(tmp, ec);
  constexpr fs::perms kMode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec;
  fs::copy_file(binary, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::permissions(tmp, kMode, ec);
  if (!ec) fs::rename(tmp, dest, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot copy the binary '", binary, "' to '", dest.string(), "': ", ec.message()));
  }
  return absl::OkStatus();
}

absl::Status AppendToFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
  out.close();
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path.string(), "'"));
  return absl::OkStatus();
}

// sbatch --parsable prints "<id>" or "<id>;<cluster>" as its last line.
absl::StatusOr<std::string> ParseJobId(const std::string& output) {
  std::vector<std::string> lines = absl::StrSplit(Trimmed(output), '\n');
  std::string id(absl::StripAsciiWhitespace(lines.back()));
  id = id.substr(0, id.find(';'));
  int64_t n = 0;
  if (!absl::SimpleAtoi(id, &n)) {
    return absl::InternalError(
        absl::StrCat("sbatch accepted the script but printed no job id: ", Trimmed(output)));
  }
  return id;
}

}  // namespace

absl::Status ValidateSlurmOptions(const SlurmOptions& o) {
  const std::vector<std::pair<std::string, std::string>> values = {{"--slurm_partition", o.partition},
                                                                   {"--slurm_account", o.account},
                                                                   {"--slurm_time", o.time},
                                                                   {"--slurm_mem", o.mem}};
  for (const auto& [flag, value] : values) {
    if (HasSpace(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, "='", value, "' holds whitespace; expected one word (it becomes an #SBATCH line)"));
    }
  }
  if (o.cpus_per_task < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm_cpus_per_task=", o.cpus_per_task, "; expected >= 0 (0: one CPU)"));
  }
  if (o.gpus < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm_gpus=", o.gpus, "; expected >= 0, or -1 for one GPU when device is cuda"));
  }
  if (o.throttle < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm_throttle=", o.throttle, "; expected >= 0 (0: no limit)"));
  }
  if (!o.mem.empty()) RETURN_IF_ERROR(SlurmMemoryBytes(o.mem).status());
  for (const std::string& line : o.extra) {
    const std::string opt = ExtraOption(line);
    if (!absl::StartsWith(opt, "-") || opt.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slurm_extra: '", line, "' is not an sbatch option; expected e.g. \"--qos=long\" (one per ';')"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSlurmReady(const SlurmOptions& o) {
  RETURN_IF_ERROR(ValidateSlurmOptions(o));
  if (FindProgram(o.sbatch).empty()) {
    return absl::FailedPreconditionError(absl::StrCat("--launcher=slurm: '", o.sbatch,
                                                      "' was not found on PATH; install ", kInstallHint,
                                                      ", submit from the cluster's login node, or run with "
                                                      "--launcher=local"));
  }
  return CheckPartition(o);
}

absl::StatusOr<int64_t> SlurmMemoryBytes(const std::string& mem) {
  std::string digits = mem;
  int64_t unit = int64_t{1} << 20;  // Slurm's default unit: MB
  const size_t at =
      mem.empty() ? std::string::npos : std::string("KMGT").find(absl::ascii_toupper(mem.back()));
  if (at != std::string::npos) {
    unit = int64_t{1} << (10 * (at + 1));
    digits.pop_back();
  }
  int64_t n = 0;
  if (digits.empty() || !absl::SimpleAtoi(digits, &n) || n < 0 || n > (int64_t{1} << 62) / unit) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm_mem='", mem, "'; expected a size in Slurm's form: 16G, 512M, 16000 (MB)"));
  }
  return n * unit;
}

std::string ArraySpec(const std::vector<int>& indices, int throttle) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    runs.push_back(j == i ? absl::StrCat(indices[i]) : absl::StrCat(indices[i], "-", indices[j]));
    i = j + 1;
  }
  return absl::StrCat(absl::StrJoin(runs, ","), throttle > 0 ? absl::StrCat("%", throttle) : "");
}

std::string SlurmScript(const SlurmSweep& s, const SlurmOptions& o) {
  const int gpus = o.gpus >= 0 ? o.gpus : (s.cuda ? 1 : 0);
  std::string out = "#!/bin/bash\n";
  auto line = [&](const std::string& option) { absl::StrAppend(&out, "#SBATCH ", option, "\n"); };
  line(absl::StrCat("--job-name=mimetic-", s.name));
  line(absl::StrCat("--array=", ArraySpec(s.indices, o.throttle)));
  line(absl::StrCat("--output=", s.run_dir, "/slurm/%A_%a.out"));
  line("--ntasks=1");
  if (!o.partition.empty()) line(absl::StrCat("--partition=", o.partition));
  if (!o.account.empty()) line(absl::StrCat("--account=", o.account));
  if (!o.time.empty()) line(absl::StrCat("--time=", o.time));
  if (o.cpus_per_task > 0) line(absl::StrCat("--cpus-per-task=", o.cpus_per_task));
  if (!o.mem.empty()) line(absl::StrCat("--mem=", o.mem));
  if (gpus > 0) line(absl::StrCat("--gres=gpu:", gpus));
  for (const std::string& extra : o.extra) line(ExtraOption(extra));
  absl::StrAppend(
      &out, "#\n# mimetic sweep '", s.name, "', written by --launcher=slurm: ", s.point_dirs.size(),
      " grid points.\n# Element K runs grid point K of sweep.textproto in its own directory (points/...),\n",
      "# resuming from its newest checkpoint; a point that has finished exits at once.\n",
      "# Submitting the same command again submits what has not finished.\n", "set -euo pipefail\n",
      "run_dir=", ShellQuote(s.run_dir), "\n", "points=(\n");
  for (size_t i = 0; i < s.point_dirs.size(); ++i) {
    absl::StrAppend(&out, "  ", ShellQuote(s.point_dirs[i]), "  # ", i, "\n");
  }
  std::vector<std::string> args = {"\"$binary\"", "--point_of=\"$run_dir/sweep.textproto\"",
                                   "--point=\"$SLURM_ARRAY_TASK_ID\"", "--threads=\"$threads\""};
  for (const std::string& a : s.point_args) args.push_back(ShellQuote(a));
  absl::StrAppend(
      &out, ")\n", "# A copy of the submitting binary, made at submission.\n",
      "binary=", ShellQuote(s.binary), "\n",
      ": \"${SLURM_ARRAY_TASK_ID:?is unset: submit this script with sbatch, or set it to K to run point "
      "K}\"\n",
      "point=\"${points[$SLURM_ARRAY_TASK_ID]}\"\n",
      "# One thread per CPU Slurm gave the element, for our kernels and for OpenBLAS alike.\n",
      "threads=\"${SLURM_CPUS_PER_TASK:-1}\"\n",
      "export OMP_NUM_THREADS=\"$threads\" OPENBLAS_NUM_THREADS=\"$threads\" OMP_WAIT_POLICY=passive\n",
      "mkdir -p \"$run_dir/$point\"\n",
      "echo \"grid point $SLURM_ARRAY_TASK_ID: $point on $(hostname), $threads thread(s); log: ",
      "$run_dir/$point/progress.log\"\n", "exec ", absl::StrJoin(args, " "),
      " >> \"$run_dir/$point/progress.log\" 2>&1\n");
  return out;
}

std::string SubmissionMessage(const SlurmSubmission& s, const std::string& name, bool dry_run) {
  if (s.array.empty()) return absl::StrCat(name, ": every grid point has finished; nothing was submitted\n");
  if (dry_run) {
    return absl::StrCat("# dry run: ", s.script_path, " would be submitted with sbatch (", s.points,
                        " grid points, --array=", s.array, "):\n", s.script);
  }
  const std::string dir = core::DirName(s.script_path);
  return absl::StrCat(
      name, ": submitted Slurm job ", s.job_id, ", ", s.points, " grid point", s.points == 1 ? "" : "s",
      " (--array=", s.array, ")\n  script: ", s.script_path, "\n  logs:   ", dir, "/slurm/", s.job_id,
      "_<K>.out and each point's progress.log\n  watch:  squeue -j ", s.job_id,
      "\n  then:   the same command with --aggregate added builds the summaries (and figures, claims) from "
      "what has finished and lists what has not; the same command without it resubmits only the "
      "unfinished points, which resume from their checkpoints\n");
}

absl::StatusOr<SlurmSubmission> SubmitSweep(const Experiment& e, const std::vector<GridPoint>& grid,
                                            const std::string& run_dir, const std::string& binary,
                                            const std::vector<std::string>& point_args, const SlurmOptions& o,
                                            std::ostream& progress) {
  RETURN_IF_ERROR(ValidateSlurmOptions(o));
  SlurmSweep s;
  s.name = e.name();
  s.run_dir = core::AbsolutePath(run_dir);
  s.binary = (fs::path(s.run_dir) / "slurm" / core::BaseName(binary)).string();
  s.point_args = point_args;
  // #SBATCH lines are split at whitespace, so --output cannot hold a path with a space.
  if (HasSpace(s.run_dir)) {
    return absl::InvalidArgumentError(absl::StrCat("--launcher=slurm: the run directory '", s.run_dir,
                                                   "' holds whitespace, which #SBATCH --output cannot; "
                                                   "choose an output_dir without spaces"));
  }
  for (const GridPoint& p : grid) {
    s.point_dirs.push_back(p.dir);
    // The device, once per configuration: seeds are the grid's outermost loop and change no field, so the
    // first seed's points are every configuration. (Validating every point made a 200,000-seed dry run
    // take minutes.)
    if (p.seed == grid.front().seed) {
      ASSIGN_OR_RETURN(Experiment one, PointExperiment(e, p));
      s.cuda = s.cuda || one.device() == "cuda";
    }
    absl::StatusOr<PointResult> done = ReadGridPointResult(s.run_dir, e, p);
    if (absl::IsNotFound(done.status())) {
      s.indices.push_back(p.index);
    } else if (!done.ok()) {
      return done.status();  // an unreadable result: rerunning would not fix it
    }
  }
  SlurmSubmission out;
  out.points = static_cast<int>(s.indices.size());
  out.script_path = (fs::path(s.run_dir) / "slurm.sbatch").string();
  if (s.indices.empty()) {
    return out;
  }
  out.array = ArraySpec(s.indices, o.throttle);
  out.script = SlurmScript(s, o);
  // The elements need the CUDA backend in the binary they run; the GPU itself is the cluster's.
  const bool no_cuda_backend = s.cuda && absl::IsNotFound(core::CudaBackendStatus());
  const std::string cuda_problem =
      "device: \"cuda\" but this binary has no CUDA backend, so every element would fail; submit from "
      "//mimetic/experiments:run_cuda (built where nvcc is installed)";
  if (o.dry_run) {
    if (no_cuda_backend) progress << "warning: " << cuda_problem << "\n";
    return out;
  }
  if (no_cuda_backend) return absl::FailedPreconditionError(cuda_problem);
  RETURN_IF_ERROR(CheckSlurmReady(o));
  const fs::path slurm_dir = fs::path(s.run_dir) / "slurm";
  RETURN_IF_ERROR(CheckNoActiveSubmission(slurm_dir, s.name, o));
  std::error_code ec;
  fs::create_directories(slurm_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create '", slurm_dir.string(), "': ", ec.message()));
  }
  RETURN_IF_ERROR(CopyBinary(binary, s.binary));
  RETURN_IF_ERROR(core::WriteTextFile(out.script_path, out.script));
  ASSIGN_OR_RETURN(core::ProgramResult r,
                   core::RunProgram({o.sbatch, "--parsable", out.script_path}, s.run_dir, kInstallHint));
  if (r.exit_code != 0) {
    return absl::UnavailableError(absl::StrCat("sbatch rejected ", out.script_path, " (exit ", r.exit_code,
                                               "), so nothing was submitted: ", Trimmed(r.output)));
  }
  ASSIGN_OR_RETURN(out.job_id, ParseJobId(r.output));
  const std::string when = absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::Now(), absl::UTCTimeZone());
  absl::Status logged = AppendToFile(slurm_dir / "submissions.txt",
                                     absl::StrCat(when, " job ", out.job_id, " array ", out.array, "\n"));
  if (!logged.ok()) {
    progress << "warning: job " << out.job_id << " was submitted but " << logged.message() << "\n";
  }
  return out;
}

}  // namespace mimetic::experiments
