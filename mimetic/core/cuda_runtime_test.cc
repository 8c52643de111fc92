// The CUDA runtime: without a device every entry point fails cleanly and says why (these tests run
// everywhere); with one, the allocator, copies, timers and Jit's CUDA-graph replay are checked
// (those skip themselves without a device, naming what cudaGetDeviceCount said).
#include "mimetic/core/cuda_runtime.h"

#include <cstdint>
#include <cstdio>
#include <string>
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

#define SKIP_WITHOUT_CUDA()                                                     \
  do {                                                                          \
    if (!CudaAvailable()) GTEST_SKIP() << "no CUDA: " << CudaDevice().status(); \
  } while (false)

TEST(CudaRuntimeTest, DeviceQueryNamesTheDeviceOrWhyThereIsNone) {
  absl::StatusOr<CudaDeviceInfo> info = CudaDevice();
  if (!info.ok()) {
    EXPECT_EQ(info.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(info.status().message());
    EXPECT_TRUE(message.find("cudaGetDeviceCount") != std::string::npos ||
                message.find("MIMETIC_DISABLE_CUDA") != std::string::npos)
        << message;
    EXPECT_FALSE(CudaAvailable());
    EXPECT_EQ(CudaBackendStatus(), info.status());
    GTEST_SKIP() << "no CUDA device (the runtime says: " << info.status().message() << ")";
  }
  EXPECT_TRUE(CudaAvailable());
  EXPECT_TRUE(CudaBackendStatus().ok()) << CudaBackendStatus();
  EXPECT_GE(info->count, 1);
  EXPECT_FALSE(info->name.empty());
  EXPECT_GT(info->total_memory, 0);
  EXPECT_GT(info->free_memory, 0);
  EXPECT_GT(info->sm_count, 0);
  EXPECT_GE(info->compute_major, 7);
  EXPECT_NE(GetCudaMemoryHooks().allocate, nullptr);
  EXPECT_NE(GetCudaGraphHooks().launch, nullptr);
  EXPECT_NE(CurrentStream(), nullptr);
  std::printf("%s\n", info->DebugString().c_str());
}

// Runs everywhere: on a machine without a device nothing is installed and every call fails with
// the runtime's reason instead of crashing.
TEST(CudaRuntimeTest, WithoutADeviceEveryEntryPointFailsCleanly) {
  if (CudaAvailable()) GTEST_SKIP() << "a device is present; this checks the no-device behaviour";
  EXPECT_EQ(GetCudaMemoryHooks().allocate, nullptr);
  EXPECT_EQ(GetCudaMemoryHooks().copy, nullptr);
  EXPECT_EQ(GetCudaGraphHooks().begin_capture, nullptr);
  EXPECT_EQ(CurrentStream(), nullptr);
  EXPECT_EQ(CudaBackendStatus().code(), absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<void*> p = CudaAllocate(1024);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Synchronize().code(), absl::StatusCode::kFailedPrecondition);
  CudaFree(nullptr);  // a no-op
  EmptyCache();       // a no-op
  EXPECT_EQ(CudaMemoryStats().num_allocs, 0);

  CudaTimer timer;
  timer.Start();
  timer.Stop();
  EXPECT_EQ(timer.ElapsedMilliseconds().status().code(), absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<Tensor> t = Tensor::Zeros({3}, DType::kF32, Device::kCuda);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<Tensor> moved = Tensor::FromHost<float>({2}, {1, 2}).value().ToDevice(Device::kCuda);
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CudaRuntimeTest, TimerNeedsStartThenStop) {
  SKIP_WITHOUT_CUDA();
  CudaTimer timer;
  EXPECT_EQ(timer.ElapsedMilliseconds().status().code(), absl::StatusCode::kFailedPrecondition);
  timer.Start();
  Tensor x = Tensor::Zeros({1 << 20}, DType::kF32, Device::kCuda).value();
  timer.Stop();
  absl::StatusOr<double> ms = timer.ElapsedMilliseconds();
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0);
  EXPECT_TRUE(Synchronize().ok());
}

TEST(CudaRuntimeTest, AllocatorReusesFreedBlocksOfTheSameBucket) {
  SKIP_WITHOUT_CUDA();
  EmptyCache();
  ResetPeakCudaMemory();
  const CudaAllocatorStats s0 = CudaMemoryStats();
  EXPECT_EQ(s0.bytes_cached, 0);

  void* p = CudaAllocate(1000).value();  // bucket: 1024 bytes
  CudaAllocatorStats s1 = CudaMemoryStats();
  EXPECT_EQ(s1.bytes_in_use - s0.bytes_in_use, 1024);
  EXPECT_EQ(s1.num_allocs - s0.num_allocs, 1);
  EXPECT_EQ(s1.peak_bytes_in_use, s1.bytes_in_use);
  CudaFree(p);
  CudaAllocatorStats s2 = CudaMemoryStats();
  EXPECT_EQ(s2.bytes_in_use, s0.bytes_in_use);
  EXPECT_EQ(s2.bytes_cached, 1024);
  EXPECT_EQ(s2.peak_bytes_in_use, s1.peak_bytes_in_use);

  void* q = CudaAllocate(600).value();  // same bucket: the cached block comes back
  CudaAllocatorStats s3 = CudaMemoryStats();
  EXPECT_EQ(q, p);
  EXPECT_EQ(s3.num_cache_hits - s2.num_cache_hits, 1);
  EXPECT_EQ(s3.num_cuda_mallocs, s2.num_cuda_mallocs);
  EXPECT_EQ(s3.bytes_cached, 0);

  // Large requests round up to a quarter of their power of two: 3 MiB + 1 -> 3.5 MiB.
  void* big = CudaAllocate((3 << 20) + 1).value();
  EXPECT_EQ(CudaMemoryStats().bytes_in_use - s3.bytes_in_use, int64_t{7} << 19);
  CudaFree(big);
  CudaFree(q);
  EXPECT_GT(CudaMemoryStats().bytes_cached, 0);
  EmptyCache();
  EXPECT_EQ(CudaMemoryStats().bytes_cached, 0);
  EXPECT_EQ(CudaMemoryStats().bytes_in_use, s0.bytes_in_use);
}

TEST(CudaRuntimeTest, TensorStorageComesFromTheCache) {
  SKIP_WITHOUT_CUDA();
  { Tensor warm = Tensor::Zeros({1000}, DType::kF32, Device::kCuda).value(); }
  const CudaAllocatorStats before = CudaMemoryStats();
  for (int i = 0; i < 10; ++i) Tensor t = Tensor::Zeros({1000}, DType::kF32, Device::kCuda).value();
  const CudaAllocatorStats after = CudaMemoryStats();
  EXPECT_EQ(after.num_cuda_mallocs, before.num_cuda_mallocs);
  EXPECT_EQ(after.num_allocs - before.num_allocs, 10);
}

TEST(CudaRuntimeTest, HostDeviceRoundTripKeepsEveryBit) {
  SKIP_WITHOUT_CUDA();
  std::vector<float> f(1031);
  for (size_t i = 0; i < f.size(); ++i) f[i] = 0.37f * static_cast<float>(i) - 11.f;
  Tensor x = Tensor::FromHost<float>({1031}, f).value();
  Tensor d = x.ToDevice(Device::kCuda).value();
  EXPECT_EQ(d.device(), Device::kCuda);
  EXPECT_EQ(d.shape(), x.shape());
  EXPECT_EQ(d.ToVector<float>().value(), f);  // device -> host directly
  Tensor back = d.ToDevice(Device::kCpu).value();
  EXPECT_EQ(back.device(), Device::kCpu);
  EXPECT_EQ(back.ToVector<float>().value(), f);

  std::vector<double> g = {1e-300, -2.5, 3.14159265358979};
  EXPECT_EQ(
      Tensor::FromHost<double>({3}, g).value().ToDevice(Device::kCuda).value().ToVector<double>().value(), g);
  std::vector<int32_t> ids = {7, -1, 2147483647};
  EXPECT_EQ(
      Tensor::FromHost<int32_t>({3}, ids).value().ToDevice(Device::kCuda).value().ToVector<int32_t>().value(),
      ids);
  EXPECT_EQ(Tensor::Zeros({5}, DType::kF32, Device::kCuda).value().ToVector<float>().value(),
            std::vector<float>(5, 0));
  EXPECT_EQ(Tensor::Zeros({0}, DType::kF32, Device::kCuda).value().ToVector<float>().value(),
            std::vector<float>());
}

TEST(CudaRuntimeTest, OutOfMemoryNamesTheSizeAndTheBytesInUse) {
  SKIP_WITHOUT_CUDA();
  const size_t absurd = size_t{1} << 50;  // 1 PiB
  absl::StatusOr<void*> p = CudaAllocate(absurd);
  ASSERT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("1125899906842624 bytes"));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("in use"));

  // A request the device cannot hold next to its own context: cudaMalloc fails, the cache is
  // emptied, the retry fails too.
  const CudaDeviceInfo info = CudaDevice().value();
  absl::StatusOr<void*> q = CudaAllocate(static_cast<size_t>(info.total_memory));
  ASSERT_EQ(q.status().code(), absl::StatusCode::kResourceExhausted) << q.status();
  EXPECT_THAT(std::string(q.status().message()), HasSubstr(std::to_string(info.total_memory) + " bytes"));
  EXPECT_THAT(std::string(q.status().message()), HasSubstr("after emptying the cache"));

  // Through a tensor: an error value, not a crash; the allocator still works afterwards.
  absl::StatusOr<Tensor> t = Tensor::Zeros({int64_t{1} << 48}, DType::kF32, Device::kCuda);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Tensor::Zeros({16}, DType::kF32, Device::kCuda).ok());
}

