#include "mimetic/init/checkpoint_names.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/init/safetensors.h"

namespace mimetic::init {
namespace {

using core::DType;
using core::ParamTree;
using core::Shape;
using core::Tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor Iota(const Shape& shape, float start, DType dtype = DType::kF32) {
  std::vector<float> v(core::NumElements(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  if (dtype == DType::kF64)
    return Tensor::FromHost<double>(shape, std::vector<double>(v.begin(), v.end())).value();
  if (dtype == DType::kI32) {
    return Tensor::FromHost<int32_t>(shape, std::vector<int32_t>(v.begin(), v.end())).value();
  }
  return Tensor::FromHost<float>(shape, v).value();
}

// A one-layer Mamba 1 model's structure (D 4, E 8, N 2, K 4, R 1, V 10), tied head.
ParamTree Like() {
  return ParamTree::FromPairs({
                                  {"embedding/weight", Tensor::Zeros({10, 4}).value()},
                                  {"layers/0/norm/weight", Tensor::Zeros({4}).value()},
                                  {"layers/0/mixer/in_proj/weight", Tensor::Zeros({16, 4}).value()},
                                  {"layers/0/mixer/conv1d/weight", Tensor::Zeros({8, 1, 4}).value()},
                                  {"layers/0/mixer/A_log", Tensor::Zeros({8, 2}).value()},
                                  {"norm_f/weight", Tensor::Zeros({4}).value()},
                              })
      .value();
}

// What a mamba_ssm / HF checkpoint of Like() holds, in its own order and spelling.
std::vector<std::pair<std::string, Tensor>> CheckpointPairs(const std::string& embedding_name) {
  return {
      {"lm_head.weight", Iota({10, 4}, 0)},
      {"backbone.norm_f.weight", Iota({4}, 100)},
      {"backbone.layers.0.mixer.A_log", Iota({8, 2}, 200, DType::kF64)},  // f64 in the file
      {"backbone.layers.0.mixer.conv1d.weight", Iota({8, 1, 4}, 300)},
      {"backbone.layers.0.mixer.in_proj.weight", Iota({16, 4}, 400)},
      {"backbone.layers.0.norm.weight", Iota({4}, 500)},
      {embedding_name, Iota({10, 4}, 0)},
      {"backbone.layers.0.mixer.D", Iota({8}, 600)},  // the model has no D: ignored
  };
}

ParamTree Checkpoint(std::vector<std::pair<std::string, Tensor>> pairs) {
  return ParamTree::FromPairs(std::move(pairs)).value();
}

std::vector<std::pair<std::string, Tensor>> Without(std::vector<std::pair<std::string, Tensor>> pairs,
                                                    const std::string& name) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& p : pairs) {
    if (p.first != name) out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> Replaced(std::vector<std::pair<std::string, Tensor>> pairs,
                                                     const std::string& name, Tensor value) {
  for (auto& p : pairs) {
    if (p.first == name) p.second = value;
  }
  return pairs;
}

TEST(CheckpointNamesTest, ToMambaSsmName) {
  EXPECT_EQ(ToMambaSsmName("layers/3/mixer/A_log"), "backbone.layers.3.mixer.A_log");
  EXPECT_EQ(ToMambaSsmName("embedding/weight"), "backbone.embedding.weight");
  EXPECT_EQ(ToMambaSsmName("norm_f/weight"), "backbone.norm_f.weight");
  EXPECT_EQ(ToMambaSsmName("lm_head/weight"), "lm_head.weight");
  EXPECT_EQ(ToMambaSsmName("layers/0/mixer/conv1d/bias"), "backbone.layers.0.mixer.conv1d.bias");
  EXPECT_EQ(ToHfTransformersName("embedding/weight"), "backbone.embeddings.weight");
  EXPECT_EQ(ToHfTransformersName("layers/1/norm/weight"), "backbone.layers.1.norm.weight");
  EXPECT_EQ(ToHfTransformersName("lm_head/weight"), "lm_head.weight");
}

TEST(CheckpointNamesTest, FromCheckpointNameAcceptsBothSpellings) {
  EXPECT_EQ(FromCheckpointName("backbone.embedding.weight").value(), "embedding/weight");
  EXPECT_EQ(FromCheckpointName("backbone.embeddings.weight").value(), "embedding/weight");
  EXPECT_EQ(FromCheckpointName("embeddings.weight").value(), "embedding/weight");  // HF MambaModel
  EXPECT_EQ(FromCheckpointName("backbone.layers.12.mixer.dt_proj.bias").value(),
            "layers/12/mixer/dt_proj/bias");
  EXPECT_EQ(FromCheckpointName("backbone.norm_f.weight").value(), "norm_f/weight");
  EXPECT_EQ(FromCheckpointName("lm_head.weight").value(), "lm_head/weight");
  EXPECT_EQ(FromCheckpointName("layers/2/mixer/D").value(), "layers/2/mixer/D");  // already mimetic
}

TEST(CheckpointNamesTest, FromCheckpointNameRejectsOthers) {
  for (const std::string name :
       {"", "backbone.", "backbone.lm_head.weight", "backbone.layers.x.norm.weight", "backbone.layers.3",
        "backbone.encoder.weight", "backbone..weight", "model.layers.0.mixer.A_log", "embedding"}) {
    absl::StatusOr<std::string> path = FromCheckpointName(name);
    EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(path.status().message(), HasSubstr(absl::StrCat("'", name, "'")));
  }
}

TEST(CheckpointNamesTest, NamesRoundTrip) {
  for (const std::string path :
       {"embedding/weight", "layers/0/norm/weight", "layers/7/mixer/x_proj/weight",
        "layers/1/mixer/norm/weight", "layers/2/mlp/fc1/weight", "norm_f/bias", "lm_head/weight"}) {
    EXPECT_EQ(FromCheckpointName(ToMambaSsmName(path)).value(), path);
    EXPECT_EQ(FromCheckpointName(ToHfTransformersName(path)).value(), path);
  }
}

TEST(CheckpointNamesTest, LoadsMambaSsmAndHfCheckpoints) {
  for (const std::string emb : {"backbone.embedding.weight", "backbone.embeddings.weight"}) {
    SCOPED_TRACE(emb);
    std::vector<std::string> unused;
    absl::StatusOr<ParamTree> tree = LoadCheckpointInto(Like(), Checkpoint(CheckpointPairs(emb)), &unused);
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_EQ(tree->Paths(), Like().Paths());  // like's order, not the file's
    EXPECT_TRUE(tree->SameStructure(Like()));
    EXPECT_EQ(tree->Get("layers/0/mixer/A_log")->dtype(), DType::kF32);  // cast from f64
    EXPECT_EQ(tree->Get("layers/0/mixer/A_log")->ToVector<float>().value()[3], 203.0f);
    EXPECT_EQ(tree->Get("layers/0/mixer/conv1d/weight")->ToVector<float>().value()[5], 305.0f);
    EXPECT_EQ(tree->Get("embedding/weight")->ToVector<float>().value()[39], 39.0f);
    EXPECT_THAT(unused, ElementsAre("backbone.layers.0.mixer.D"));
  }
}

TEST(CheckpointNamesTest, MissingTensorIsNotFound) {
  absl::Status status =
      LoadCheckpointInto(Like(), Checkpoint(Without(CheckpointPairs("backbone.embedding.weight"),
                                                    "backbone.layers.0.mixer.A_log")))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("'layers/0/mixer/A_log'"));
  EXPECT_THAT(status.message(), HasSubstr("'backbone.layers.0.mixer.A_log'"));

  status = LoadCheckpointInto(Like(), Checkpoint(Without(CheckpointPairs("backbone.embedding.weight"),
                                                         "backbone.embedding.weight")))
               .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("'backbone.embedding.weight' or 'backbone.embeddings.weight'"));
}

TEST(CheckpointNamesTest, MisShapedTensorIsInvalidArgument) {
  absl::Status status =
      LoadCheckpointInto(Like(), Checkpoint(Replaced(CheckpointPairs("backbone.embedding.weight"),
                                                     "backbone.layers.0.mixer.A_log", Iota({8, 3}, 0))))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("'layers/0/mixer/A_log'"));
  EXPECT_THAT(status.message(), HasSubstr("expected shape (8, 2), found (8, 3)"));

