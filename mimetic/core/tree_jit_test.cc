#include "mimetic/core/tree_jit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/builtin_ops.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

Tensor Vec(std::vector<float> v) {
  return Tensor::FromHost<float>({static_cast<int64_t>(v.size())}, v).value();
}

ParamTree Tree(std::vector<std::pair<std::string, Tensor>> pairs) {
  return ParamTree::FromPairs(pairs).value();
}

// out[0] = {"sum": a + b}, out[1] = the second tree unchanged.
absl::StatusOr<std::vector<ParamTree>> AddLeaves(absl::Span<const ParamTree> in) {
  ASSIGN_OR_RETURN(Tensor a, in[0].Get("a"));
  ASSIGN_OR_RETURN(Tensor b, in[0].Get("b"));
  ASSIGN_OR_RETURN(ParamTree sum, ParamTree::FromPairs({{"sum", Accumulate(a, b)}}));
  return std::vector<ParamTree>{sum, in[1]};
}

TEST(TreeJitTest, TracesOnceAndReplaysByPath) {
  TreeJit jit(AddLeaves, "add");
  ParamTree extra = Tree({{"x/y", Vec({7})}});
  absl::StatusOr<std::vector<ParamTree>> first = jit({Tree({{"a", Vec({1, 2})}, {"b", Vec({3, 4})}}), extra});
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<std::vector<ParamTree>> second =
      jit({Tree({{"a", Vec({5, 6})}, {"b", Vec({7, 8})}}), extra});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(jit.jit().num_traces(), 1);
  ASSERT_EQ(second->size(), 2u);
  EXPECT_EQ((*second)[0].Paths(), std::vector<std::string>{"sum"});
  EXPECT_EQ((*second)[0].Get("sum")->ToVector<float>().value(), (std::vector<float>{12, 14}));
  EXPECT_EQ((*second)[1].Get("x/y")->ToVector<float>().value(), std::vector<float>{7});
}

TEST(TreeJitTest, ErrorsAreStatuses) {
  TreeJit jit(AddLeaves, "add");
  absl::StatusOr<std::vector<ParamTree>> missing = jit({Tree({{"a", Vec({1})}}), Tree({{"x", Vec({1})}})});
  EXPECT_THAT(missing.status().message(), HasSubstr("'b'"));
  ASSERT_TRUE(jit({Tree({{"a", Vec({1})}, {"b", Vec({2})}}), Tree({{"x", Vec({1})}})}).ok());
  // Same leaf shapes, other paths: Jit would replay the plan traced for "a"/"b".
  absl::StatusOr<std::vector<ParamTree>> renamed =
      jit({Tree({{"a", Vec({1})}, {"c", Vec({2})}}), Tree({{"x", Vec({1})}})});
  EXPECT_EQ(renamed.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace mimetic::core
