#include "mimetic/train/checkpoint.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/init/safetensors.h"

namespace mimetic::train {
namespace {

using core::DType;
using core::Key;
using core::ParamTree;
using core::Tensor;
using ::testing::HasSubstr;

std::string TestDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/checkpoint_test_", name);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Values that a lossy round trip would change: -0, subnormals, the largest float. (Not NaN or infinity,
// which a checkpoint may not hold; safetensors_test round-trips those, payloads included.)
std::vector<float> Awkward(int n, float base) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = base + 0.1f * i;
  if (n > 0) v[0] = std::numeric_limits<float>::max();
  if (n > 1) v[1] = -0.0f;
  if (n > 2) v[2] = std::numeric_limits<float>::denorm_min();
  if (n > 3) v[3] = -std::numeric_limits<float>::max();
  return v;
}

Tensor F32(const core::Shape& shape, float base) {
  auto t = Tensor::FromHost<float>(shape, Awkward(static_cast<int>(core::NumElements(shape)), base));
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

ParamTree Params(float base = 1.0f) {
  auto tree = ParamTree::FromPairs({
      {"embedding/weight", F32({5, 4}, base)},
      {"layers/0/mixer/A_log", F32({4, 3}, base + 10)},
      {"layers/0/mixer/D", F32({4}, base + 20)},
      {"layers/1/norm/weight", *Tensor::FromHost<double>({2}, {1e-300, -2.5})},
  });
  EXPECT_TRUE(tree.ok()) << tree.status();
  return *tree;
}

TrainState State(int64_t step) {
  TrainState state;
  state.params = Params(static_cast<float>(step));
  state.m = Params(100.0f + step);
  state.v = Params(200.0f + step);
  state.step = step;
  return state;
}

void ExpectBitEqual(const ParamTree& a, const ParamTree& b) {
  ASSERT_EQ(a.Paths(), b.Paths());
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a.Leaves()[i];
    const Tensor& y = b.Leaves()[i];
    ASSERT_EQ(x.meta(), y.meta()) << a.Paths()[i];
    EXPECT_EQ(std::memcmp(x.storage()->data(), y.storage()->data(), x.bytes()), 0) << a.Paths()[i];
  }
}

TEST(CheckpointTest, FileNameHasEightDigits) {
  EXPECT_EQ(CheckpointFileName(0), "step_00000000.safetensors");
  EXPECT_EQ(CheckpointFileName(1000), "step_00001000.safetensors");
  EXPECT_EQ(CheckpointFileName(123456789), "step_123456789.safetensors");
}

TEST(CheckpointTest, RoundTripIsBitExact) {
  const std::string dir = TestDir("roundtrip") + "/nested/ckpt";  // created with its parents
  const TrainState state = State(7);
  const Key key = Key::FromWords({0xdeadbeefu, 42u});
  ASSERT_TRUE(
      SaveCheckpoint(dir, state, key, {{"config", "task: COPY\nlength: 64"}, {"git", "abc123"}}).ok());
  ASSERT_TRUE(Exists(dir + "/step_00000007.safetensors"));
  int files = 0;  // the checkpoint and no temporary
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);

  auto loaded = LoadLatestCheckpoint(dir, Params(-3.0f));  // `like` gives structure only
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state.step, 7);
  EXPECT_EQ(loaded->data_key, key);
  EXPECT_EQ(loaded->path, dir + "/step_00000007.safetensors");
  EXPECT_TRUE(loaded->skipped.empty());
  EXPECT_EQ(loaded->metadata,
            (std::map<std::string, std::string>{{"config", "task: COPY\nlength: 64"}, {"git", "abc123"}}));
  ExpectBitEqual(loaded->state.params, state.params);
  ExpectBitEqual(loaded->state.m, state.m);
  ExpectBitEqual(loaded->state.v, state.v);
}

TEST(CheckpointTest, LatestIsChosenByStepNotByWriteOrder) {
  const std::string dir = TestDir("latest");
  const Key key = Key::FromSeed(3);
  for (int64_t step : {5, 300000000, 100, 20}) {  // 9 digits sorts after 8 numerically
    ASSERT_TRUE(SaveCheckpoint(dir, State(step), FoldIn(key, static_cast<uint32_t>(step)), {}).ok());
  }
  // Distractors: a leftover temporary file, an unrelated file, a name with a non-digit.
  WriteFile(dir + "/step_900000000.safetensors.tmp.999999999.0", "partial");
  WriteFile(dir + "/notes.txt", "hello");
  WriteFile(dir + "/step_9x.safetensors", "nope");

  auto list = ListCheckpoints(dir);
  ASSERT_TRUE(list.ok()) << list.status();
  std::vector<int64_t> steps;
  for (const CheckpointInfo& info : *list) steps.push_back(info.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{5, 20, 100, 300000000}));

  auto loaded = LoadLatestCheckpoint(dir, Params());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state.step, 300000000);
  EXPECT_EQ(loaded->data_key, FoldIn(key, 300000000u));
  ExpectBitEqual(loaded->state.params, State(300000000).params);
}

