#include "mimetic/core/param_tree.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Tensor F32(const Shape& shape, std::vector<float> values) {
  return Tensor::FromHost<float>(shape, values).value();
}

// A tensor of `shape` filled with `value`.
Tensor Filled(const Shape& shape, float value) {
  return F32(shape, std::vector<float>(static_cast<size_t>(NumElements(shape)), value));
}

std::vector<float> Values(const Tensor& t) { return t.ToVector<float>().value(); }

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<float> v = Values(t);
  std::vector<uint32_t> bits(v.size());
  if (!v.empty()) std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
  return bits;
}

ParamTree Tree(std::vector<std::pair<std::string, Tensor>> pairs) {
  absl::StatusOr<ParamTree> tree = ParamTree::FromPairs(std::move(pairs));
  EXPECT_TRUE(tree.ok()) << tree.status();
  return tree.ok() ? *tree : ParamTree();
}

// A small model-like tree used by the Select tests.
ParamTree ModelTree() {
  std::vector<std::pair<std::string, Tensor>> pairs;
  for (const char* path :
       {"embedding/weight", "layers/0/mixer/A_log", "layers/0/mixer/D", "layers/0/norm/weight",
        "layers/1/mixer/A_log", "layers/1/x", "layers/10/x", "layers/12/x", "layers/123/x", "head/weight"}) {
    pairs.emplace_back(path, Filled({1}, 0));
  }
  return Tree(std::move(pairs));
}

TEST(ParamTreeTest, DefaultTreeIsEmpty) {
  ParamTree tree;
  EXPECT_TRUE(tree.empty());
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_EQ(tree.NumElements(), 0);
  EXPECT_FALSE(tree.Contains("a"));
  EXPECT_EQ(tree.DebugString(), "");
}

TEST(ParamTreeTest, FromPairsKeepsInsertionOrder) {
  Tensor z = Filled({2}, 1), a = Filled({3}, 2), m = Filled({}, 3);
  ParamTree tree = Tree({{"z", z}, {"a/b", a}, {"m/0/c", m}});
  EXPECT_THAT(tree.Paths(), ElementsAre("z", "a/b", "m/0/c"));
  ASSERT_EQ(tree.size(), 3u);
  EXPECT_EQ(tree.Leaves()[0].id(), z.id());
  EXPECT_EQ(tree.Leaves()[1].id(), a.id());
  EXPECT_EQ(tree.Leaves()[2].id(), m.id());
  EXPECT_TRUE(tree.Contains("a/b"));
  EXPECT_FALSE(tree.Contains("a"));
  EXPECT_EQ(tree.Get("m/0/c").value().id(), m.id());
  EXPECT_EQ(tree.DebugString(), "z: f32(2)@cpu\na/b: f32(3)@cpu\nm/0/c: f32()@cpu\n");
}

TEST(ParamTreeTest, FromPairsRejectsBadPaths) {
  absl::StatusOr<ParamTree> dup = ParamTree::FromPairs({{"a/b", Filled({1}, 0)}, {"a/b", Filled({1}, 1)}});
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dup.status().message(), HasSubstr("duplicate path 'a/b'"));

  absl::StatusOr<ParamTree> empty = ParamTree::FromPairs({{"", Filled({1}, 0)}});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("empty path"));

  for (const char* path : {"a//b", "/a", "a/", "/"}) {
    absl::StatusOr<ParamTree> bad = ParamTree::FromPairs({{path, Filled({1}, 0)}});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_THAT(bad.status().message(), HasSubstr(absl::StrCat("'", path, "' has an empty segment")));
  }
}

TEST(ParamTreeTest, FromPairsRejectsErrorLeavesNamingThePath) {
  absl::StatusOr<ParamTree> bad = ParamTree::FromPairs({{"w", Tensor::Error(absl::OutOfRangeError("boom"))}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(bad.status().message(), HasSubstr("'w'"));
  EXPECT_THAT(bad.status().message(), HasSubstr("boom"));
  EXPECT_FALSE(ParamTree::FromPairs({{"w", Tensor()}}).ok());
}

TEST(ParamTreeTest, GetOfMissingPathNamesPathAndNearestPaths) {
  ParamTree tree = ModelTree();
  absl::StatusOr<Tensor> missing = tree.Get("layers/0/mixer/A_lg");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("'layers/0/mixer/A_lg'"));
  EXPECT_THAT(missing.status().message(), HasSubstr("nearest: layers/0/mixer/A_log"));
  EXPECT_THAT(missing.status().message(), Not(HasSubstr("head/weight")));

  absl::StatusOr<Tensor> none = ParamTree().Get("x");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("'x'"));
}

