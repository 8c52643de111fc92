// main() for backend-consistency tests: runs every op case registered by the linked *_cases
// libraries (see op_cases.h) as its own test:
//   1. f32 inputs: the fast CPU backend against the reference backend;
//   2. CUDA against the reference when a GPU backend is linked in and present (else skipped);
//   3. f64 inputs: the VJP against central finite differences.
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/core/op.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops::testing {
namespace {

class OpCaseTest : public ::testing::Test {
 public:
  OpCaseTest(const OpCase* c, int mode) : case_(c), mode_(mode) {}
  void TestBody() override {
    const core::Key key = core::FoldIn(core::Key::FromSeed(20241015), case_->name);
    if (mode_ == 0) {
      auto inputs = MakeInputs(*case_, key, core::DType::kF32);
      ASSERT_TRUE(inputs.ok()) << inputs.status();
      std::vector<Tensor> ref = RunOn(case_->fn, *inputs, static_cast<int>(core::Backend::kReference));
      std::vector<Tensor> fast = RunOn(case_->fn, *inputs, static_cast<int>(core::Backend::kCpu));
      ASSERT_EQ(ref.size(), fast.size());
      for (size_t k = 0; k < ref.size(); ++k) {
        ASSERT_TRUE(ref[k].ok()) << ref[k].status();
        absl::Status s = CompareTensors(fast[k], ref[k], case_->atol, case_->rtol);
        EXPECT_TRUE(s.ok()) << "output " << k << ": " << s;
      }
    } else if (mode_ == 1) {
      GTEST_SKIP() << "no CUDA backend linked into this binary (CPU build)";
    } else {
      if (!case_->check_grad) GTEST_SKIP() << "case is not differentiable";
      auto inputs = MakeInputs(*case_, key, core::DType::kF64);
      ASSERT_TRUE(inputs.ok()) << inputs.status();
      absl::Status s = CheckGradients(*case_, *inputs, core::FoldIn(key, "seeds"));
      EXPECT_TRUE(s.ok()) << s;
    }
  }

 private:
  const OpCase* case_;
  int mode_;
};

}  // namespace
}  // namespace mimetic::ops::testing

int main(int argc, char** argv) {
  using mimetic::ops::testing::OpCaseTest;
  const char* kModes[] = {"cpu_vs_reference", "cuda_vs_reference", "vjp_vs_finite_differences"};
  for (const auto& c : mimetic::ops::testing::RegisteredOpCases()) {
    for (int mode = 0; mode < 3; ++mode) {
      const auto* cp = &c;
      ::testing::RegisterTest(kModes[mode], c.name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                              [cp, mode]() -> ::testing::Test* { return new OpCaseTest(cp, mode); });
    }
  }
  // Kernels must write every output element (Jit reuses buffers): poison fresh outputs with NaN.
  mimetic::core::SetPoisonOutputs(true);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