  // A conv1d weight stored as (C, K) instead of mamba_ssm's (C, 1, K).
  status = LoadCheckpointInto(Like(),
                              Checkpoint(Replaced(CheckpointPairs("backbone.embedding.weight"),
                                                  "backbone.layers.0.mixer.conv1d.weight", Iota({8, 4}, 0))))
               .status();
  EXPECT_THAT(status.message(), HasSubstr("expected shape (8, 1, 4), found (8, 4)"));
}

TEST(CheckpointNamesTest, WrongDtypeKindIsInvalidArgument) {
  absl::Status status =
      LoadCheckpointInto(Like(), Checkpoint(Replaced(CheckpointPairs("backbone.embedding.weight"),
                                                     "backbone.norm_f.weight", Iota({4}, 0, DType::kI32))))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("'norm_f/weight'"));
  EXPECT_THAT(status.message(), HasSubstr("expected dtype f32"));
}

TEST(CheckpointNamesTest, TiedHeadMustEqualTheEmbedding) {
  absl::Status status =
      LoadCheckpointInto(Like(), Checkpoint(Replaced(CheckpointPairs("backbone.embedding.weight"),
                                                     "lm_head.weight", Iota({10, 4}, 1))))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("'lm_head.weight' differs from 'backbone.embedding.weight'"));
  // Without lm_head.weight at all (HF drops tied tensors) the load succeeds.
  EXPECT_TRUE(LoadCheckpointInto(
                  Like(), Checkpoint(Without(CheckpointPairs("backbone.embedding.weight"), "lm_head.weight")))
                  .ok());
}

