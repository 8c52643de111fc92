#include "mimetic/core/untrusted_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"

namespace mimetic::core {
namespace {

namespace fs = std::filesystem;

// What an lstat saw, in words, for errors: "a symbolic link", "a FIFO".
std::string KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISREG(mode)) return "a plain file";
  return "an entry of unknown type";
}

absl::Status Refused(const std::string& path, mode_t mode, const std::string& expected) {
  return absl::FailedPreconditionError(
      absl::StrCat("'", path, "' is ", KindOf(mode), "; expected ", expected,
                   " (a tree copied from elsewhere is never followed out of itself)"));
}

// The names in the folder open as `dir_fd`, sorted (readdir's order is the file system's).
absl::StatusOr<std::vector<std::string>> Names(int dir_fd, const std::string& path) {
  const int fd = ::dup(dir_fd);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot list '", path, "'"));
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    ::close(fd);
    return ErrnoError(err, absl::StrCat("cannot list '", path, "'"));
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) return ErrnoError(err, absl::StrCat("cannot list '", path, "'"));
  std::sort(names.begin(), names.end());
  return names;
}

// Opens `name` in `dir_fd` as a folder without following a link.
absl::StatusOr<int> OpenDirAt(int dir_fd, const std::string& name, const std::string& path) {
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int err = errno;
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
    return Refused(path, st.st_mode, "a folder");
  }
  return ErrnoError(err, absl::StrCat("cannot open '", path, "'"));
}

struct Walk {
  const UntrustedTreeFilter& filter;
  std::vector<std::string> kept;
};

absl::Status ListDir(int dir_fd, TreeEntry& at, Walk& walk) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, Names(dir_fd, at.source));
  for (const std::string& name : names) {
    TreeEntry e{at.parts, absl::StrCat(at.source, "/", name)};
    e.parts.push_back(name);
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoError(errno, absl::StrCat("cannot examine '", e.source, "'"));
    }
    if (S_ISDIR(st.st_mode)) {
      if (!walk.filter.enter_dir || !walk.filter.enter_dir(e)) continue;
      if (static_cast<int>(e.parts.size()) > walk.filter.max_depth) {
        return absl::FailedPreconditionError(absl::StrCat("'", e.source, "' is ", e.parts.size(),
                                                          " folders deep; expected at most ",
                                                          walk.filter.max_depth));
      }
      ASSIGN_OR_RETURN(int sub, OpenDirAt(dir_fd, name, e.source));
      const absl::Status s = ListDir(sub, e, walk);
      ::close(sub);
      RETURN_IF_ERROR(s);
      continue;
    }
    // A link, FIFO or device is refused wherever a kept file or an entered folder of that name would be.
    const bool wanted = (walk.filter.keep_file && walk.filter.keep_file(e)) ||
                        (walk.filter.enter_dir && walk.filter.enter_dir(e));
    if (!wanted) continue;
    if (!S_ISREG(st.st_mode)) return Refused(e.source, st.st_mode, "a plain file or folder");
    if (!walk.filter.keep_file || !walk.filter.keep_file(e)) continue;
    if (st.st_size > walk.filter.max_file_bytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", e.source, "' has ", st.st_size, " bytes; expected at most ", walk.filter.max_file_bytes));
    }
    if (static_cast<int64_t>(walk.kept.size()) >= walk.filter.max_files) {
      return absl::FailedPreconditionError(absl::StrCat("'", at.source, "': more than ",
                                                        walk.filter.max_files,
                                                        " files to copy; expected at most that many"));
    }
    walk.kept.push_back(e.rel());
  }
  return absl::OkStatus();
}

// Opens the root as a real folder (a link to one is refused).
absl::StatusOr<int> OpenRoot(const std::string& root) {
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) return ErrnoError(errno, absl::StrCat("cannot examine '", root, "'"));
  if (!S_ISDIR(st.st_mode)) return Refused(root, st.st_mode, "a folder");
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot open '", root, "'"));
  return fd;
}

