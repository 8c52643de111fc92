#include "mimetic/experiments/run_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {

namespace fs = std::filesystem;

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  return core::WriteFileAtomically(path, {absl::string_view(text)});
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return absl::NotFoundError(absl::StrCat("cannot read '", path, "': no such file"));
  if (!fs::is_regular_file(st)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read '", path, "': not a regular file"));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return core::ErrnoError(errno, absl::StrCat("cannot read '", path, "'"));
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = core::ErrnoError(errno, absl::StrCat("cannot read '", path, "'"));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace mimetic::experiments
