// Test helpers for running the runner binary (//mimetic/experiments:run) as a real process: start it
// with arguments (optionally with a file-size limit, a disk that is full after so many bytes), send
// it signals, wait for it, and compare what two run directories hold.
//
//   RunProcess p = StartRun({"tiny.textproto", "--set", "output_dir=/tmp/a"}, "/tmp/a.log");
//   ::kill(p.pid, SIGTERM);
//   EXPECT_EQ(WaitRun(p), 128 + SIGTERM);
#ifndef MIMETIC_EXPERIMENTS_RUN_TEST_UTIL_H_
#define MIMETIC_EXPERIMENTS_RUN_TEST_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mimetic::experiments {

// The runner binary and the tiny test config in the test's runfiles.
std::string RunBinary();
std::string TinyConfig();

struct RunProcess {
  pid_t pid = -1;
  std::string log_path;  // its stdout and stderr
  pid_t copier = -1;     // with a file-size limit: the process that copies its output to the log
};

// Starts the runner with `args` (after argv[0]), stdout and stderr to `log_path`. `file_size_limit`
// > 0 sets RLIMIT_FSIZE (core/full_disk_for_test.h): with `ignore_sigxfsz` every write past that many
// bytes fails with EFBIG, as on a full disk; without it the runner starts as under a shell's `ulimit -f`,
// with SIGXFSZ's default action (death) unless it ignores the signal itself.
RunProcess StartRun(const std::vector<std::string>& args, const std::string& log_path,
                    int64_t file_size_limit = 0, bool ignore_sigxfsz = true);
// Waits for it; the exit status, or 128 + the signal that killed it.
int WaitRun(const RunProcess& p);
// StartRun then WaitRun.
int RunToEnd(const std::vector<std::string>& args, const std::string& log_path, int64_t file_size_limit = 0,
             bool ignore_sigxfsz = true);

std::string ReadFile(const std::string& path);
// Waits (up to `seconds`) until `path` exists and contains `text`; whether it did.
bool WaitForText(const std::string& path, const std::string& text, double seconds);

// The relative paths of the regular files below `dir` whose names contain `part` (sorted).
std::vector<std::string> FilesNamed(const std::string& dir, const std::string& part);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUN_TEST_UTIL_H_