// Reads the file at `rel` below `root_fd`, opening every component without following links.
absl::StatusOr<std::string> ReadBelow(int root_fd, const std::string& root, const std::string& rel,
                                      int64_t max_bytes) {
  const std::vector<std::string> parts = absl::StrSplit(rel, '/');
  int dir = ::dup(root_fd);
  std::string path = root;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    path = absl::StrCat(path, "/", parts[i]);
    absl::StatusOr<int> sub = OpenDirAt(dir, parts[i], path);
    ::close(dir);
    if (!sub.ok()) return sub.status();
    dir = *sub;
  }
  path = absl::StrCat(path, "/", parts.back());
  const int fd = ::openat(dir, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  const int open_err = errno;
  ::close(dir);
  if (fd < 0)
    return ErrnoError(open_err, absl::StrCat("cannot open '", path, "' (a link is never followed)"));
  ScopedFd file(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, absl::StrCat("cannot examine '", path, "'"));
  if (!S_ISREG(st.st_mode)) return Refused(path, st.st_mode, "a plain file");
  if (st.st_size > max_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' has ", st.st_size, " bytes; expected at most ", max_bytes));
  }
  std::string bytes;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(errno, absl::StrCat("cannot read '", path, "'"));
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(bytes.size()) > max_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", path, "' grew past ", max_bytes, " bytes while it was read"));
    }
  }
  return bytes;
}

// Writes `bytes` as `rel` below `to_fd`, making folders as needed; every name is created new, so nothing is
// followed and nothing outside `to` is touched.
absl::Status WriteBelow(int to_fd, const std::string& to, const std::string& rel, const std::string& bytes) {
  const std::vector<std::string> parts = absl::StrSplit(rel, '/');
  int dir = ::dup(to_fd);
  std::string path = to;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    path = absl::StrCat(path, "/", parts[i]);
    if (::mkdirat(dir, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
      const int err = errno;
      ::close(dir);
      return ErrnoError(err, absl::StrCat("cannot create '", path, "'"));
    }
    absl::StatusOr<int> sub = OpenDirAt(dir, parts[i], path);
    ::close(dir);
    if (!sub.ok()) return sub.status();
    dir = *sub;
  }
  path = absl::StrCat(path, "/", parts.back());
  const int fd =
      ::openat(dir, parts.back().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  const int open_err = errno;
  ::close(dir);
  if (fd < 0) return ErrnoError(open_err, absl::StrCat("cannot create '", path, "'"));
  ScopedFd file(fd);
  RETURN_IF_ERROR(WriteAll(fd, path, bytes.data(), bytes.size()));
  if (::fsync(fd) != 0) return ErrnoError(errno, absl::StrCat("cannot sync '", path, "'"));
  if (file.Close() != 0) return ErrnoError(errno, absl::StrCat("cannot close '", path, "'"));
  return absl::OkStatus();
}

}  // namespace

std::string TreeEntry::rel() const { return absl::StrJoin(parts, "/"); }

absl::StatusOr<std::vector<std::string>> ListUntrustedTree(const std::string& root,
                                                           const UntrustedTreeFilter& filter) {
  ASSIGN_OR_RETURN(int fd, OpenRoot(root));
  ScopedFd root_fd(fd);
  Walk walk{filter, {}};
  TreeEntry top{{}, root};
  RETURN_IF_ERROR(ListDir(fd, top, walk));
  return walk.kept;
}

absl::StatusOr<std::vector<std::string>> CopyUntrustedTree(const std::string& from, const std::string& to,
                                                           const UntrustedTreeFilter& filter) {
  ASSIGN_OR_RETURN(std::vector<std::string> kept, ListUntrustedTree(from, filter));
  if (::mkdir(to.c_str(), 0755) != 0) {
    return ErrnoError(errno, absl::StrCat("cannot create '", to, "' (it must not exist yet)"));
  }
  auto copy_all = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(int f, OpenRoot(from));
    ScopedFd from_fd(f);
    ASSIGN_OR_RETURN(int t, OpenRoot(to));
    ScopedFd to_fd(t);
    for (const std::string& rel : kept) {
      ASSIGN_OR_RETURN(std::string bytes, ReadBelow(f, from, rel, filter.max_file_bytes));
      RETURN_IF_ERROR(WriteBelow(t, to, rel, bytes));
    }
    return absl::OkStatus();
  };
  const absl::Status s = copy_all();
  if (!s.ok()) {
    std::error_code ec;
    fs::remove_all(to, ec);  // removes links themselves, never their targets
    return s;
  }
  return kept;
}

absl::Status CheckNoLinksBelow(const std::string& base, const std::string& path) {
  const fs::path b = fs::path(AbsolutePath(base)), p = fs::path(AbsolutePath(path));
  const fs::path rel = p.lexically_relative(b);
  if (rel.empty() || *rel.begin() == "..") {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not inside '", base, "'"));
  }
  fs::path at = b;
  for (const fs::path& part : rel) {
    if (part == ".") continue;
    at /= part;
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno == ENOENT) return absl::OkStatus();  // the rest is made by the writer
      return ErrnoError(errno, absl::StrCat("cannot examine '", at.string(), "'"));
    }
    if (S_ISLNK(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", at.string(), "' is a symbolic link; expected a folder of the checkout (writing through it ",
          "would write outside '", base, "')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mimetic::core