TEST(ParamTreeTest, WithAddsWithoutMutatingTheOriginal) {
  ParamTree tree = Tree({{"a", Filled({2}, 1)}});
  absl::StatusOr<ParamTree> added = tree.With("b/c", Filled({3}, 2));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_THAT(added->Paths(), ElementsAre("a", "b/c"));
  EXPECT_EQ(Values(added->Get("b/c").value()), std::vector<float>(3, 2));
  // The original tree is a value: unchanged.
  EXPECT_EQ(tree.size(), 1u);
  EXPECT_FALSE(tree.Contains("b/c"));
  EXPECT_THAT(tree.Paths(), ElementsAre("a"));
}

TEST(ParamTreeTest, WithReplacesInPlaceOfOrderWithoutMutatingTheOriginal) {
  ParamTree tree = Tree({{"a", Filled({2}, 1)}, {"b", Filled({2}, 2)}, {"c", Filled({2}, 3)}});
  absl::StatusOr<ParamTree> replaced = tree.With("b", Filled({4}, 9));  // With may change the shape
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_THAT(replaced->Paths(), ElementsAre("a", "b", "c"));
  EXPECT_EQ(Values(replaced->Get("b").value()), std::vector<float>(4, 9));
  EXPECT_EQ(replaced->Leaves()[0].id(), tree.Leaves()[0].id());  // untouched leaves are shared
  EXPECT_EQ(tree.size(), 3u);
  EXPECT_EQ(Values(tree.Get("b").value()), std::vector<float>(2, 2));

  EXPECT_EQ(tree.With("a//b", Filled({1}, 0)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.With("a", Tensor::Error(absl::InternalError("bad"))).status().code(),
            absl::StatusCode::kInternal);
}

TEST(ParamTreeTest, ReplaceEnforcesShapeAndDType) {
  ParamTree tree = Tree({{"layers/0/D", Filled({2}, 1)}});
  absl::StatusOr<ParamTree> ok = tree.Replace("layers/0/D", Filled({2}, 5));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(Values(ok->Get("layers/0/D").value()), std::vector<float>(2, 5));
  EXPECT_EQ(Values(tree.Get("layers/0/D").value()), std::vector<float>(2, 1));

  absl::StatusOr<ParamTree> shape = tree.Replace("layers/0/D", Filled({3}, 5));
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.status().message(), HasSubstr("'layers/0/D'"));
  EXPECT_THAT(shape.status().message(), HasSubstr("expected f32(2)@cpu, found f32(3)@cpu"));

  absl::StatusOr<ParamTree> dtype = tree.Replace("layers/0/D", Tensor::FromHost<double>({2}, {1, 2}).value());
  EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dtype.status().message(), HasSubstr("expected f32(2)@cpu, found f64(2)@cpu"));

  absl::StatusOr<ParamTree> missing = tree.Replace("layers/1/D", Filled({2}, 5));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("'layers/1/D'"));
}

TEST(ParamTreeTest, MapAndMapWithPath) {
  ParamTree tree = Tree({{"a", F32({2}, {1, 2})}, {"b/c", F32({}, {3})}});
  ParamTree doubled = tree.Map([](const Tensor& t) {
    std::vector<float> v = Values(t);
    for (float& x : v) x *= 2;
    return F32(t.shape(), v);
  });
  EXPECT_THAT(doubled.Paths(), ElementsAre("a", "b/c"));
  EXPECT_THAT(Values(doubled.Get("a").value()), ElementsAre(2, 4));
  EXPECT_THAT(Values(doubled.Get("b/c").value()), ElementsAre(6));
  EXPECT_THAT(Values(tree.Get("a").value()), ElementsAre(1, 2));  // original unchanged

  std::vector<std::string> seen;
  ParamTree lengths = tree.MapWithPath([&seen](const std::string& path, const Tensor&) {
    seen.push_back(path);
    return F32({}, {static_cast<float>(path.size())});
  });
  EXPECT_THAT(seen, ElementsAre("a", "b/c"));
  EXPECT_THAT(Values(lengths.Get("b/c").value()), ElementsAre(3));
  EXPECT_EQ(tree.Get("b/c").value().shape(), Shape{});
}