TEST(CheckpointNamesTest, UntiedModelNeedsLmHead) {
  ParamTree untied = Like().With("lm_head/weight", Tensor::Zeros({10, 4}).value()).value();
  absl::StatusOr<ParamTree> tree = LoadCheckpointInto(
      untied,
      Checkpoint(Replaced(CheckpointPairs("backbone.embedding.weight"), "lm_head.weight", Iota({10, 4}, 1))));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->Get("lm_head/weight")->ToVector<float>().value()[0], 1.0f);

  absl::Status status =
      LoadCheckpointInto(untied,
                         Checkpoint(Without(CheckpointPairs("backbone.embedding.weight"), "lm_head.weight")))
          .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("'lm_head/weight' (looked for 'lm_head.weight')"));
  EXPECT_THAT(status.message(), HasSubstr("tie_embeddings: true"));
}

TEST(CheckpointNamesTest, BothSpellingsAtOnceIsAmbiguous) {
  auto pairs = CheckpointPairs("backbone.embedding.weight");
  pairs.emplace_back("backbone.embeddings.weight", Iota({10, 4}, 0));
  absl::Status status = LoadCheckpointInto(Like(), Checkpoint(pairs)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("both 'backbone.embedding.weight' and 'backbone.embeddings.weight'"));
}

TEST(CheckpointNamesTest, PartialTreeLoadsOnlyItsLeaves) {
  ParamTree layer = Like().Select("layers/0/**");
  absl::StatusOr<ParamTree> tree =
      LoadCheckpointInto(layer, Checkpoint(CheckpointPairs("backbone.embedding.weight")));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->size(), 4u);
}

TEST(CheckpointNamesTest, WriteAndLoadMambaCheckpoint) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/mamba.safetensors");
  const ParamTree params =
      LoadCheckpointInto(Like(), Checkpoint(CheckpointPairs("backbone.embedding.weight"))).value();
  ASSERT_TRUE(WriteMambaCheckpoint(path, params, {{"format", "pt"}}).ok());
  // The file holds mamba_ssm's names, lm_head.weight included (a tied copy).
  ParamTree raw = ReadSafetensors(path).value();
  EXPECT_THAT(raw.Paths(),
              ElementsAre("backbone.embedding.weight", "backbone.layers.0.norm.weight",
                          "backbone.layers.0.mixer.in_proj.weight", "backbone.layers.0.mixer.conv1d.weight",
                          "backbone.layers.0.mixer.A_log", "backbone.norm_f.weight", "lm_head.weight"));
  absl::StatusOr<ParamTree> back = LoadMambaCheckpoint(path, Like());
  ASSERT_TRUE(back.ok()) << back.status();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(back->Leaves()[i].ToVector<float>().value(), params.Leaves()[i].ToVector<float>().value());
  }
  absl::Status status =
      LoadMambaCheckpoint(path, Like().With("layers/0/mixer/D", Tensor::Zeros({8}).value()).value()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("'layers/0/mixer/D'"));
}

}  // namespace
}  // namespace mimetic::init