TEST(CheckpointTest, KeepLastDeletesTheOldest) {
  const std::string dir = TestDir("keep_last");
  for (int64_t step = 1; step <= 5; ++step) {
    ASSERT_TRUE(SaveCheckpoint(dir, State(step * 10), Key::FromSeed(0), {}, /*keep_last=*/2).ok());
  }
  auto list = ListCheckpoints(dir);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].step, 40);
  EXPECT_EQ((*list)[1].step, 50);
}

TEST(CheckpointTest, NoCheckpointIsNotFound) {
  auto missing = LoadLatestCheckpoint(TestDir("does_not_exist"), Params());
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  const std::string dir = TestDir("empty");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  auto empty = LoadLatestCheckpoint(dir, Params());
  EXPECT_TRUE(absl::IsNotFound(empty.status())) << empty.status();
}

TEST(CheckpointTest, TruncatedNewestIsAnErrorUnlessFallingBack) {
  const std::string dir = TestDir("truncated");
  ASSERT_TRUE(SaveCheckpoint(dir, State(10), Key::FromSeed(1), {}).ok());
  ASSERT_TRUE(SaveCheckpoint(dir, State(20), Key::FromSeed(2), {}).ok());
  const std::string newest = dir + "/step_00000020.safetensors";
  const std::string bytes = ReadFile(newest);
  WriteFile(newest, bytes.substr(0, bytes.size() - 7));

  auto strict = LoadLatestCheckpoint(dir, Params());
  ASSERT_FALSE(strict.ok());
  EXPECT_TRUE(absl::IsDataLoss(strict.status())) << strict.status();
  EXPECT_THAT(strict.status().message(), HasSubstr("step_00000020.safetensors' is damaged"));
  EXPECT_THAT(strict.status().message(), HasSubstr("step_00000010.safetensors"));  // what to use instead

  LoadCheckpointOptions options;
  options.fall_back_on_corrupt = true;
  auto fallback = LoadLatestCheckpoint(dir, Params(), options);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(fallback->state.step, 10);
  EXPECT_EQ(fallback->data_key, Key::FromSeed(1));
  ASSERT_EQ(fallback->skipped.size(), 1u);
  EXPECT_THAT(fallback->skipped[0], HasSubstr("step_00000020"));
}

TEST(CheckpointTest, TheOlderCheckpointRecommendedIsOneThatReads) {
  const std::string dir = TestDir("recommend");
  for (int step : {10, 20, 30}) ASSERT_TRUE(SaveCheckpoint(dir, State(step), Key::FromSeed(1), {}).ok());
  WriteFile(dir + "/step_00000030.safetensors", "garbage");
  WriteFile(dir + "/step_00000020.safetensors", "garbage too");
  auto strict = LoadLatestCheckpoint(dir, Params());
  ASSERT_TRUE(absl::IsDataLoss(strict.status())) << strict.status();
  // Not step 20, which is damaged as well; and no setting that nothing can set.
  EXPECT_THAT(strict.status().message(),
              HasSubstr("newest older checkpoint that reads is '" + dir + "/step_00000010.safetensors'"));
  EXPECT_THAT(strict.status().message(), ::testing::Not(HasSubstr("fall_back_on_corrupt")));
  WriteFile(dir + "/step_00000010.safetensors", "and this");
  EXPECT_THAT(LoadLatestCheckpoint(dir, Params()).status().message(),
              HasSubstr("no older checkpoint reads either"));
}