TEST(ParamTreeTest, SelectWithGlobs) {
  ParamTree tree = ModelTree();
  EXPECT_THAT(tree.Select("layers/*/mixer/A_log").Paths(),
              ElementsAre("layers/0/mixer/A_log", "layers/1/mixer/A_log"));
  EXPECT_THAT(
      tree.Select("layers/**").Paths(),
      ElementsAre("layers/0/mixer/A_log", "layers/0/mixer/D", "layers/0/norm/weight", "layers/1/mixer/A_log",
                  "layers/1/x", "layers/10/x", "layers/12/x", "layers/123/x"));
  EXPECT_THAT(tree.Select("**/weight").Paths(),
              ElementsAre("embedding/weight", "layers/0/norm/weight", "head/weight"));
  EXPECT_THAT(tree.Select("layers/1?/x").Paths(), ElementsAre("layers/10/x", "layers/12/x"));
  EXPECT_THAT(tree.Select("layers/0/mixer/**").Paths(),
              ElementsAre("layers/0/mixer/A_log", "layers/0/mixer/D"));
  EXPECT_THAT(tree.Select("**").Paths(), tree.Paths());
  EXPECT_THAT(tree.Select("layers/*").Paths(), IsEmpty());
  EXPECT_THAT(tree.Select("nothing/**").Paths(), IsEmpty());
  EXPECT_THAT(tree.Select("layers/*/mixer").Paths(), IsEmpty());

  // The selection is a tree of its own: indexed, sharing the original leaves.
  ParamTree selected = tree.Select("layers/*/mixer/A_log");
  EXPECT_EQ(selected.Get("layers/1/mixer/A_log").value().id(), tree.Get("layers/1/mixer/A_log").value().id());
  EXPECT_FALSE(selected.Contains("layers/0/mixer/D"));
  EXPECT_EQ(tree.size(), 10u);
}

