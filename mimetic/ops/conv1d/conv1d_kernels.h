// Launchers of the causal depthwise conv1d CUDA kernels (conv1d.cu), declared with builtin types only
// so that conv1d.cu includes nothing but this header and CUDA's, and plain C++ (conv1d_cuda.cc) calls
// them without CUDA headers. Pointers are device pointers; `stream` is a cudaStream_t. Each returns
// nullptr on success or CUDA's static error string.
//
// Layout: x, out, dout, dx (B, L, C) row-major; weight, dweight (C, K), tap K-1 multiplying the
// current token; bias, dbias (C). B or L may be 0; C, K >= 1.
//
// The backward reduction over the B*L rows (dweight, dbias) is deterministic: rows are cut into
// chunks that depend only on the shapes, each (chunk, channel) thread sums its rows in order into
// stream-ordered scratch (cudaMallocAsync, legal inside CUDA graph capture), and a second kernel adds
// the chunks in order. No floating-point atomics.
#ifndef MIMETIC_OPS_CONV1D_CONV1D_KERNELS_H_
#define MIMETIC_OPS_CONV1D_CONV1D_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// out[b,t,c] = bias[c] + sum_k w[c,k] x[b, t-(K-1)+k, c], x before the sequence start = 0.
const char* LaunchCausalConv1d(const float* x, const float* w, const float* bias, float* out, int64_t b,
                               int64_t l, int64_t c, int64_t k, void* stream);
const char* LaunchCausalConv1d(const double* x, const double* w, const double* bias, double* out, int64_t b,
                               int64_t l, int64_t c, int64_t k, void* stream);

// -> dx (B, L, C), dw (C, K), db (C).
const char* LaunchCausalConv1dBackward(const float* x, const float* w, const float* dout, float* dx,
                                       float* dw, float* db, int64_t b, int64_t l, int64_t c, int64_t k,
                                       void* stream);
const char* LaunchCausalConv1dBackward(const double* x, const double* w, const double* dout, double* dx,
                                       double* dw, double* db, int64_t b, int64_t l, int64_t c, int64_t k,
                                       void* stream);

// SiLU-fused: act = SiLU(conv), conv as LaunchCausalConv1d's out (kept for the backward).
const char* LaunchCausalConv1dSilu(const float* x, const float* w, const float* bias, float* act, float* conv,
                                   int64_t b, int64_t l, int64_t c, int64_t k, void* stream);
const char* LaunchCausalConv1dSilu(const double* x, const double* w, const double* bias, double* act,
                                   double* conv, int64_t b, int64_t l, int64_t c, int64_t k, void* stream);

// Its backward, dout the cotangent of act: -> dx (B, L, C), dw (C, K), db (C).
const char* LaunchCausalConv1dSiluBackward(const float* x, const float* w, const float* conv,
                                           const float* dout, float* dx, float* dw, float* db, int64_t b,
                                           int64_t l, int64_t c, int64_t k, void* stream);
const char* LaunchCausalConv1dSiluBackward(const double* x, const double* w, const double* conv,
                                           const double* dout, double* dx, double* dw, double* db, int64_t b,
                                           int64_t l, int64_t c, int64_t k, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_CONV1D_CONV1D_KERNELS_H_