// ---- Jit replay as a CUDA graph (needs the builtin kernels from //mimetic/ops:builtin_cuda). ----

Tensor OnCuda(std::vector<float> v) {
  return Tensor::FromHost<float>({static_cast<int64_t>(v.size())}, v).value().ToDevice(Device::kCuda).value();
}

std::vector<Tensor> Graph(absl::Span<const Tensor> in) {
  Tensor a = Accumulate(in[0], in[1]);
  Tensor b = Accumulate(a, a);
  Tensor c = Accumulate(b, Fill(b.meta(), 0.25));
  Tensor v = toy::Reshape(c, {2, static_cast<int64_t>(c.numel() / 2)});   // a view of an output
  Tensor w = toy::Reshape(in[0], {static_cast<int64_t>(in[0].numel())});  // a view of an input
  return {c, a, v, in[1], w};
}

void ExpectSameBits(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_TRUE(got[k].ok()) << got[k].status();
    EXPECT_EQ(got[k].meta(), want[k].meta()) << "output " << k;
    EXPECT_EQ(got[k].ToVector<float>().value(), want[k].ToVector<float>().value()) << "output " << k;
  }
}

TEST(CudaJitTest, GraphReplayEqualsEagerBitForBit) {
  SKIP_WITHOUT_CUDA();
  ASSERT_NE(FindCudaKernel("accumulate"), nullptr) << "link //mimetic/ops:builtin_cuda";
  Jit jit(Graph, "graph_test");
  const int n = 1000;
  std::vector<std::vector<Tensor>> inputs;
  for (int call = 0; call < 4; ++call) {
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = 0.001f * static_cast<float>(i * (call + 1)) - 0.3f;
      y[i] = 1.7f - 0.01f * static_cast<float>((i * 7 + call) % 13);
    }
    inputs.push_back({OnCuda(x), OnCuda(y)});
  }
  std::vector<std::vector<Tensor>> kept;
  for (int call = 0; call < 4; ++call) {
    absl::StatusOr<std::vector<Tensor>> out = jit(inputs[call]);  // trace, capture + launch, launch, launch
    ASSERT_TRUE(out.ok()) << out.status();
    kept.push_back(*out);
    ExpectSameBits(*out, Graph(inputs[call]));
  }
  EXPECT_EQ(jit.num_traces(), 1);
  EXPECT_TRUE(jit.last_stats().cuda_graph) << jit.DebugString();
  EXPECT_THAT(jit.DebugString(), HasSubstr("one CUDA graph"));
  // Results of earlier calls are untouched by later replays.
  for (int call = 0; call < 4; ++call) ExpectSameBits(kept[call], Graph(inputs[call]));
  // Returned inputs and views of inputs are the caller's tensors, not the plan's staging copies.
  EXPECT_EQ(kept[3][3].storage(), inputs[3][1].storage());
  EXPECT_EQ(kept[3][4].storage(), inputs[3][0].storage());
}

