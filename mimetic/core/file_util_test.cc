#include "mimetic/core/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t != nullptr ? t : "/tmp";
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST(MakeDirsTest, CreatesParentsAndAcceptsExistingDirectories) {
  const std::string dir = TempDir() + "/make_dirs/a/b/c";
  ASSERT_TRUE(MakeDirs(dir).ok());
  EXPECT_TRUE(Exists(dir));
  EXPECT_TRUE(MakeDirs(dir).ok());
  EXPECT_TRUE(MakeDirs(".").ok());
  EXPECT_EQ(MakeDirs("").code(), absl::StatusCode::kInvalidArgument);
}

TEST(MakeDirsTest, AFileInTheWayIsNamed) {
  const std::string file = TempDir() + "/make_dirs_file";
  std::ofstream(file) << "x";
  absl::Status s = MakeDirs(file + "/below");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("make_dirs_file"));
  EXPECT_THAT(s.message(), HasSubstr("Not a directory"));
  EXPECT_EQ(MakeDirs(file).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(WriteFileAtomicallyTest, WritesTheChunksAndLeavesNoTemporary) {
  const std::string path = TempDir() + "/atomic.txt";
  ASSERT_TRUE(WriteFileAtomically(path, {"old"}).ok());
  ASSERT_TRUE(WriteFileAtomically(path, {"hello ", "", "world"}).ok());
  EXPECT_EQ(Read(path), "hello world");
  EXPECT_FALSE(Exists(path + ".tmp"));
}

TEST(WriteFileAtomicallyTest, AFailedWriteKeepsTheOldFile) {
  const std::string path = TempDir() + "/atomic_blocked.txt";
  ASSERT_TRUE(WriteFileAtomically(path, {"old"}).ok());
  // A directory where the temporary would go: the temporary cannot be created.
  ASSERT_EQ(::mkdir((path + ".tmp").c_str(), 0755), 0);
  absl::Status s = WriteFileAtomically(path, {"new"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("atomic_blocked.txt.tmp"));
  EXPECT_EQ(Read(path), "old");
  ::rmdir((path + ".tmp").c_str());
  // The target is a directory: the rename fails and the temporary is removed.
  const std::string dir = TempDir() + "/atomic_dir";
  ASSERT_TRUE(MakeDirs(dir + "/inside").ok());
  s = WriteFileAtomically(dir, {"x"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("renaming"));
  EXPECT_FALSE(Exists(dir + ".tmp"));
}

TEST(WriteAndFlushTest, AFullDeviceIsAnError) {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (full == nullptr) GTEST_SKIP() << "no /dev/full";
  absl::Status s = WriteAndFlush(full, "/dev/full", "bytes");
  std::fclose(full);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/dev/full"));
}

TEST(DirNameTest, Cases) {
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/c"), "/");
}

}  // namespace
}  // namespace mimetic::core