TEST(ParamTreeTest, GlobMatchEdgeCases) {
  EXPECT_TRUE(ParamTree::GlobMatch("a/b", "a/b"));
  EXPECT_FALSE(ParamTree::GlobMatch("a/b", "a/c"));
  EXPECT_FALSE(ParamTree::GlobMatch("a/b", "a/b/c"));  // no prefix matching
  EXPECT_FALSE(ParamTree::GlobMatch("a/b/c", "a/b"));
  // '*' stays within one segment.
  EXPECT_TRUE(ParamTree::GlobMatch("*", "a"));
  EXPECT_FALSE(ParamTree::GlobMatch("*", "a/b"));
  EXPECT_FALSE(ParamTree::GlobMatch("a*", "ab/c"));
  EXPECT_FALSE(ParamTree::GlobMatch("a/*", "a"));
  EXPECT_TRUE(ParamTree::GlobMatch("a*", "a"));
  EXPECT_TRUE(ParamTree::GlobMatch("a*", "abc"));
  EXPECT_TRUE(ParamTree::GlobMatch("*c", "abc"));
  EXPECT_TRUE(ParamTree::GlobMatch("a*c", "ac"));
  EXPECT_TRUE(ParamTree::GlobMatch("a*c", "abbbc"));
  EXPECT_FALSE(ParamTree::GlobMatch("a*c", "ab"));
  EXPECT_TRUE(ParamTree::GlobMatch("*_log", "A_log"));
  EXPECT_TRUE(ParamTree::GlobMatch("*a*a*b", "aaaaaaaaab"));
  EXPECT_FALSE(ParamTree::GlobMatch("*a*a*b", "aaaaaaaaaa"));
  // '?' is exactly one character.
  EXPECT_TRUE(ParamTree::GlobMatch("?", "a"));
  EXPECT_FALSE(ParamTree::GlobMatch("?", "ab"));
  EXPECT_FALSE(ParamTree::GlobMatch("a?", "a"));
  EXPECT_FALSE(ParamTree::GlobMatch("?", "a/b"));
  // '**' is any number of whole segments, zero included.
  EXPECT_TRUE(ParamTree::GlobMatch("**", "a"));
  EXPECT_TRUE(ParamTree::GlobMatch("**", "a/b/c"));
  EXPECT_TRUE(ParamTree::GlobMatch("**/weight", "weight"));
  EXPECT_TRUE(ParamTree::GlobMatch("**/weight", "a/b/weight"));
  EXPECT_FALSE(ParamTree::GlobMatch("**/weight", "a/weight/b"));
  EXPECT_FALSE(ParamTree::GlobMatch("**/weight", "a/weights"));
  EXPECT_TRUE(ParamTree::GlobMatch("a/**/b", "a/b"));
  EXPECT_TRUE(ParamTree::GlobMatch("a/**/b", "a/x/b"));
  EXPECT_TRUE(ParamTree::GlobMatch("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(ParamTree::GlobMatch("a/**/b", "a/x/c"));
  EXPECT_FALSE(ParamTree::GlobMatch("a/**/b", "b"));
  EXPECT_TRUE(ParamTree::GlobMatch("**/mixer/**", "layers/3/mixer/conv/weight"));
  EXPECT_FALSE(ParamTree::GlobMatch("**/mixer/**", "layers/3/mlp/weight"));
  EXPECT_TRUE(ParamTree::GlobMatch("layers/*/mixer/*_log", "layers/3/mixer/A_log"));
  EXPECT_FALSE(ParamTree::GlobMatch("layers/*/mixer/A_log", "layers/3/4/mixer/A_log"));
}

TEST(ParamTreeTest, SameStructure) {
  ParamTree a = Tree({{"w", Filled({2, 3}, 1)}, {"b", Filled({3}, 0)}});
  ParamTree same = Tree({{"w", Filled({2, 3}, 7)}, {"b", Filled({3}, 7)}});
  EXPECT_TRUE(a.SameStructure(same));  // values do not matter
  EXPECT_TRUE(a.CheckSameStructure(same).ok());
  EXPECT_TRUE(a.SameStructure(a));

  ParamTree renamed = Tree({{"w", Filled({2, 3}, 1)}, {"bias", Filled({3}, 0)}});
  absl::Status path = a.CheckSameStructure(renamed);
  EXPECT_FALSE(a.SameStructure(renamed));
  EXPECT_EQ(path.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(path.message(), HasSubstr("'b' vs 'bias'"));

  ParamTree reordered = Tree({{"b", Filled({3}, 0)}, {"w", Filled({2, 3}, 1)}});
  EXPECT_FALSE(a.SameStructure(reordered));

  ParamTree reshaped = Tree({{"w", Filled({3, 2}, 1)}, {"b", Filled({3}, 0)}});
  absl::Status shape = a.CheckSameStructure(reshaped);
  EXPECT_FALSE(a.SameStructure(reshaped));
  EXPECT_EQ(shape.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.message(), HasSubstr("'w'"));
  EXPECT_THAT(shape.message(), HasSubstr("f32(2, 3)@cpu vs f32(3, 2)@cpu"));

  ParamTree retyped = Tree({{"w", Filled({2, 3}, 1)}, {"b", Tensor::Zeros({3}, DType::kF64).value()}});
  EXPECT_THAT(a.CheckSameStructure(retyped).message(), HasSubstr("f32(3)@cpu vs f64(3)@cpu"));

  ParamTree shorter = Tree({{"w", Filled({2, 3}, 1)}});
  EXPECT_FALSE(a.SameStructure(shorter));
  EXPECT_THAT(a.CheckSameStructure(shorter).message(), HasSubstr("2 leaves vs 1"));
}

TEST(ParamTreeTest, WithLeaves) {
  ParamTree tree = Tree({{"w", Filled({2}, 1)}, {"b", Filled({}, 2)}});
  absl::StatusOr<ParamTree> next = tree.WithLeaves({Filled({2}, 3), Filled({}, 4)});
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_THAT(next->Paths(), ElementsAre("w", "b"));
  EXPECT_THAT(Values(next->Get("w").value()), ElementsAre(3, 3));
  EXPECT_THAT(Values(next->Get("b").value()), ElementsAre(4));
  EXPECT_THAT(Values(tree.Get("w").value()), ElementsAre(1, 1));  // original unchanged

  absl::StatusOr<ParamTree> count = tree.WithLeaves({Filled({2}, 3)});
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.status().message(), HasSubstr("1 leaves given, expected 2"));

  absl::StatusOr<ParamTree> shape = tree.WithLeaves({Filled({2}, 3), Filled({1}, 4)});
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shape.status().message(), HasSubstr("'b'"));
  EXPECT_THAT(shape.status().message(), HasSubstr("expected f32()@cpu, found f32(1)@cpu"));

  absl::StatusOr<ParamTree> error = tree.WithLeaves({Filled({2}, 3), Tensor::Error(absl::AbortedError("x"))});
  EXPECT_EQ(error.status().code(), absl::StatusCode::kAborted);
}

TEST(ParamTreeTest, ZipWith) {
  ParamTree a = Tree({{"w", F32({2}, {1, 2})}, {"b", F32({}, {3})}});
  ParamTree b = Tree({{"w", F32({2}, {10, 20})}, {"b", F32({}, {30})}});
  auto add = [](const Tensor& x, const Tensor& y) {
    std::vector<float> u = Values(x), v = Values(y);
    for (size_t i = 0; i < u.size(); ++i) u[i] += v[i];
    return F32(x.shape(), u);
  };
  absl::StatusOr<ParamTree> sum = a.ZipWith(b, add);
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_THAT(sum->Paths(), ElementsAre("w", "b"));
  EXPECT_THAT(Values(sum->Get("w").value()), ElementsAre(11, 22));
  EXPECT_THAT(Values(sum->Get("b").value()), ElementsAre(33));

  ParamTree other = Tree({{"w", F32({2}, {1, 2})}, {"c", F32({}, {3})}});
  EXPECT_EQ(a.ZipWith(other, add).status().code(), absl::StatusCode::kInvalidArgument);

  absl::StatusOr<ParamTree> failed =
      a.ZipWith(b, [](const Tensor&, const Tensor&) { return Tensor::Error(absl::DataLossError("zip")); });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(failed.status().message(), "zip");
}

TEST(ParamTreeTest, FlattenUnflattenRoundTripIsBitExact) {
  const float nan_payload = [] {
    uint32_t bits = 0x7fc01234u;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }();
  ParamTree tree = Tree({
      {"layers/0/w", F32({2, 3}, {1, -0.0f, std::numeric_limits<float>::denorm_min(), nan_payload,
                                  std::numeric_limits<float>::infinity(), -1e38f})},
      {"layers/0/b", F32({}, {0.1f})},
      {"layers/0/empty", Filled({0, 4}, 0)},
      {"head", F32({4}, {std::nextafter(1.0f, 2.0f), -3, 1e-30f, 5})},
  });
  EXPECT_EQ(tree.NumElements(), 11);

  absl::StatusOr<Tensor> flat = tree.Flatten();
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(flat->meta().DebugString(), "f32(11)@cpu");
  std::vector<uint32_t> expected;
  for (const Tensor& leaf : tree.Leaves()) {
    std::vector<uint32_t> b = Bits(leaf);
    expected.insert(expected.end(), b.begin(), b.end());
  }
  EXPECT_EQ(Bits(*flat), expected);  // path order

  absl::StatusOr<ParamTree> back = tree.Unflatten(*flat);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->SameStructure(tree));
  EXPECT_EQ(back->NumElements(), 11);
  for (size_t i = 0; i < tree.size(); ++i) {
    EXPECT_EQ(Bits(back->Leaves()[i]), Bits(tree.Leaves()[i])) << tree.Paths()[i];
    // Fresh storage: the leaves alias neither the flat buffer nor the original leaves.
    EXPECT_NE(back->Leaves()[i].storage().get(), flat->storage().get());
    EXPECT_NE(back->Leaves()[i].id(), tree.Leaves()[i].id());
  }

  // An empty tree flattens to an empty vector and back.
  absl::StatusOr<Tensor> none = ParamTree().Flatten();
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->shape(), Shape{0});
  EXPECT_TRUE(ParamTree().Unflatten(*none).ok());
}