TEST(CheckpointTest, ADanglingSymlinkAsTheNewestFallsBackToTheGoodOlderOne) {
  // It used to be NotFound, which a resuming run takes for "no checkpoint": a restart from step 0.
  const std::string dir = TestDir("dangling");
  ASSERT_TRUE(SaveCheckpoint(dir, State(10), Key::FromSeed(1), {}).ok());
  ASSERT_EQ(::symlink("/nonexistent/step.safetensors", (dir + "/step_00000020.safetensors").c_str()), 0);
  auto loaded = LoadLatestCheckpoint(dir, Params());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state.step, 10);
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_THAT(loaded->skipped[0], HasSubstr("step_00000020"));
  // Only dangling names: as if there were no checkpoint.
  const std::string only = TestDir("only_dangling");
  ASSERT_EQ(::mkdir(only.c_str(), 0755), 0);
  ASSERT_EQ(::symlink("/nonexistent/x", (only + "/step_00000005.safetensors").c_str()), 0);
  EXPECT_TRUE(absl::IsNotFound(LoadLatestCheckpoint(only, Params()).status()));
}

TEST(CheckpointTest, FlippedDataByteFailsTheChecksum) {
  const std::string dir = TestDir("flipped");
  ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {}).ok());
  const std::string path = dir + "/step_00000003.safetensors";
  std::string bytes = ReadFile(path);
  bytes[bytes.size() - 3] ^= 0x10;  // inside the last tensor's data: structurally still valid
  WriteFile(path, bytes);
  auto loaded = LoadLatestCheckpoint(dir, Params());
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("checksum"));
}

TEST(CheckpointTest, ANonFiniteTensorIsRefusedNamingItAndTheFile) {
  // A run never saves a non-finite state, so a checkpoint holding one is damaged; it used to load, and
  // the resumed run was then reported "diverged" with exit status 0.
  const std::string dir = TestDir("non_finite");
  ASSERT_TRUE(SaveCheckpoint(dir, State(10), Key::FromSeed(1), {}).ok());
  for (const char* bad : {"layers/0/mixer/D", "opt/v/layers/0/mixer/A_log"}) {
    TrainState state = State(20);
    const std::string path = absl::StartsWith(bad, "opt/v/") ? std::string(bad).substr(6) : bad;
    ParamTree* tree = absl::StartsWith(bad, "opt/v/") ? &state.v : &state.params;
    std::vector<float> values = tree->Get(path).value().ToVector<float>().value();
    values[values.size() - 1] = std::nanf("");
    *tree = tree->Replace(path, *Tensor::FromHost<float>(tree->Get(path)->shape(), values)).value();
    ASSERT_TRUE(SaveCheckpoint(dir, state, Key::FromSeed(2), {}).ok());
    auto loaded = LoadLatestCheckpoint(dir, Params());
    ASSERT_FALSE(loaded.ok()) << bad;
    EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
    EXPECT_THAT(loaded.status().message(), HasSubstr("step_00000020.safetensors"));
    EXPECT_THAT(loaded.status().message(), HasSubstr(absl::StrCat("'", bad, "'")));
    EXPECT_THAT(loaded.status().message(), HasSubstr("NaN or infinite"));
    EXPECT_THAT(loaded.status().message(), HasSubstr("step_00000010.safetensors"));  // what to use instead
  }
}

TEST(CheckpointTest, AllDamagedWithFallbackIsDataLoss) {
  const std::string dir = TestDir("all_damaged");
  ASSERT_TRUE(SaveCheckpoint(dir, State(1), Key::FromSeed(1), {}).ok());
  WriteFile(dir + "/step_00000001.safetensors", "garbage");
  LoadCheckpointOptions options;
  options.fall_back_on_corrupt = true;
  auto loaded = LoadLatestCheckpoint(dir, Params(), options);
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("every checkpoint"));
}

TEST(CheckpointTest, StructureMismatchNamesPathAndShapes) {
  const std::string dir = TestDir("mismatch");
  ASSERT_TRUE(SaveCheckpoint(dir, State(4), Key::FromSeed(0), {}).ok());

  auto reshaped =
      Params().Replace("layers/0/mixer/D", F32({4}, 0)).value().With("layers/0/mixer/A_log", F32({4, 2}, 0));
  ASSERT_TRUE(reshaped.ok());
  auto bad_shape = LoadLatestCheckpoint(dir, *reshaped);
  ASSERT_TRUE(absl::IsInvalidArgument(bad_shape.status())) << bad_shape.status();
  EXPECT_THAT(bad_shape.status().message(),
              HasSubstr("'layers/0/mixer/A_log' is f32(4, 3), expected f32(4, 2)"));

  // Structure errors never fall back: they mean the wrong model, not a damaged file.
  LoadCheckpointOptions options;
  options.fall_back_on_corrupt = true;
  auto extra = Params().With("layers/2/mixer/dt_bias", F32({3}, 0));
  ASSERT_TRUE(extra.ok());
  auto missing = LoadLatestCheckpoint(dir, *extra, options);
  ASSERT_TRUE(absl::IsInvalidArgument(missing.status())) << missing.status();
  EXPECT_THAT(missing.status().message(), HasSubstr("no tensor 'layers/2/mixer/dt_bias' (expected f32(3))"));

  auto fewer = ParamTree::FromPairs({{"embedding/weight", F32({5, 4}, 0)},
                                     {"layers/0/mixer/A_log", F32({4, 3}, 0)},
                                     {"layers/0/mixer/D", F32({4}, 0)}});
  ASSERT_TRUE(fewer.ok());
  auto unexpected = LoadLatestCheckpoint(dir, *fewer);
  ASSERT_TRUE(absl::IsInvalidArgument(unexpected.status())) << unexpected.status();
  EXPECT_THAT(unexpected.status().message(), HasSubstr("'layers/1/norm/weight' of f64(2)"));
}

