// CUDA launchers for causal softmax / linear attention (attention.h), implemented in attention.cu.
// Plain C++ (builtin types and pointers only) so that attention.cu includes no project header and
// attention_cuda.cc needs no CUDA header. All pointers are device pointers to contiguous tensors:
//   q, k, dq, dk: (B, L, H, Pk);  v, dout, out, dv: (B, L, H, Pv);  weights, dweights: (B, H, L, L).
// `stream` is a cudaStream_t. Each launcher enqueues its kernels and returns nullptr, or a static
// error string (cudaGetErrorString, or a size the kernels cannot handle). `softmax` picks softmax
// attention; otherwise linear attention (masked raw scores scale·q_t·k_s). Deterministic: no atomics.
#ifndef MIMETIC_OPS_ATTENTION_ATTENTION_KERNELS_H_
#define MIMETIC_OPS_ATTENTION_ATTENTION_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda {

// Elements of the scratch buffer the backward launchers need for softmax (per-row max, 1/sum and
// rowsum(w ∘ dw) of each (b, h, t)); linear attention needs none (scratch may be nullptr).
inline int64_t AttentionBackwardScratchElements(int64_t B, int64_t L, int64_t H) { return 3 * B * L * H; }

// out = causal attention of (q, k, v).
const char* LaunchCausalAttentionForward(bool softmax, float scale, const float* q, const float* k,
                                         const float* v, float* out, int64_t B, int64_t L, int64_t H,
                                         int64_t Pk, int64_t Pv, void* stream);
const char* LaunchCausalAttentionForward(bool softmax, double scale, const double* q, const double* k,
                                         const double* v, double* out, int64_t B, int64_t L, int64_t H,
                                         int64_t Pk, int64_t Pv, void* stream);

// {dq, dk, dv} of causal attention given dout. scratch: AttentionBackwardScratchElements values.
const char* LaunchCausalAttentionBackward(bool softmax, float scale, const float* q, const float* k,
                                          const float* v, const float* dout, float* dq, float* dk, float* dv,
                                          int64_t B, int64_t L, int64_t H, int64_t Pk, int64_t Pv,
                                          float* scratch, void* stream);
const char* LaunchCausalAttentionBackward(bool softmax, double scale, const double* q, const double* k,
                                          const double* v, const double* dout, double* dq, double* dk,
                                          double* dv, int64_t B, int64_t L, int64_t H, int64_t Pk, int64_t Pv,
                                          double* scratch, void* stream);

// weights[b,h,t,s]: softmax_s(scale q_t·k_s) or scale q_t·k_s for s <= t, 0 above the diagonal.
const char* LaunchCausalAttentionWeights(bool softmax, float scale, const float* q, const float* k,
                                         float* weights, int64_t B, int64_t L, int64_t H, int64_t Pk,
                                         void* stream);
const char* LaunchCausalAttentionWeights(bool softmax, double scale, const double* q, const double* k,
                                         double* weights, int64_t B, int64_t L, int64_t H, int64_t Pk,
                                         void* stream);

// {dq, dk} of the weights given dweights (entries above the diagonal are ignored).
// scratch: AttentionBackwardScratchElements values.
const char* LaunchCausalAttentionWeightsBackward(bool softmax, float scale, const float* q, const float* k,
                                                 const float* dweights, float* dq, float* dk, int64_t B,
                                                 int64_t L, int64_t H, int64_t Pk, float* scratch,
                                                 void* stream);
const char* LaunchCausalAttentionWeightsBackward(bool softmax, double scale, const double* q, const double* k,
                                                 const double* dweights, double* dq, double* dk, int64_t B,
                                                 int64_t L, int64_t H, int64_t Pk, double* scratch,
                                                 void* stream);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_ATTENTION_ATTENTION_KERNELS_H_
