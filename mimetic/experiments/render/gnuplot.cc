#include "mimetic/experiments/render/gnuplot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/spawn.h"
#include "mimetic/core/subprocess.h"

namespace mimetic::experiments {

std::string GpQuote(const std::string& text) {
  std::string flat = absl::StrReplaceAll(text, {{"'", "''"}, {"\n", " "}, {"\r", " "}});
  return absl::StrCat("'", flat, "'");
}

std::string GpNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.17g", v) : "NaN"; }

std::string PngPreamble(const std::string& png_name, int width, int height, bool truecolor) {
  return absl::StrCat("if (!exists(\"outfile\")) outfile = ", GpQuote(png_name), "\n",
                      // GPVAL_TERMINALS is the list `set terminal` prints, space-separated with
                      // spaces at both ends.
                      "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n  set terminal "
                      "pngcairo size ",
                      width, ",", height, " noenhanced font 'sans,10'\n} else {\n  set terminal png ",
                      truecolor ? "truecolor " : "", "size ", width, ",", height,
                      " noenhanced\n}\nset output outfile\n");
}

bool ProgramOnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  return core::FindProgram(program).ok();
}

absl::Status CheckPngComplete(const std::string& path) {
  static constexpr unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  // The IEND chunk: zero length, its type, and the CRC of the type.
  static constexpr unsigned char kIend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  core::ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return core::ErrnoError(errno, absl::StrCat("opening '", path, "'"));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return core::ErrnoError(errno, absl::StrCat("reading '", path, "'"));
  unsigned char head[8] = {0}, tail[12] = {0};
  const bool whole = st.st_size >= 20 && ::pread(fd.get(), head, 8, 0) == 8 &&
                     ::pread(fd.get(), tail, 12, st.st_size - 12) == 12 &&
                     std::memcmp(head, kSignature, 8) == 0 && std::memcmp(tail, kIend, 12) == 0;
  if (!whole) {
    return absl::DataLossError(absl::StrCat("'", path, "' (", st.st_size,
                                            " bytes) is not a whole PNG: it does not end with the IEND chunk "
                                            "(cut short, e.g. by a full disk)"));
  }
  return absl::OkStatus();
}

absl::Status RunGnuplotToPng(const std::string& gnuplot, const std::string& script_name,
                             const std::string& dir, const std::string& png_path, const std::string& where) {
  const std::string tmp_name = core::BaseName(png_path) + ".tmp";
  const std::string tmp_path = (dir == "/" ? "/" : dir + "/") + tmp_name;
  absl::StatusOr<core::ProgramResult> run =
      core::RunProgram({gnuplot, "-e", absl::StrCat("outfile=", GpQuote(tmp_name)), script_name}, dir,
                       "Debian: gnuplot-nox; tools/bazel installs it");
  if (!run.ok()) {
    ::unlink(tmp_path.c_str());
    return absl::Status(run.status().code(), absl::StrCat(where, ": ", run.status().message()));
  }
  struct stat st;
  const bool drawn = ::stat(tmp_path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  if (run->exit_code != 0 || !drawn) {
    ::unlink(tmp_path.c_str());
    return absl::InternalError(absl::StrCat(
        where, ": '", gnuplot, " ", script_name, "' in '", dir, "' ",
        run->exit_code != 0 ? absl::StrCat("exited with status ", run->exit_code) : "wrote no image",
        run->output.empty() ? std::string(" and printed nothing") : ":\n" + run->output.substr(0, 4000)));
  }
  // gnuplot exits 0 even when its write failed (a full disk), so its status says nothing about the file:
  // only a whole image, on disk (fsync: a crash after the rename must not leave a short file), replaces the
  // old one.
  absl::Status whole = CheckPngComplete(tmp_path);
  if (whole.ok()) {
    core::ScopedFd fd(::open(tmp_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 || ::fsync(fd.get()) != 0) {
      whole = core::ErrnoError(errno, absl::StrCat("syncing '", tmp_path, "'"));
    }
  }
  if (!whole.ok()) {
    ::unlink(tmp_path.c_str());
    return absl::Status(whole.code(), absl::StrCat(where, ": ", whole.message()));
  }
  if (std::rename(tmp_path.c_str(), png_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_path.c_str());
    return core::ErrnoError(err, absl::StrCat(where, ": renaming '", tmp_path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
