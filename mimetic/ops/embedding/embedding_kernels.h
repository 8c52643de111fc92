// Launchers of the CUDA embedding kernels (embedding.cu). Plain C++: builtin types and pointers
// only, so embedding_cuda.cc needs no CUDA headers. Each returns nullptr on success or a static
// CUDA error string. All pointers are device pointers; `stream` is a cudaStream_t.
#ifndef MIMETIC_OPS_EMBEDDING_EMBEDDING_KERNELS_H_
#define MIMETIC_OPS_EMBEDDING_EMBEDDING_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda {

// The outcome of the on-device id check. `checked` is false when the stream was being captured
// into a CUDA graph (no host synchronisation is possible then; bad ids still never read or write
// out of bounds). Otherwise bad_position is the first flat position whose id lies outside [0, V)
// (-1 when none) and bad_id that id.
struct IdCheck {
  bool checked = false;
  int64_t bad_position = -1;
  int32_t bad_id = 0;
};

// out[p, :] = table[ids[p], :] (zeros where ids[p] is out of range).
// table: (v, d), ids: (n,) i32, out: (n, d); elem_size is 4 (f32) or 8 (f64).
const char* LaunchEmbeddingForward(const void* table, const int32_t* ids, void* out, int64_t n, int64_t v,
                                   int64_t d, int elem_size, void* stream, IdCheck* check);

// out[r, :] = sum over positions p with ids[p] == r, in increasing p, of grad[p, :] (out-of-range
// ids are skipped). grad: (n, d), ids: (n,) i32, out: (v, d); f64 selects double over float.
const char* LaunchEmbeddingBackward(bool f64, const void* grad, const int32_t* ids, void* out, int64_t n,
                                    int64_t v, int64_t d, void* stream, IdCheck* check);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_EMBEDDING_EMBEDDING_KERNELS_H_
