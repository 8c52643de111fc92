// Copying chosen files out of a folder tree that anyone may have made: a clone's kept results, the points a
// GPU machine sent back, a run directory a user restored from either. Such a tree can hold symbolic links
// (to ~/.bashrc, to itself), FIFOs, device files, absurd depths or huge files; none of them may make the
// copy write outside its destination, hang, crash or fill the disk.
//
// The rules, each enforced here and nowhere else:
//   - Nothing is followed: every entry is examined with lstat, and a symbolic link (or a FIFO, socket or
//     device) where a file would be copied or a folder entered is refused by name; a link loop is therefore
//     refused at its first link, never walked.
//   - The destination is a folder this call creates (it must not exist), and every file in it is created
//     with O_CREAT | O_EXCL | O_NOFOLLOW inside folders this call made, so a write lands in the destination
//     or fails. Relative paths come from the names listed, never from resolving a path (fs::relative).
//   - Depth and file size are bounded; sources are opened with O_NOFOLLOW | O_NONBLOCK and checked again
//     with fstat, so a file swapped for a link or a FIFO after the listing is refused too.
//   - On any error the partial destination is removed and the status names the entry and what was expected.
//
//   UntrustedTreeFilter f;
//   f.keep_file = [](const TreeEntry& e) { return e.name() == "result.textproto"; };
//   f.enter_dir = [](const TreeEntry& e) { return e.name() != "checkpoints"; };
//   RETURN_IF_ERROR(core::CopyUntrustedTree("clone/results/cpu", "runs/fig1.restoring", f));
#ifndef MIMETIC_CORE_UNTRUSTED_TREE_H_
#define MIMETIC_CORE_UNTRUSTED_TREE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::core {

// One entry of the tree as listed (never resolved).
struct TreeEntry {
  std::vector<std::string> parts;  // path components below the tree's root, e.g. {"points", "default"}
  std::string source;              // root + "/" + parts joined: where it is read (or looked into)
  const std::string& name() const { return parts.back(); }
  std::string rel() const;  // parts joined with '/'
};

struct UntrustedTreeFilter {
  // Whether a file is copied (only asked of names that are not folders).
  std::function<bool(const TreeEntry&)> keep_file;
  // Whether a folder is entered; a folder with nothing kept below it is not created.
  std::function<bool(const TreeEntry&)> enter_dir;
  int max_depth = 16;                         // components below the root
  int64_t max_file_bytes = int64_t{1} << 28;  // 256 MiB: a kept file is small (teacher weights: < 1 MB)
  int64_t max_files = 100000;                 // files copied in all
};

// Lists what `filter` keeps under `root` (relative paths, in a fixed sorted order), refusing as described
// above. `root` itself must be a real folder, not a link to one.
absl::StatusOr<std::vector<std::string>> ListUntrustedTree(const std::string& root,
                                                           const UntrustedTreeFilter& filter);

// Copies what `filter` keeps under `from` into `to`, which must not exist (its parent must). Returns the
// files copied, relative to `to`. On error nothing is left at `to`.
absl::StatusOr<std::vector<std::string>> CopyUntrustedTree(const std::string& from, const std::string& to,
                                                           const UntrustedTreeFilter& filter);

// OK when no component of `path` below `base` (base itself excluded) is a symbolic link, and `path` is
// lexically inside `base`; a component that does not exist yet is fine. For paths a program writes into a
// checkout that may have come from anyone: `figures/fig1/results` committed as a link to $HOME is refused.
absl::Status CheckNoLinksBelow(const std::string& base, const std::string& path);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_UNTRUSTED_TREE_H_
