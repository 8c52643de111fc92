#include "mimetic/experiments/runner/testing/run_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "mimetic/core/full_disk_for_test.h"

namespace mimetic::experiments {

namespace fs = std::filesystem;

namespace {

std::string Runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/mimetic/" + path;
}

}  // namespace

std::string RunBinary() { return Runfile("mimetic/experiments/run"); }
std::string TinyConfig() { return Runfile("mimetic/experiments/runner/testing/tiny.textproto"); }

RunProcess StartRun(const std::vector<std::string>& args, const std::string& log_path,
                    int64_t file_size_limit, bool ignore_sigxfsz) {
  RunProcess p;
  p.log_path = log_path;
  std::vector<std::string> argv = {RunBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (file_size_limit > 0) {
    // The limit would cut the log file too: the run writes into a pipe, and a copier without the limit
    // appends what comes out of it to the log.
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return p;
    p.copier = ::fork();
    if (p.copier == 0) {
      char buf[4096];
      ssize_t n;
      ::close(fds[1]);
      while ((n = ::read(fds[0], buf, sizeof(buf))) > 0) (void)!::write(log, buf, static_cast<size_t>(n));
      ::_exit(0);
    }
    ::close(fds[0]);
    ::close(log);
    log = fds[1];
  }
  p.pid = ::fork();
  if (p.pid == 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    if (file_size_limit > 0) core::LimitFileSize(file_size_limit, ignore_sigxfsz);
    std::vector<char*> c;
    for (std::string& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ::close(log);
  return p;
}

int WaitRun(const RunProcess& p) {
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  // The log copier (if any) ends when the run's end of the pipe closes: then the log is complete.
  if (p.copier > 0) ::waitpid(p.copier, nullptr, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int RunToEnd(const std::vector<std::string>& args, const std::string& log_path, int64_t file_size_limit,
             bool ignore_sigxfsz) {
  return WaitRun(StartRun(args, log_path, file_size_limit, ignore_sigxfsz));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WaitForText(const std::string& path, const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (ReadFile(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::vector<std::string> FilesNamed(const std::string& dir, const std::string& part) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename().string().find(part) != std::string::npos) {
      out.push_back(fs::relative(it->path(), dir).string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mimetic::experiments