TEST(ParamTreeTest, FlattenOfNonF32LeafNamesTheLeaf) {
  ParamTree tree =
      Tree({{"layers/0/w", Filled({2}, 1)}, {"layers/0/steps", Tensor::Zeros({3}, DType::kI32).value()}});
  absl::StatusOr<Tensor> flat = tree.Flatten();
  EXPECT_EQ(flat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flat.status().message(), HasSubstr("'layers/0/steps'"));
  EXPECT_THAT(flat.status().message(), HasSubstr("i32(3)@cpu"));
}

TEST(ParamTreeTest, FlattenOfErrorLeafReturnsItsStatusNamingTheLeaf) {
  // Map with an op that fails leaves error tensors in the tree (errors are values).
  ParamTree tree = Tree({{"a", Filled({2}, 1)}, {"b", Filled({3}, 1)}});
  ParamTree failed = tree.MapWithPath([](const std::string& path, const Tensor& t) {
    return path == "b" ? Tensor::Error(absl::InvalidArgumentError("op failed")) : t;
  });
  absl::StatusOr<Tensor> flat = failed.Flatten();
  EXPECT_EQ(flat.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flat.status().message(), HasSubstr("'b'"));
  EXPECT_THAT(flat.status().message(), HasSubstr("op failed"));
}

