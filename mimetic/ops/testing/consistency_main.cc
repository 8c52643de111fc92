// main() for backend-consistency tests: runs every op case registered by the linked *_cases
// libraries (see op_cases.h) as its own test:
//   1. f32 inputs: the fast CPU backend against the reference backend;
//   2. f32 inputs on CUDA against the reference on the CPU, when the CUDA runtime is linked in
//      (//mimetic/core:cuda_runtime, with the family's *_cuda kernels) and finds a device; skipped
//      otherwise, saying which of the two is missing and why;
//   3. f64 inputs: the VJP against central finite differences.
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/key.h"
#include "mimetic/core/op.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops::testing {
namespace {

// GPU kernels may reassociate sums (block reductions, tiled GEMMs), contract a*b+c into FMAs and use
// the device's expf/logf: within the case's CPU tolerances times this factor.
constexpr double kCudaToleranceScale = 10.0;

// Mode 1: moves the inputs to the GPU (f32 and index inputs alike: an op's inputs share one
// device), runs the case there, copies each output back and compares it with the reference.
// The dispatcher poisons only CPU outputs; here, blocks of each output's size are filled with 0xFF
// bytes (NaN) and freed just before the run, so the caching allocator (last freed, first reused)
// most likely hands them to the kernels: an element a kernel leaves unwritten then shows as NaN.
void CheckCudaAgainstReference(const OpCase& c, core::Key key) {
  if (core::GetCudaMemoryHooks().allocate == nullptr) {
    const absl::Status why = core::CudaBackendStatus();
    if (absl::IsNotFound(why)) GTEST_SKIP() << "no CUDA backend linked into this binary (CPU build)";
    GTEST_SKIP() << "CUDA runtime linked, but no device: " << why.message();
  }
  auto inputs = MakeInputs(c, key, core::DType::kF32);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  std::vector<Tensor> ref = RunOn(c.fn, *inputs, static_cast<int>(core::Backend::kReference));
  std::vector<Tensor> on_cuda;
  for (const Tensor& t : *inputs) {
    absl::StatusOr<Tensor> d = t.ToDevice(core::Device::kCuda);
    ASSERT_TRUE(d.ok()) << d.status();
    on_cuda.push_back(*d);
  }
  {
    std::vector<Tensor> poisoned;
    for (const Tensor& r : ref) {
      if (!r.ok() || r.bytes() == 0) continue;
      core::TensorMeta meta = r.meta();
      meta.device = core::Device::kCuda;
      absl::StatusOr<Tensor> p = Tensor::Uninitialized(meta);
      ASSERT_TRUE(p.ok()) << p.status();
      const std::vector<unsigned char> nan_bytes(p->bytes(), 0xFF);
      ASSERT_TRUE(core::GetCudaMemoryHooks()
                      .copy(p->storage()->data(), core::Device::kCuda, nan_bytes.data(), core::Device::kCpu,
                            p->bytes())
                      .ok());
      poisoned.push_back(*p);
    }
  }  // freed here, back to the allocator's cache
  std::vector<Tensor> out = c.fn(on_cuda);
  ASSERT_EQ(ref.size(), out.size());
  for (size_t k = 0; k < ref.size(); ++k) {
    ASSERT_TRUE(ref[k].ok()) << ref[k].status();
    ASSERT_TRUE(out[k].ok()) << "output " << k << " on CUDA: " << out[k].status()
                             << (absl::IsUnimplemented(out[k].status())
                                     ? " (link the op's *_cuda library, or //mimetic/ops:cuda_backend)"
                                     : "");
    EXPECT_EQ(out[k].device(), core::Device::kCuda) << "output " << k << " did not stay on the GPU";
    absl::StatusOr<Tensor> host = out[k].ToDevice(core::Device::kCpu);
    ASSERT_TRUE(host.ok()) << "output " << k << ": " << host.status();
    absl::Status s =
        CompareTensors(*host, ref[k], c.atol * kCudaToleranceScale, c.rtol * kCudaToleranceScale);
    EXPECT_TRUE(s.ok()) << "output " << k << " (CUDA vs reference, tolerances x" << kCudaToleranceScale
                        << "): " << s;
  }
}

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
      CheckCudaAgainstReference(*case_, key);
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