TEST(CheckpointTest, UnwritableDirectoryIsAStatus) {
  const std::string base = TestDir("unwritable");
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  WriteFile(base + "/a_file", "x");
  // A directory below a regular file cannot exist, whoever runs the test (root ignores mode bits).
  absl::Status s = SaveCheckpoint(base + "/a_file/ckpt", State(1), Key::FromSeed(0), {});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("a_file"));

  if (::geteuid() != 0) {
    const std::string locked = base + "/locked";
    ASSERT_EQ(::mkdir(locked.c_str(), 0555), 0);
    absl::Status denied = SaveCheckpoint(locked, State(1), Key::FromSeed(0), {});
    EXPECT_TRUE(absl::IsPermissionDenied(denied)) << denied;
    ::chmod(locked.c_str(), 0755);
  }
}

TEST(CheckpointTest, RejectsReservedNames) {
  const std::string dir = TestDir("reserved");
  absl::Status meta = SaveCheckpoint(dir, State(1), Key::FromSeed(0), {{"step", "9"}});
  EXPECT_TRUE(absl::IsInvalidArgument(meta)) << meta;
  EXPECT_THAT(meta.message(), HasSubstr("\"step\""));

  TrainState state = State(1);
  state.params = *state.params.With("opt/m/x", F32({1}, 0));
  absl::Status path = SaveCheckpoint(dir, state, Key::FromSeed(0), {});
  EXPECT_TRUE(absl::IsInvalidArgument(path)) << path;
  EXPECT_THAT(path.message(), HasSubstr("opt/m/x"));

  TrainState mismatched = State(1);
  mismatched.m = Params().Select("layers/**");
  absl::Status moments = SaveCheckpoint(dir, mismatched, Key::FromSeed(0), {});
  EXPECT_TRUE(absl::IsInvalidArgument(moments)) << moments;
  EXPECT_THAT(moments.message(), HasSubstr("first moments"));
}

// Issue 51 item 5: what a resume reads is covered by the digest, or the file is refused. Each case edits a
// saved checkpoint the way a careless hand or a damaged header would, keeping the saved digest.

// Rewrites `path` with `edit` applied to its metadata; the tensors stay as they were, in file order.
void EditMetadata(const std::string& path,
                  const std::function<void(std::map<std::string, std::string>*)>& edit) {
  std::map<std::string, std::string> metadata;
  ParamTree tree = init::ReadSafetensors(path, &metadata).value();
  edit(&metadata);
  ASSERT_TRUE(init::WriteSafetensors(path, tree, metadata).ok());
}

TEST(CheckpointDigestTest, EditedMetadataIsRefused) {
  // The data stream a resume continues, and an entry a resume reports (its thread count).
  for (const auto& [key, value] : std::map<std::string, std::string>{{"data_key", "7,7"}, {"threads", "4"}}) {
    const std::string dir = TestDir(absl::StrCat("edited_", key));
    ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {{"threads", "2"}}).ok());
    EditMetadata(dir + "/step_00000003.safetensors",
                 [&](std::map<std::string, std::string>* m) { (*m)[key] = value; });
    auto loaded = LoadLatestCheckpoint(dir, Params());
    EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << key << ": " << loaded.status();
    EXPECT_THAT(loaded.status().message(), HasSubstr("checksum")) << key;
  }
}