TEST(CudaJitTest, GraphReplayLoopAllocatesNothingAndMatchesKernelByKernel) {
  SKIP_WITHOUT_CUDA();
  auto step = [](absl::Span<const Tensor> in) -> std::vector<Tensor> {
    Tensor next = Accumulate(Accumulate(in[0], in[1]), Fill(in[0].meta(), -0.5));
    return {next, in[1]};
  };
  Jit graph(step), plain(step);
  plain.set_cuda_graphs(false);
  std::vector<float> init(257);
  for (size_t i = 0; i < init.size(); ++i) init[i] = 0.01f * static_cast<float>(i);
  std::vector<Tensor> a = {OnCuda(init), OnCuda(std::vector<float>(257, 0.75f))};
  std::vector<Tensor> b = a, eager = a;
  a = graph(a).value();
  a = graph(a).value();
  b = plain(b).value();
  b = plain(b).value();
  eager = step(step(eager));
  const int64_t before = Storage::allocation_count();
  for (int i = 0; i < 20; ++i) {
    a = graph(a).value();
    b = plain(b).value();
    eager = step(eager);
  }
  // Eager allocates; the two Jits' loops do not (eager: 3 outputs per step).
  EXPECT_EQ(Storage::allocation_count() - before, 20 * 3);
  EXPECT_TRUE(graph.last_stats().cuda_graph);
  EXPECT_FALSE(plain.last_stats().cuda_graph);
  ExpectSameBits(a, eager);
  ExpectSameBits(b, eager);
}

