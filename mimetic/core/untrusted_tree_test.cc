#include "mimetic/core/untrusted_tree.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::core {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fresh(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/untrusted_" + name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void Put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(WriteTextFile(p.string(), text).ok()) << p;
}

// Keeps *.textproto, enters every folder but "checkpoints".
UntrustedTreeFilter Results() {
  UntrustedTreeFilter f;
  f.keep_file = [](const TreeEntry& e) { return fs::path(e.name()).extension() == ".textproto"; };
  f.enter_dir = [](const TreeEntry& e) { return e.name() != "checkpoints"; };
  return f;
}

TEST(UntrustedTreeTest, CopiesTheKeptFilesInSortedOrder) {
  const fs::path root = Fresh("plain");
  Put(root / "from/sweep.textproto", "sweep");
  Put(root / "from/points/b/seed1/result.textproto", "b");
  Put(root / "from/points/a/seed1/result.textproto", "a");
  Put(root / "from/points/a/seed1/checkpoints/step.textproto", "not entered");
  Put(root / "from/points/a/seed1/metrics.jsonl", "not kept");
  absl::StatusOr<std::vector<std::string>> copied =
      CopyUntrustedTree((root / "from").string(), (root / "to").string(), Results());
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_THAT(*copied, ElementsAre("points/a/seed1/result.textproto", "points/b/seed1/result.textproto",
                                   "sweep.textproto"));
  EXPECT_EQ(ReadTextFile((root / "to/points/a/seed1/result.textproto").string()).value(), "a");
  EXPECT_FALSE(fs::exists(root / "to/points/a/seed1/checkpoints"));
  EXPECT_FALSE(fs::exists(root / "to/points/a/seed1/metrics.jsonl"));
}

// The attack of the issue: a kept file that is a relative link to a file outside. Before, the copy resolved
// the link (fs::relative) and overwrote the target; now it is refused, the target is untouched and
// nothing is left at the destination.
TEST(UntrustedTreeTest, RefusesALinkAndWritesNothingAnywhere) {
  const fs::path root = Fresh("link");
  Put(root / "home/.bashrc", "precious");
  Put(root / "from/sweep.textproto", "sweep");
  fs::create_directories(root / "from/points/default/seed1");
  fs::create_symlink("../../../../home/.bashrc", root / "from/points/default/seed1/result.textproto");
  absl::StatusOr<std::vector<std::string>> copied =
      CopyUntrustedTree((root / "from").string(), (root / "to").string(), Results());
  ASSERT_FALSE(copied.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(copied.status())) << copied.status();
  EXPECT_THAT(copied.status().message(),
              HasSubstr("points/default/seed1/result.textproto' is a symbolic link; expected a plain file"));
  EXPECT_EQ(ReadTextFile((root / "home/.bashrc").string()).value(), "precious");
  EXPECT_FALSE(fs::exists(root / "to"));
}

// A folder link that loops back (points/x -> ..) is refused at the link, not walked 40 times deep; a link
// as the tree's root is refused too.
TEST(UntrustedTreeTest, RefusesALoopAndALinkedRoot) {
  const fs::path root = Fresh("loop");
  Put(root / "from/sweep.textproto", "sweep");
  fs::create_directories(root / "from/points");
  fs::create_directory_symlink("..", root / "from/points/x");
  absl::StatusOr<std::vector<std::string>> copied =
      CopyUntrustedTree((root / "from").string(), (root / "to").string(), Results());
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.status().message(), HasSubstr("points/x' is a symbolic link"));
  fs::create_directory_symlink(root / "from", root / "linked");
  absl::StatusOr<std::vector<std::string>> linked = ListUntrustedTree((root / "linked").string(), Results());
  ASSERT_FALSE(linked.ok());
  EXPECT_THAT(linked.status().message(), HasSubstr("linked' is a symbolic link; expected a folder"));
}

// A link, FIFO or other odd entry is harmless where nothing would be read (a name neither kept nor
// entered); a FIFO with a kept name is refused without blocking.
TEST(UntrustedTreeTest, IgnoresOddEntriesThatAreNotReadAndRefusesAFifoThatWouldBe) {
  const fs::path root = Fresh("fifo");
  Put(root / "from/sweep.textproto", "sweep");
  fs::create_symlink("/etc/passwd", root / "from/checkpoints");  // neither kept nor entered
  ASSERT_TRUE(ListUntrustedTree((root / "from").string(), Results()).ok());
  ASSERT_EQ(::mkfifo((root / "from/claims.textproto").c_str(), 0644), 0);
  absl::StatusOr<std::vector<std::string>> listed = ListUntrustedTree((root / "from").string(), Results());
  ASSERT_FALSE(listed.ok());
  EXPECT_THAT(listed.status().message(), HasSubstr("claims.textproto' is a FIFO; expected a plain file"));
}

TEST(UntrustedTreeTest, BoundsDepthSizeAndCountAndNeedsAFreshDestination) {
  const fs::path root = Fresh("bounds");
  fs::path deep = root / "from";
  for (int i = 0; i < 5; ++i) deep /= "d";
  Put(deep / "a.textproto", "x");
  UntrustedTreeFilter f = Results();
  f.max_depth = 3;
  absl::StatusOr<std::vector<std::string>> listed = ListUntrustedTree((root / "from").string(), f);
  ASSERT_FALSE(listed.ok());
  EXPECT_THAT(listed.status().message(), HasSubstr("is 4 folders deep; expected at most 3"));
  f = Results();
  f.max_file_bytes = 0;
  listed = ListUntrustedTree((root / "from").string(), f);
  ASSERT_FALSE(listed.ok());
  EXPECT_THAT(listed.status().message(), HasSubstr("has 1 bytes; expected at most 0"));
  f = Results();
  Put(root / "from/b.textproto", "y");
  f.max_files = 1;
  listed = ListUntrustedTree((root / "from").string(), f);
  ASSERT_FALSE(listed.ok());
  EXPECT_THAT(listed.status().message(), HasSubstr("more than 1 files to copy"));
  fs::create_directories(root / "to");
  absl::StatusOr<std::vector<std::string>> copied =
      CopyUntrustedTree((root / "from").string(), (root / "to").string(), Results());
  ASSERT_FALSE(copied.ok());
  EXPECT_THAT(copied.status().message(), HasSubstr("it must not exist yet"));
  EXPECT_TRUE(fs::exists(root / "to"));  // what was there is not removed
}

TEST(UntrustedTreeTest, ChecksThatNoFolderOfAPathIsALink) {
  const fs::path root = Fresh("below");
  fs::create_directories(root / "checkout/figures/fig1");
  fs::create_directories(root / "home");
  EXPECT_TRUE(
      CheckNoLinksBelow((root / "checkout").string(), (root / "checkout/figures/fig1/results/cpu").string())
          .ok());
  fs::create_directory_symlink(root / "home", root / "checkout/figures/fig1/results");
  absl::Status s =
      CheckNoLinksBelow((root / "checkout").string(), (root / "checkout/figures/fig1/results/cpu").string());
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("fig1/results' is a symbolic link"));
  s = CheckNoLinksBelow((root / "checkout").string(), (root / "checkout/../home").string());
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
}

}  // namespace
}  // namespace mimetic::core