TEST(CheckpointDigestTest, SwappedSameShapeRegionsAreRefused) {
  const std::string dir = TestDir("swapped");
  ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {}).ok());
  const std::string path = dir + "/step_00000003.safetensors";
  std::string bytes = ReadFile(path);
  // The embedding and its first moment are both f32(5, 4) (and differ; D's four values are all the awkward
  // ones, the same in both): swapping their data_offsets in the header keeps
  // the file well formed and its bytes in the same order, but hands the resume each other's values.
  auto offsets_of = [&](const std::string& name) {
    const size_t entry = bytes.find(absl::StrCat("\"", name, "\":"));
    const size_t begin = bytes.find("\"data_offsets\":[", entry) + 16;
    return std::make_pair(begin, bytes.find(']', begin) - begin);
  };
  const auto [a, a_len] = offsets_of("embedding/weight");
  const auto [b, b_len] = offsets_of("opt/m/embedding/weight");
  ASSERT_LT(a, b);
  const std::string a_text = bytes.substr(a, a_len), b_text = bytes.substr(b, b_len);
  bytes.replace(b, b_len, a_text);
  bytes.replace(a, a_len, b_text);
  WriteFile(path, bytes);
  ASSERT_TRUE(init::ReadSafetensors(path).ok()) << "the swap must leave a well-formed file";
  auto loaded = LoadLatestCheckpoint(dir, Params());
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("checksum"));
}

TEST(CheckpointDigestTest, ACheckpointWithoutADigestIsRefused) {
  const std::string dir = TestDir("no_digest");
  ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {}).ok());
  EditMetadata(dir + "/step_00000003.safetensors",
               [](std::map<std::string, std::string>* m) { m->erase(kCheckpointDigestKey); });
  auto loaded = LoadLatestCheckpoint(dir, Params());
  EXPECT_TRUE(absl::IsDataLoss(loaded.status())) << loaded.status();
  EXPECT_THAT(loaded.status().message(), HasSubstr("step_00000003.safetensors"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("no \"digest_fnv1a64\""));
}

// A checkpoint written before the full digest carries the legacy one (tensor bytes in file order); a run
// interrupted across the upgrade resumes from it, and damage to its bytes is still caught.
TEST(CheckpointDigestTest, ALegacyCheckpointLoadsWithItsBytesChecked) {
  const std::string dir = TestDir("legacy");
  ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {}).ok());
  const std::string path = dir + "/step_00000003.safetensors";
  EditMetadata(path, [&](std::map<std::string, std::string>* m) {
    ParamTree tree = init::ReadSafetensors(path).value();
    std::string hashes;
    for (const Tensor& t : tree.Leaves()) {
      const uint64_t h =
          core::Fnv1a64(std::string_view(static_cast<const char*>(t.storage()->data()), t.bytes()));
      for (int b = 0; b < 8; ++b) hashes.push_back(static_cast<char>(h >> (8 * b)));
    }
    m->erase(kCheckpointDigestKey);
    (*m)["content_fnv1a64"] = absl::StrFormat("%016x", core::Fnv1a64(hashes));
  });
  auto loaded = LoadLatestCheckpoint(dir, Params());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->state.step, 3);
  EXPECT_TRUE(loaded->metadata.empty());
  ExpectBitEqual(loaded->state.params, State(3).params);

  std::string bytes = ReadFile(path);
  bytes[bytes.size() - 3] ^= 0x10;
  WriteFile(path, bytes);
  EXPECT_TRUE(absl::IsDataLoss(LoadLatestCheckpoint(dir, Params()).status()));
}

// What tests that plant a state in a checkpoint use: the digest of the edited file, stored under its key.
TEST(CheckpointDigestTest, ARecomputedDigestSignsAnEditedCheckpoint) {
  const std::string dir = TestDir("resigned");
  ASSERT_TRUE(SaveCheckpoint(dir, State(3), Key::FromSeed(1), {{"threads", "2"}}).ok());
  const std::string path = dir + "/step_00000003.safetensors";
  std::map<std::string, std::string> metadata;
  ParamTree tree = init::ReadSafetensors(path, &metadata).value();
  EXPECT_EQ(metadata[kCheckpointDigestKey], CheckpointDigest(tree, metadata));
  metadata["threads"] = "4";
  metadata[kCheckpointDigestKey] = CheckpointDigest(tree, metadata);
  ASSERT_TRUE(init::WriteSafetensors(path, tree, metadata).ok());
  auto loaded = LoadLatestCheckpoint(dir, Params());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata.at("threads"), "4");
}

}  // namespace
}  // namespace mimetic::train
