#include "examples/from_checkpoint.h"

#include <cmath>
#include <sstream>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace examples {
namespace {

using ::testing::HasSubstr;

std::vector<float> Leaf(const mimetic::init::Model& m, const std::string& path) {
  return m.params.Get(path).value().ToVector<float>().value();
}

// One demo file for the whole test: a teacher trained a few steps, in mamba_ssm names.
const std::string& DemoFile() {
  static const std::string* path = [] {
    auto* p = new std::string(::testing::TempDir() + "/teacher.safetensors");
    std::ostringstream progress;
    const absl::Status s = WriteDemoCheckpoint(*p, /*steps=*/20, /*seed=*/3, progress);
    EXPECT_TRUE(s.ok()) << s;
    return p;
  }();
  return *path;
}

FromCheckpointOptions Demo() {
  FromCheckpointOptions o;
  o.checkpoint = DemoFile();
  o.model = kTeacherModel;
  o.source_layer = 0;
  o.target_layer = 1;
  return o;
}

TEST(FromCheckpointTest, TheTargetLayerIsTheCheckpointsLayerAndTheRestIsTheFreshInit) {
  std::ostringstream out;
  absl::StatusOr<FromCheckpointResult> r = FromCheckpoint(Demo(), out);
  ASSERT_TRUE(r.ok()) << r.status();
  // Every tensor of the file has its place (lm_head.weight, which mamba_ssm lists for a tied
  // model, is checked against the embedding).
  EXPECT_TRUE(r->unused.empty());
  int transplanted = 0;
  for (const std::string& path : r->fresh.params.Paths()) {
    if (absl::StartsWith(path, "layers/1/")) {
      EXPECT_EQ(Leaf(r->transplanted, path), Leaf(r->teacher, "layers/0/" + path.substr(9))) << path;
      ++transplanted;
    } else {
      EXPECT_EQ(Leaf(r->transplanted, path), Leaf(r->fresh, path)) << path;
    }
  }
  EXPECT_GT(transplanted, 5);
  // The teacher was trained: it is not its own init (its mimetic dt_bias moved).
  EXPECT_NE(Leaf(r->teacher, "layers/0/mixer/dt_bias"), Leaf(r->fresh, "layers/0/mixer/dt_bias"));
  // Evaluated: three rows with finite losses and accuracies in [0, 1], printed as a table.
  ASSERT_EQ(r->rows.size(), 3u);
  for (const Evaluated& e : r->rows) {
    EXPECT_TRUE(std::isfinite(e.loss)) << e.name;
    EXPECT_GE(e.eval.token_accuracy, 0.0);
    EXPECT_LE(e.eval.token_accuracy, 1.0);
    EXPECT_EQ(e.eval.length, 8);
  }
  EXPECT_LT(r->rows[0].loss, r->rows[1].loss);  // the trained teacher beats a fresh model
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("| model | loss | exact@8 | token@8 |"));
  for (const char* row : {"| checkpoint | ", "| fresh | ", "| transplanted | "})
    EXPECT_THAT(text, HasSubstr(row));
  EXPECT_THAT(text, HasSubstr("layer 1 replaced by the checkpoint's layer 0"));
}

TEST(FromCheckpointTest, BadInputNamesWhatWasWrong) {
  std::ostringstream out;
  FromCheckpointOptions o = Demo();
  o.source_layer = 5;
  EXPECT_THAT(FromCheckpoint(o, out).status().message(),
              HasSubstr("layer index 5 is outside the model's 2 layers"));
  o = Demo();
  o.checkpoint = ::testing::TempDir() + "/missing.safetensors";
  EXPECT_THAT(FromCheckpoint(o, out).status().message(), HasSubstr("missing.safetensors"));
  o = Demo();
  o.model = "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 16 headdim: 16 } }";
  EXPECT_THAT(FromCheckpoint(o, out).status().message(), HasSubstr("shape"));
  o = Demo();
  o.pretrained = "state-spaces/mamba-130m";
  EXPECT_THAT(FromCheckpoint(o, out).status().message(), HasSubstr("exactly one of"));
}

}  // namespace
}  // namespace examples
