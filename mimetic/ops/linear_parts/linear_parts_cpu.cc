// LinearParts' fast CPU path: cpu/panel_gemm.h's kernels and OpenBLAS (linear_parts.cc holds shape
// inference, the reference and the VJP).
#include <vector>

#include "mimetic/core/status.h"
#include "mimetic/ops/cpu/blas.h"
#include "mimetic/ops/cpu/panel_gemm.h"
#include "mimetic/ops/linear_parts/linear_parts.h"

namespace mimetic::ops {
namespace {

using core::DType;

int64_t Rows(const Tensor& x) { return x.numel() / x.dim(-1); }

template <typename T>
void CpuForward(const std::vector<int64_t>& sizes, absl::Span<const Tensor> in,
                absl::Span<const Tensor> out) {
  const int64_t rows = Rows(in[0]), k = in[0].dim(-1);
  int64_t o = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    cpu::FastGemm<T>(false, true, rows, sizes[i], k, in[0].data<T>(), k, in[1].data<T>() + o * k, k,
               out[i].mutable_data<T>(), sizes[i]);
    o += sizes[i];
  }
}

template <typename T>
void CpuBackward(const std::vector<int64_t>& sizes, absl::Span<const Tensor> in,
                 absl::Span<const Tensor> out) {
  const int64_t rows = Rows(in[0]), k = in[0].dim(-1);
  const T* x = in[0].data<T>();
  const T* w = in[1].data<T>();
  T* dx = out[0].mutable_data<T>();
  T* dw = out[1].mutable_data<T>();
  std::vector<const T*> g, wi;
  std::vector<T*> dwi;
  std::vector<int64_t> ldw;
  bool panel_dw = true;  // every part's weight gradient on the panel kernel: one pass over x for all
  int64_t o = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    g.push_back(in[2 + i].data<T>());
    wi.push_back(w + o * k);
    dwi.push_back(dw + o * k);
    ldw.push_back(k);
    panel_dw = panel_dw && cpu::PanelGemmSuits(true, false, sizes[i], k, rows, k % cpu::Simd<T>::kWidth == 0);
    o += sizes[i];
  }
  // dW rows of part i = g_iᵀ x over every row, the GEMMs MatMulSumBatch runs (same bits).
  if (panel_dw) {
    cpu::PanelGemmTParts<T>(k, rows, g, sizes, sizes, x, k, dwi, k);
  } else {
    for (size_t i = 0; i < sizes.size(); ++i)
      cpu::FastGemm<T>(true, false, sizes[i], k, rows, g[i], sizes[i], x, k, dwi[i], k);
  }
  if (rows >= 64 && k <= 1024) {
    cpu::PanelGemmSum<T>(rows, k, g, sizes, wi, ldw, dx, k);
  } else {  // few rows or a wide x: OpenBLAS, the parts added in order with beta = 1
    for (size_t i = 0; i < sizes.size(); ++i) {
      cpu::Gemm(false, false, rows, k, sizes[i], T(1), g[i], sizes[i], wi[i], k, i == 0 ? T(0) : T(1), dx, k);
    }
  }
}

}  // namespace

absl::Status LinearPartsOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].numel() == 0 || in[0].dim(-1) == 0) return ComputeReference(in, out);  // empty rows or sums
  RETURN_IF_ERROR(cpu::CheckBlasDims({Rows(in[0]), in[0].dim(-1), in[1].dim(0)}));
  if (in[0].dtype() == DType::kF64) {
    CpuForward<double>(sizes_, in, out);
  } else {
    CpuForward<float>(sizes_, in, out);
  }
  return absl::OkStatus();
}

absl::Status LinearPartsBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                               absl::Span<const Tensor> out) const {
  if (in[0].numel() == 0 || in[0].dim(-1) == 0) return ComputeReference(in, out);
  RETURN_IF_ERROR(cpu::CheckBlasDims({Rows(in[0]), in[0].dim(-1), in[1].dim(0)}));
  if (in[0].dtype() == DType::kF64) {
    CpuBackward<double>(sizes_, in, out);
  } else {
    CpuBackward<float>(sizes_, in, out);
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
