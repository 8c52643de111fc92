// Jit's CUDA-graph replay path, checked on any machine with a simulated device: "CUDA" memory is
// host memory behind CudaMemoryHooks, kernels are registered CUDA kernels that run at once or, while
// a capture is active, append a closure with the raw pointers they were given (as a real graph
// bakes its kernels' arguments), and a "graph launch" runs those closures. Replays that forgot to
// stage inputs or copy outputs would therefore compute on stale pointers and fail these tests.
// The real runtime's tests are in cuda_runtime_test.cc (they need a GPU).
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/core/toy_ops_for_test.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

using Graph = std::vector<std::function<void()>>;

// The simulated device's state.
void* const kStream = reinterpret_cast<void*>(0x5EED);
bool capturing = false;
Graph captured;
bool fail_capture = false;  // end_capture reports an invalidated capture
bool fail_kernel = false;   // the accumulate kernel returns an error
int captures = 0, launches = 0, kernels_enqueued = 0;

absl::Status Enqueue(const ExecContext& ctx, std::function<void()> work) {
  if (ctx.backend != Backend::kCuda || ctx.cuda_stream != kStream) {
    return absl::InternalError("kernel not run on the CUDA backend's stream");
  }
  ++kernels_enqueued;
  if (capturing) {
    captured.push_back(std::move(work));
  } else {
    work();
  }
  return absl::OkStatus();
}

float* Ptr(const Tensor& t) { return static_cast<float*>(t.storage()->data()); }

absl::Status FakeAccumulate(const Op&, const ExecContext& ctx, absl::Span<const Tensor> in,
                            absl::Span<const Tensor> out) {
  if (fail_kernel) return absl::InternalError("simulated kernel failure");
  const float* a = Ptr(in[0]);
  const float* b = Ptr(in[1]);
  float* z = Ptr(out[0]);
  const int64_t n = out[0].numel();
  return Enqueue(ctx, [=] {
    for (int64_t i = 0; i < n; ++i) z[i] = a[i] + b[i];
  });
}

absl::Status FakeMul(const Op&, const ExecContext& ctx, absl::Span<const Tensor> in,
                     absl::Span<const Tensor> out) {
  const float* a = Ptr(in[0]);
  const float* b = Ptr(in[1]);
  float* z = Ptr(out[0]);
  const int64_t n = out[0].numel();
  return Enqueue(ctx, [=] {
    for (int64_t i = 0; i < n; ++i) z[i] = a[i] * b[i];
  });
}

absl::Status FakeFill(const Op& op, const ExecContext& ctx, absl::Span<const Tensor>,
                      absl::Span<const Tensor> out) {
  const float value = static_cast<float>(static_cast<const FillOp&>(op).value());
  float* z = Ptr(out[0]);
  const int64_t n = out[0].numel();
  return Enqueue(ctx, [=] {
    for (int64_t i = 0; i < n; ++i) z[i] = value;
  });
}

absl::StatusOr<void*> Allocate(size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64); }
void Free(void* p) { std::free(p); }
absl::Status Copy(void* dst, Device, const void* src, Device, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return absl::OkStatus();
}
void* Stream() { return kStream; }
absl::Status BeginCapture(void* stream) {
  if (stream != kStream || capturing) return absl::InternalError("bad capture");
  capturing = true;
  captured.clear();
  ++captures;
  return absl::OkStatus();
}
absl::StatusOr<void*> EndCapture(void* stream) {
  capturing = false;
  if (stream != kStream || fail_capture) return absl::InternalError("simulated: capture invalidated");
  return static_cast<void*>(new Graph(std::move(captured)));
}
absl::Status Launch(void* graph, void* stream) {
  if (stream != kStream) return absl::InternalError("wrong stream");
  ++launches;
  for (const auto& work : *static_cast<Graph*>(graph)) work();
  return absl::OkStatus();
}
void Destroy(void* graph) { delete static_cast<Graph*>(graph); }

class JitCudaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterCudaKernel("accumulate", &FakeAccumulate);
    RegisterCudaKernel("toy_mul", &FakeMul);
    RegisterCudaKernel("fill", &FakeFill);
    SetCudaMemoryHooks({&Allocate, &Free, &Copy});
    SetCudaStreamProvider(&Stream);
    SetCudaGraphHooks({&Stream, &BeginCapture, &EndCapture, &Launch, &Destroy});
    capturing = fail_capture = fail_kernel = false;
    captures = launches = kernels_enqueued = 0;
  }
  void TearDown() override {
    SetCudaGraphHooks({});
    SetCudaStreamProvider(nullptr);
    SetCudaMemoryHooks({});
  }
};

Tensor Host(std::vector<float> v) {
  return Tensor::FromHost<float>({static_cast<int64_t>(v.size())}, v).value();
}
Tensor Dev(std::vector<float> v) { return Host(std::move(v)).ToDevice(Device::kCuda).value(); }

std::vector<float> Values(const Tensor& t) { return t.ToVector<float>().value(); }

std::vector<Tensor> Fn(absl::Span<const Tensor> in) {
  Tensor a = Accumulate(in[0], in[1]);
  Tensor b = toy::Mul(a, a);  // an intermediate buffer
  Tensor c = Accumulate(b, Fill(b.meta(), 0.25));
  Tensor v = toy::Reshape(c, {2, c.numel() / 2});   // a view of an output
  Tensor w = toy::Reshape(in[0], {in[0].numel()});  // a view of an input
  return {c, a, v, in[1], w, toy::Mul(a, in[2])};
}

std::vector<Tensor> Inputs(int call, Device device) {
  std::vector<float> x(6), y(6), s(6);
  for (int i = 0; i < 6; ++i) {
    x[i] = 0.5f * static_cast<float>(i) - 0.1f * static_cast<float>(call);
    y[i] = 1.0f + 0.3f * static_cast<float>(call * i % 5);
    s[i] = -0.7f + 0.01f * static_cast<float>(call);
  }
  if (device == Device::kCpu) return {Host(x), Host(y), Host(s)};
  return {Dev(x), Dev(y), Dev(s)};
}

void ExpectEqual(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_TRUE(got[k].ok()) << got[k].status();
    EXPECT_EQ(got[k].device(), Device::kCuda) << "output " << k;
    EXPECT_EQ(got[k].shape(), want[k].shape()) << "output " << k;
    EXPECT_EQ(Values(got[k]), Values(want[k])) << "output " << k;
  }
}

TEST_F(JitCudaGraphTest, ReplaysOneGraphCapturedOnTheFirstReplayAndEqualsEager) {
  Jit jit(Fn, "fn");
  std::vector<std::vector<Tensor>> ins, kept;
  for (int call = 0; call < 5; ++call) ins.push_back(Inputs(call, Device::kCuda));
  for (int call = 0; call < 5; ++call) {
    absl::StatusOr<std::vector<Tensor>> out = jit(ins[call]);
    ASSERT_TRUE(out.ok()) << out.status();
    kept.push_back(*out);
    ExpectEqual(*out, Fn(Inputs(call, Device::kCpu)));
  }
  EXPECT_EQ(jit.num_traces(), 1);
  EXPECT_EQ(captures, 1);
  EXPECT_EQ(launches, 4);
  EXPECT_TRUE(jit.last_stats().cuda_graph);
  EXPECT_THAT(jit.DebugString(), HasSubstr("one CUDA graph"));
  // Earlier results survive later replays; inputs and views of inputs are the caller's storage.
  for (int call = 0; call < 5; ++call) ExpectEqual(kept[call], Fn(Inputs(call, Device::kCpu)));
  EXPECT_EQ(kept[4][3].storage(), ins[4][1].storage());
  EXPECT_EQ(kept[4][4].storage(), ins[4][0].storage());
}