TEST(ParamTreeTest, UnflattenOfWrongTensorNamesExpectedSize) {
  ParamTree tree = Tree({{"w", Filled({2, 3}, 1)}, {"b", Filled({3}, 0)}});
  absl::StatusOr<ParamTree> size = tree.Unflatten(Filled({8}, 0));
  EXPECT_EQ(size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(size.status().message(), HasSubstr("got f32(8)@cpu"));
  EXPECT_THAT(size.status().message(), HasSubstr("expected f32(9)@cpu"));

  EXPECT_EQ(tree.Unflatten(Filled({3, 3}, 0)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Unflatten(Tensor::Zeros({9}, DType::kF64).value()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree.Unflatten(Tensor::Error(absl::CancelledError("c"))).status().code(),
            absl::StatusCode::kCancelled);
}

TEST(ParamTreeTest, UnflattenIntoNonF32TreeNamesTheLeaf) {
  // The flat buffer fits the element count, but an i32 leaf cannot be filled from f32 values.
  ParamTree tree = Tree({{"w", Filled({2}, 1)}, {"steps", Tensor::Zeros({1}, DType::kI32).value()}});
  absl::StatusOr<ParamTree> back = tree.Unflatten(Filled({3}, 0));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("'steps'"));
  EXPECT_THAT(back.status().message(), HasSubstr("i32(1)@cpu"));
}

TEST(ParamTreeTest, FindNonFiniteNamesTheFirstLeafAndCountsItsBadValues) {
  const float inf = std::numeric_limits<float>::infinity();
  ParamTree tree =
      ParamTree::FromPairs({{"a", F32({2}, {1, 2})},
                            {"b", Tensor::FromHost<double>({3}, {1, std::nan(""), -1e308}).value()},
                            {"c", F32({3}, {inf, -inf, std::nanf("")})}})
          .value();
  absl::StatusOr<std::optional<NonFiniteLeaf>> bad = FindNonFinite(tree);
  ASSERT_TRUE(bad.ok()) << bad.status();
  ASSERT_TRUE(bad->has_value());
  EXPECT_EQ((*bad)->path, "b");
  EXPECT_EQ((*bad)->count, 1);
  EXPECT_EQ((*bad)->numel, 3);
  EXPECT_FALSE(FindNonFinite(tree.Select("a")).value().has_value());
  EXPECT_EQ(FindNonFinite(tree.Select("c")).value()->count, 3);
}

}  // namespace
}  // namespace mimetic::core
