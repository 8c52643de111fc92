#include "mimetic/experiments/campaign/campaign_files.h"

#include <unistd.h>

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

fs::path Fresh(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void Write(const fs::path& p, const std::string& text = "x") {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(core::WriteTextFile(p.string(), text).ok());
}

TEST(CampaignFilesTest, TheNewestCheckpointIsTheGreatestStepAndOtherNamesAreIgnored) {
  EXPECT_EQ(NewestCheckpoint({"step_00000003.safetensors", "step_00000012.safetensors", "progress.textproto",
                              "step_00000099.safetensors.tmp-123", "step_x.safetensors"}),
            "step_00000012.safetensors");
  EXPECT_EQ(NewestCheckpoint({"config.textproto"}), "");
}

TEST(CampaignFilesTest, PointDirOfAFileBelowARunDirectory) {
  EXPECT_EQ(PointDirOf("points/default/seed1/checkpoints/step_00000003.safetensors"), "points/default/seed1");
  EXPECT_EQ(PointDirOf("points/mimetic/lr=1e-3/seed2/result.textproto"), "points/mimetic/lr=1e-3/seed2");
  EXPECT_EQ(PointDirOf("sweep.textproto"), "");
}

TEST(CampaignFilesTest, ProvenanceRoundTripsAndABadOneIsNamed) {
  const fs::path dir = Fresh("provenance");
  PointProvenance p;
  p.set_item("fig9_gpu");
  p.set_device("NVIDIA H100 80GB HBM3");
  p.set_model_digest("0123456789abcdef");
  ASSERT_TRUE(WriteProvenance(dir.string(), p).ok());
  EXPECT_EQ(ReadProvenance(dir.string())->DebugString(), p.DebugString());
  Write(dir / kProvenanceFile, "colour: 3");
  EXPECT_THAT(ReadProvenance(dir.string()).status().message(), HasSubstr("is not a PointProvenance"));
  EXPECT_TRUE(absl::IsNotFound(ReadProvenance(Fresh("none").string()).status()));
}

// Exactly the files chosen, and nothing through a link.
TEST(CampaignFilesTest, CopyChosenFilesCopiesThoseOnlyAndRefusesALink) {
  const fs::path from = Fresh("chosen_from");
  Write(from / "sweep.textproto");
  Write(from / "points/default/seed1/result.textproto");
  Write(from / "points/default/seed1/metrics.jsonl");
  const fs::path to = fs::path(::testing::TempDir()) / "chosen_to";
  fs::remove_all(to);
  absl::StatusOr<std::vector<std::string>> copied = CopyChosenFiles(
      from.string(), to.string(), {"sweep.textproto", "points/default/seed1/result.textproto", "absent"});
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_THAT(*copied, ElementsAre("points/default/seed1/result.textproto", "sweep.textproto"));
  EXPECT_FALSE(fs::exists(to / "points/default/seed1/metrics.jsonl"));
  fs::remove(from / "sweep.textproto");
  ASSERT_EQ(::symlink("/etc/passwd", (from / "sweep.textproto").c_str()), 0);
  fs::remove_all(to);
  absl::Status s = CopyChosenFiles(from.string(), to.string(), {"sweep.textproto"}).status();
  EXPECT_THAT(s.message(), HasSubstr("sweep.textproto' is a symbolic link"));
  EXPECT_FALSE(fs::exists(to));
}

TEST(CampaignFilesTest, InflightPathIsPerFigureAndPreset) {
  EXPECT_EQ(InflightPath("/repo", "fig1", "paper"), "/repo/mimetic/experiments/campaign/inflight/fig1_paper");
}

}  // namespace
}  // namespace mimetic::experiments