TEST_F(JitCudaGraphTest, SteadyStateLoopAllocatesNothingAndEnqueuesNoKernels) {
  auto step = [](absl::Span<const Tensor> in) -> std::vector<Tensor> {
    return {Accumulate(toy::Mul(in[0], in[1]), Fill(in[0].meta(), 0.5)), in[1]};
  };
  Jit jit(step);
  std::vector<Tensor> state = {Dev({1, 2, 3}), Dev({0.5f, 0.25f, -1})};
  std::vector<Tensor> eager = {Host({1, 2, 3}), Host({0.5f, 0.25f, -1})};
  for (int i = 0; i < 2; ++i) {
    state = jit(state).value();
    eager = step(eager);
  }
  const int64_t allocations = Storage::allocation_count();
  const int enqueued = kernels_enqueued;
  for (int i = 0; i < 10; ++i) {
    state = jit(state).value();
    eager = step(eager);
  }
  EXPECT_EQ(Storage::allocation_count() - allocations, 10 * 3);  // eager's three outputs per step
  EXPECT_EQ(kernels_enqueued, enqueued);  // eager runs on the CPU; the Jit enqueues nothing
  EXPECT_EQ(launches, 11);
  EXPECT_EQ(Values(state[0]), Values(eager[0]));
}

TEST_F(JitCudaGraphTest, FailedCaptureFallsBackToKernelByKernelOnTheStream) {
  Jit jit(Fn, "fn");
  fail_capture = true;
  for (int call = 0; call < 4; ++call) {
    absl::StatusOr<std::vector<Tensor>> out = jit(Inputs(call, Device::kCuda));
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectEqual(*out, Fn(Inputs(call, Device::kCpu)));
  }
  EXPECT_EQ(captures, 1);  // not retried
  EXPECT_EQ(launches, 0);
  EXPECT_FALSE(jit.last_stats().cuda_graph);
  EXPECT_THAT(jit.DebugString(), HasSubstr("capture failed"));
  EXPECT_THAT(jit.DebugString(), HasSubstr("simulated: capture invalidated"));
}

TEST_F(JitCudaGraphTest, KernelErrorDuringCaptureIsReturnedWithTheOp) {
  Jit jit(Fn, "fn");
  ASSERT_TRUE(jit(Inputs(0, Device::kCuda)).ok());
  fail_kernel = true;
  absl::StatusOr<std::vector<Tensor>> out = jit(Inputs(1, Device::kCuda));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("accumulate("));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("simulated kernel failure"));
  EXPECT_FALSE(capturing);
  fail_kernel = false;
  out = jit(Inputs(2, Device::kCuda));  // captures again, now successfully
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectEqual(*out, Fn(Inputs(2, Device::kCpu)));
  EXPECT_TRUE(jit.last_stats().cuda_graph);
}

TEST_F(JitCudaGraphTest, GraphsOffOrProfilingReplaysKernelByKernel) {
  Jit plain(Fn), profiled(Fn);
  plain.set_cuda_graphs(false);
  profiled.set_profiling(true);
  for (int call = 0; call < 3; ++call) {
    ExpectEqual(plain(Inputs(call, Device::kCuda)).value(), Fn(Inputs(call, Device::kCpu)));
    ExpectEqual(profiled(Inputs(call, Device::kCuda)).value(), Fn(Inputs(call, Device::kCpu)));
  }
  EXPECT_EQ(captures, 0);
  EXPECT_EQ(launches, 0);
  EXPECT_THAT(profiled.ProfileReport(), HasSubstr("accumulate"));
}

TEST_F(JitCudaGraphTest, CpuInputsNeverUseTheGraphHooks) {
  Jit jit(Fn);
  for (int call = 0; call < 3; ++call) {
    std::vector<Tensor> out = jit(Inputs(call, Device::kCpu)).value();
    std::vector<Tensor> want = Fn(Inputs(call, Device::kCpu));
    for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(Values(out[k]), Values(want[k]));
  }
  EXPECT_EQ(captures, 0);
  EXPECT_EQ(kernels_enqueued, 0);
  EXPECT_FALSE(jit.last_stats().cuda_graph);
}

}  // namespace
}  // namespace mimetic::core