TEST(CudaJitTest, FillAndAccumulateKernelsCoverEveryDtype) {
  SKIP_WITHOUT_CUDA();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI32}) {
    const TensorMeta meta{{3, 5}, dtype, Device::kCuda};
    Tensor f = Fill(meta, 3.0);
    Tensor s = Accumulate(f, Fill(meta, -1.0));
    ASSERT_TRUE(s.ok()) << s.status();
    Tensor host = s.ToDevice(Device::kCpu).value();
    Tensor want =
        Accumulate(Fill({{3, 5}, dtype, Device::kCpu}, 3.0), Fill({{3, 5}, dtype, Device::kCpu}, -1.0));
    switch (dtype) {
      case DType::kF32:
        EXPECT_EQ(host.ToVector<float>().value(), want.ToVector<float>().value());
        break;
      case DType::kF64:
        EXPECT_EQ(host.ToVector<double>().value(), want.ToVector<double>().value());
        break;
      case DType::kI32:
        EXPECT_EQ(host.ToVector<int32_t>().value(), want.ToVector<int32_t>().value());
        break;
    }
  }
  // Empty tensors launch nothing and still succeed.
  EXPECT_TRUE(Fill({{0}, DType::kF32, Device::kCuda}, 1.0).ok());
}

}  // namespace
}  // namespace mimetic::core
