// MatMul's fast CPU path: OpenBLAS GEMMs, or cpu/panel_gemm.h's kernel for one flattened GEMM where it
// beats OpenBLAS (matmul.cc holds shape inference, the reference and the VJP).
#include <algorithm>

#include "mimetic/core/status.h"
#include "mimetic/ops/cpu/blas.h"
#include "mimetic/ops/cpu/panel_gemm.h"
#include "mimetic/ops/matmul/matmul.h"

namespace mimetic::ops {
namespace {

using core::DType;

// OpenBLAS runs a GEMM on one thread below this many multiply-adds (SMP_THRESHOLD_MIN *
// GEMM_MULTITHREAD_THRESHOLD = 65536 * 4 in interface/gemm.c); smaller GEMMs of a batch are run in
// parallel over the batch instead, so both cores work without nesting OpenBLAS threads.
constexpr int64_t kBlasSingleThreadMacs = 65536 * 4;

template <typename T>
void BlasGemm(const GemmPlan& p, const T* a, const T* b, T beta, T* c) {
  cpu::Gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, T(1), a, p.lda, b, p.ldb, beta, c, p.ldc);
}

template <typename T>
void BlasGemms(const GemmPlan& p, const T* a, const T* b, T* c) {
  if (p.batch == 1 && !p.accumulate) {
    // One GEMM (a Linear layer's, flattened): on our kernel where it beats OpenBLAS.
    cpu::FastGemm<T>(p.transpose_a, p.transpose_b, p.m, p.n, p.k, a, p.lda, b, p.ldb, c, p.ldc);
  } else if (p.accumulate) {
    // Sequential beta = 1 accumulation: a fixed summation order, so the same bits every run.
    for (int64_t i = 0; i < p.batch; ++i) {
      BlasGemm(p, a + i * p.stride_a, b + i * p.stride_b, i == 0 ? T(0) : T(1), c);
    }
  } else if (p.batch > 1 && p.m * p.n * p.k < kBlasSingleThreadMacs) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < p.batch; ++i) {
      BlasGemm(p, a + i * p.stride_a, b + i * p.stride_b, T(0), c + i * p.stride_c);
    }
  } else {
    for (int64_t i = 0; i < p.batch; ++i) {
      BlasGemm(p, a + i * p.stride_a, b + i * p.stride_b, T(0), c + i * p.stride_c);
    }
  }
}

template <typename T>
absl::Status RunCpu(const GemmPlan& p, const Tensor& a, const Tensor& b, const Tensor& out) {
  T* c = out.mutable_data<T>();
  if (out.numel() == 0) return absl::OkStatus();
  if (p.k == 0 || p.batch == 0) {  // an empty sum: every output element is zero
    std::fill(c, c + out.numel(), T(0));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(cpu::CheckBlasDims({p.m, p.n, p.k, p.lda, p.ldb, p.ldc}));
  BlasGemms<T>(p, a.data<T>(), b.data<T>(), c);
  return absl::OkStatus();
}

}  // namespace

absl::Status MatMulOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const GemmPlan p = MakeGemmPlan(*this, in[0].meta(), in[1].meta(), /*flatten=*/true);
  if (in[0].dtype() == DType::kF64) return RunCpu<double>(p, in[0], in[1], out[0]);
  return RunCpu<float>(p, in[0], in[1], out[0]);
}

}  // namespace mimetic::ops
