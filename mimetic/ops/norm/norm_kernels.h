// Launchers of the norm family's CUDA kernels (norm.cu), declared with builtin types only so that
// norm.cu includes nothing but this header and CUDA's, and plain C++ (norm_cuda.cc) calls them
// without CUDA headers. Pointers are device pointers; `stream` is a cudaStream_t. Each returns
// nullptr on success or CUDA's static error string.
//
// Layout: x (rows, d) row-major, weight/bias (d). GatedRmsNorm: y, z (rows, e), weight (e),
// normalised per group of `group` consecutive channels (e % group == 0). rows may be 0.
//
// Backward ops reduce dweight (and dbias) over rows deterministically: rows are cut into chunks
// that depend only on the shapes, a kernel sums each chunk in a fixed order into stream-ordered
// scratch (cudaMallocAsync, so the launchers are legal inside CUDA graph capture), and a second
// kernel adds the chunks in order. No floating-point atomics: same input, same bits.
#ifndef MIMETIC_OPS_NORM_NORM_KERNELS_H_
#define MIMETIC_OPS_NORM_NORM_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// y = x / sqrt(mean(x^2) + eps) * w.
const char* LaunchRmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t d, float eps,
                          void* stream);
const char* LaunchRmsNorm(const double* x, const double* w, double* y, int64_t rows, int64_t d, double eps,
                          void* stream);

// -> dx (rows, d), dw (d).
const char* LaunchRmsNormBackward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                  int64_t rows, int64_t d, float eps, void* stream);
const char* LaunchRmsNormBackward(const double* x, const double* w, const double* dy, double* dx, double* dw,
                                  int64_t rows, int64_t d, double eps, void* stream);

// y = (x - mean) / sqrt(var + eps) * w + b (biased variance).
const char* LaunchLayerNorm(const float* x, const float* w, const float* b, float* y, int64_t rows, int64_t d,
                            float eps, void* stream);
const char* LaunchLayerNorm(const double* x, const double* w, const double* b, double* y, int64_t rows,
                            int64_t d, double eps, void* stream);

// -> dx (rows, d), dw (d), db (d).
const char* LaunchLayerNormBackward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                    float* db, int64_t rows, int64_t d, float eps, void* stream);
const char* LaunchLayerNormBackward(const double* x, const double* w, const double* dy, double* dx,
                                    double* dw, double* db, int64_t rows, int64_t d, double eps,
                                    void* stream);

// n = y silu(z); out = n / sqrt(mean_group(n^2) + eps) * w.
const char* LaunchGatedRmsNorm(const float* y, const float* z, const float* w, float* out, int64_t rows,
                               int64_t e, int64_t group, float eps, void* stream);
const char* LaunchGatedRmsNorm(const double* y, const double* z, const double* w, double* out, int64_t rows,
                               int64_t e, int64_t group, double eps, void* stream);

// -> dy (rows, e), dz (rows, e), dw (e).
const char* LaunchGatedRmsNormBackward(const float* y, const float* z, const float* w, const float* dout,
                                       float* dy, float* dz, float* dw, int64_t rows, int64_t e,
                                       int64_t group, float eps, void* stream);
const char* LaunchGatedRmsNormBackward(const double* y, const double* z, const double* w, const double* dout,
                                       double* dy, double* dz, double* dw, int64_t rows, int64_t e,
                                       int64_t group, double eps, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_NORM_NORM_KERNELS_H_
