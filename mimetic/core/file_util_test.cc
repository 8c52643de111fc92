#include "mimetic/core/file_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/full_disk_for_test.h"

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

// The temporaries left in `dir`.
int TempsIn(const std::string& dir) {
  int n = 0;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    int64_t pid = 0;
    n += IsTempName(e->d_name, &pid) ? 1 : 0;
  }
  if (d != nullptr) ::closedir(d);
  return n;
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
  EXPECT_EQ(TempsIn(TempDir()), 0);
}

TEST(WriteFileAtomicallyTest, AFailedWriteKeepsTheOldFile) {
  const std::string dir = TempDir() + "/atomic_full";
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = dir + "/config.textproto";
  ASSERT_TRUE(WriteFileAtomically(path, {"old"}).ok());
  // A disk that fills up after 8 bytes.
  const int code = RunWithFileSizeLimit(8, [&] {
    absl::Status s = WriteFileAtomically(path, {"a new text longer than eight bytes"});
    return s.ok() ? 1 : (s.message().find("config.textproto") == std::string::npos ? 2 : 0);
  });
  EXPECT_EQ(code, 0) << "1: the failed write returned OK; 2: the error did not name the file";
  EXPECT_EQ(Read(path), "old");
  EXPECT_EQ(TempsIn(dir), 0);
  // The target is a directory: the rename fails and the temporary is removed.
  const std::string target = dir + "/a_dir";
  ASSERT_TRUE(MakeDirs(target + "/inside").ok());
  absl::Status s = WriteFileAtomically(target, {"x"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("renaming"));
  EXPECT_EQ(TempsIn(dir), 0);
}

TEST(WriteFileAtomicallyTest, TwoWritersOfOneFileNeverCollide) {
  // With one fixed "<path>.tmp" one writer renamed the other's temporary away and then failed (ENOENT),
  // or published the other's half-written bytes.
  const std::string dir = TempDir() + "/atomic_race";
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = dir + "/progress.textproto";
  const std::string a(4096, 'a'), b(4096, 'b');
  std::atomic<int> failures{0};
  auto writer = [&](const std::string& text) {
    for (int i = 0; i < 300; ++i) {
      if (!WriteFileAtomically(path, {text}).ok()) ++failures;
    }
  };
  std::thread ta(writer, a), tb(writer, b);
  ta.join();
  tb.join();
  EXPECT_EQ(failures.load(), 0);
  const std::string final_text = Read(path);
  EXPECT_TRUE(final_text == a || final_text == b);
  EXPECT_EQ(TempsIn(dir), 0);
}

TEST(RemoveStaleTempsTest, RemovesOnlyTemporariesOfDeadProcesses) {
  const std::string dir = TempDir() + "/stale";
  ASSERT_TRUE(MakeDirs(dir).ok());
  std::ofstream(dir + "/a.tmp.999999999.0") << "x";  // no such pid
  std::ofstream(TempPathFor(dir + "/b")) << "x";     // this process: alive
  std::ofstream(dir + "/c.tmp") << "x";              // not a temporary of ours
  std::ofstream(dir + "/d.tmp.12.x") << "x";         // nor this
  EXPECT_EQ(RemoveStaleTemps(dir).value(), 1);
  EXPECT_EQ(TempsIn(dir), 1);
  EXPECT_TRUE(Exists(dir + "/c.tmp"));
  EXPECT_EQ(RemoveStaleTemps(dir + "/missing").value(), 0);
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

TEST(PathTest, Pieces) {
  EXPECT_EQ(BaseName("a/b/c.png"), "c.png");
  EXPECT_EQ(AbsolutePath("/a//b/./c/../d"), "/a/b/d");
  EXPECT_EQ(AbsolutePath("/.."), "/");
  EXPECT_EQ(RelativePath("/runs/paper", "/runs/fig1/figure.png"), "../fig1/figure.png");
  EXPECT_EQ(RelativePath("/runs/paper", "/runs/paper/a.png"), "a.png");
  EXPECT_EQ(RelativePath("/runs/paper/", "/runs/paper"), ".");
  EXPECT_EQ(RelativePath("/x/y", "/z.png"), "../../z.png");
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(AbsolutePath("q/r"), AbsolutePath(absl::StrCat(cwd, "/q/r")));
  EXPECT_EQ(RelativePath("runs/paper", "runs/fig2/figure.png"), "../fig2/figure.png");
}

TEST(FilesTest, FileExists) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/file_exists") + "/deep/er";
  ASSERT_TRUE(core::MakeDirs(dir).ok());
  EXPECT_FALSE(FileExists(dir));  // a directory is not a file
  const std::string file = dir + "/file.txt";
  EXPECT_FALSE(FileExists(file));
  ASSERT_TRUE(WriteTextFile(file, "x").ok());
  EXPECT_TRUE(FileExists(file));
}

TEST(TextFileTest, ReadsBackWhatWasWrittenAndRefusesNonFiles) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/text_file");
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteTextFile(dir + "/a.txt", "one\ntwo\n").ok());
  absl::StatusOr<std::string> text = ReadTextFile(dir + "/a.txt");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "one\ntwo\n");
  EXPECT_EQ(ReadTextFile(dir + "/absent.txt").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadTextFile(dir).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace mimetic::core
