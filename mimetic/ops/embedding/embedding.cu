// CUDA embedding: gather, and a deterministic scatter-add for the table's gradient.
//
// Scatter-add without float atomics and without sorting: block (bx, by) owns the table rows
// [bx*R, bx*R + R) and the columns [by*W, by*W + W). It streams all ids in token order, compacts
// (in order, with warp ballots) the positions whose id it owns, and adds their gradient rows into
// per-row accumulators in shared memory. Each accumulator element is owned by one thread, which
// adds the tokens one after another in increasing position: out[r, c] = ((0 + g[p1, c]) + g[p2, c])
// + ..., exactly the CPU reference's order, so the result has the same bits as the reference and
// the same bits every run. Every block reads all n ids (4n bytes, L2-resident), so the id traffic is
// n * ceil(V / R) * ceil(D / W) ints, with R = 32 KiB / (W * sizeof(T)) rows per block.
//
// Ids are validated by a separate kernel that records the first bad position with an integer
// atomicMin (order-independent, hence deterministic); the launcher reads it back after a stream
// synchronisation unless the stream is being captured into a CUDA graph.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "mimetic/ops/cuda/cuda_scratch.cuh"
#include "mimetic/ops/embedding/embedding_kernels.h"

namespace mimetic::ops::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxGrid = 65535;
// Shared-memory accumulators per scatter-add block (plus ~3 KiB of position lists): under the
// 48 KiB that needs no opt-in, and small enough for several blocks per SM.
constexpr int kAccumulatorBytes = 32 * 1024;
// Bytes of the scatter-add's position lists ahead of the accumulators, rounded up to 16.
constexpr size_t kListBytes =
    (kThreads * (sizeof(int64_t) + sizeof(int)) + kWarps * sizeof(int) + 15) / 16 * 16;
constexpr unsigned long long kNoBadPosition = ULLONG_MAX;

// The bad-id flag: one 8-byte StreamBuffer per stream (cuda_scratch.cuh), which a captured CUDA
// graph keeps pointing at.
cudaError_t FlagFor(cudaStream_t stream, unsigned long long** flag) {
  return ::mimetic::ops::cuda_internal::StreamBuffer(stream, "embedding_flag", sizeof(unsigned long long),
                                                     reinterpret_cast<void**>(flag));
}

// flag <- min(flag, p) for every p with ids[p] outside [0, v).
__global__ void __launch_bounds__(kThreads)
    CheckIdsKernel(const int32_t* __restrict__ ids, int64_t n, int64_t v, unsigned long long* flag) {
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; p < n;
       p += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int32_t id = ids[p];
    if (id < 0 || id >= v) atomicMin(flag, static_cast<unsigned long long>(p));
  }
}

// Resets the flag and launches the check on `stream`.
cudaError_t StartIdCheck(const int32_t* ids, int64_t n, int64_t v, cudaStream_t stream,
                         unsigned long long** flag) {
  cudaError_t error = FlagFor(stream, flag);
  if (error != cudaSuccess) return error;
  error = cudaMemsetAsync(*flag, 0xFF, sizeof(unsigned long long), stream);  // kNoBadPosition
  if (error != cudaSuccess || n == 0) return error;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 1024));
  CheckIdsKernel<<<blocks, kThreads, 0, stream>>>(ids, n, v, *flag);
  return cudaGetLastError();
}

// Reads the flag back (synchronising the stream) unless the stream is being captured.
cudaError_t FinishIdCheck(const int32_t* ids, cudaStream_t stream, const unsigned long long* flag,
                          IdCheck* check) {
  *check = IdCheck();
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cudaError_t error = cudaStreamIsCapturing(stream, &capture);
  if (error != cudaSuccess) return error;
  if (capture != cudaStreamCaptureStatusNone) return cudaSuccess;  // checked stays false
  unsigned long long bad = kNoBadPosition;
  error = cudaMemcpyAsync(&bad, flag, sizeof(bad), cudaMemcpyDeviceToHost, stream);
  if (error == cudaSuccess) error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return error;
  check->checked = true;
  if (bad == kNoBadPosition) return cudaSuccess;
  check->bad_position = static_cast<int64_t>(bad);
  error = cudaMemcpyAsync(&check->bad_id, ids + bad, sizeof(int32_t), cudaMemcpyDeviceToHost, stream);
  return error == cudaSuccess ? cudaStreamSynchronize(stream) : error;
}

// ---- Gather: a row copy, so it moves machine words (16, 8 or 4 bytes) whatever the dtype. ----

// out (n, words) <- table (v, words) rows; threadIdx.x walks a row's words, threadIdx.y the rows.
template <typename Word>
__global__ void __launch_bounds__(kThreads)
    GatherKernel(const Word* __restrict__ table, const int32_t* __restrict__ ids, Word* __restrict__ out,
                 int64_t n, int64_t v, int64_t words) {
  const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.y;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; p < n; p += row_step) {
    const int32_t id = ids[p];
    Word* dst = out + p * words;
    if (id >= 0 && id < v) {
      const Word* src = table + static_cast<int64_t>(id) * words;
      for (int64_t c = threadIdx.x; c < words; c += blockDim.x) dst[c] = src[c];
    } else {
      for (int64_t c = threadIdx.x; c < words; c += blockDim.x) dst[c] = Word{};  // zero bits = +0.0
    }
  }
}

template <typename Word>
cudaError_t LaunchGather(const void* table, const int32_t* ids, void* out, int64_t n, int64_t v,
                         int64_t row_bytes, cudaStream_t stream) {
  const int64_t words = row_bytes / static_cast<int64_t>(sizeof(Word));
  // A warp-multiple of threads along the row (at most the block), the rest of the block on rows.
  const int tx = static_cast<int>(std::min<int64_t>(kThreads, (words + 31) / 32 * 32));
  const int ty = kThreads / tx;
  const int blocks = static_cast<int>(std::min<int64_t>((n + ty - 1) / ty, kMaxGrid));
  GatherKernel<Word><<<blocks, dim3(tx, ty), 0, stream>>>(static_cast<const Word*>(table), ids,
                                                          static_cast<Word*>(out), n, v, words);
  return cudaGetLastError();
}

// ---- Scatter-add (see the file comment). ----

template <typename T>
__global__ void __launch_bounds__(kThreads)
    ScatterAddKernel(const T* __restrict__ grad, const int32_t* __restrict__ ids, T* __restrict__ out,
                     int64_t n, int64_t v, int64_t d, int rows_per_block, int tile) {
  // Layout: the fixed-size lists first, so the accumulators start 16-byte aligned (kListBytes).
  extern __shared__ __align__(16) unsigned char smem[];
  int64_t* s_pos = reinterpret_cast<int64_t*>(smem);      // (kThreads,) token positions
  int* s_row = reinterpret_cast<int*>(s_pos + kThreads);  // (kThreads,) row - v0 of each
  int* s_count = s_row + kThreads;                        // (kWarps,) owned tokens per warp
  T* acc = reinterpret_cast<T*>(smem + kListBytes);       // (rows_per_block, tile)

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t v0 = static_cast<int64_t>(blockIdx.x) * rows_per_block;
  const int64_t v1 = v0 + rows_per_block < v ? v0 + rows_per_block : v;
  const int64_t col0 = static_cast<int64_t>(blockIdx.y) * tile;
  // Thread tid owns column col0 + tid of every accumulator row: no other thread touches them.
  const bool owner = tid < tile && col0 + tid < d;
  if (owner) {
    for (int r = 0; r < rows_per_block; ++r) acc[r * tile + tid] = T(0);
  }
  const T* g = grad + col0 + tid;  // dereferenced by owners only

  for (int64_t t0 = 0; t0 < n; t0 += kThreads) {  // uniform across the block
    const int64_t p = t0 + tid;
    const int64_t id = p < n ? static_cast<int64_t>(ids[p]) : -1;
    const bool mine = id >= v0 && id < v1;
    // In-order compaction of this tile's positions owned by the block.
    const unsigned ballot = __ballot_sync(0xffffffffu, mine);
    if (lane == 0) s_count[warp] = __popc(ballot);
    __syncthreads();
    int offset = 0, total = 0;
    for (int w = 0; w < kWarps; ++w) {
      const int count = s_count[w];
      offset += w < warp ? count : 0;
      total += count;
    }
    if (mine) {
      const int slot = offset + __popc(ballot & ((1u << lane) - 1u));
      s_pos[slot] = p;
      s_row[slot] = static_cast<int>(id - v0);
    }
    __syncthreads();
    if (owner) {
      int k = 0;
      // Four loads in flight, then the four adds in token order (rows may repeat: each add is a
      // read-modify-write of shared memory, so the order is kept).
      for (; k + 4 <= total; k += 4) {
        const T g0 = g[s_pos[k] * d];
        const T g1 = g[s_pos[k + 1] * d];
        const T g2 = g[s_pos[k + 2] * d];
        const T g3 = g[s_pos[k + 3] * d];
        acc[s_row[k] * tile + tid] += g0;
        acc[s_row[k + 1] * tile + tid] += g1;
        acc[s_row[k + 2] * tile + tid] += g2;
        acc[s_row[k + 3] * tile + tid] += g3;
      }
      for (; k < total; ++k) acc[s_row[k] * tile + tid] += g[s_pos[k] * d];
    }
    __syncthreads();  // s_pos, s_row and s_count are rewritten by the next tile
  }

  if (owner) {
    for (int64_t r = v0; r < v1; ++r) out[r * d + col0 + tid] = acc[(r - v0) * tile + tid];
  }
}

template <typename T>
cudaError_t LaunchScatterAdd(const void* grad, const int32_t* ids, void* out, int64_t n, int64_t v, int64_t d,
                             cudaStream_t stream) {
  const int tile = static_cast<int>(std::min<int64_t>(d, kThreads));
  const int64_t rows = std::max<int64_t>(1, kAccumulatorBytes / (tile * static_cast<int64_t>(sizeof(T))));
  const int rows_per_block = static_cast<int>(std::min<int64_t>(rows, v));
  const int64_t blocks_x = (v + rows_per_block - 1) / rows_per_block;
  const int64_t blocks_y = (d + tile - 1) / tile;
  if (blocks_x > INT_MAX || blocks_y > kMaxGrid) return cudaErrorInvalidConfiguration;
  const size_t smem = kListBytes + static_cast<size_t>(rows_per_block) * tile * sizeof(T);
  ScatterAddKernel<T>
      <<<dim3(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y)), kThreads, smem, stream>>>(
          static_cast<const T*>(grad), ids, static_cast<T*>(out), n, v, d, rows_per_block, tile);
  return cudaGetLastError();
}

}  // namespace

const char* LaunchEmbeddingForward(const void* table, const int32_t* ids, void* out, int64_t n, int64_t v,
                                   int64_t d, int elem_size, void* stream, IdCheck* check) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  unsigned long long* flag = nullptr;
  LAUNCHER_RETURN_IF_ERROR(StartIdCheck(ids, n, v, s, &flag));
  const int64_t row_bytes = d * elem_size;
  if (n > 0 && row_bytes > 0) {
    // cudaMalloc'd storage is 256-byte aligned, so rows are aligned to the largest word dividing
    // their size.
    if (row_bytes % 16 == 0) {
      LAUNCHER_RETURN_IF_ERROR(LaunchGather<uint4>(table, ids, out, n, v, row_bytes, s));
    } else if (row_bytes % 8 == 0) {
      LAUNCHER_RETURN_IF_ERROR(LaunchGather<uint2>(table, ids, out, n, v, row_bytes, s));
    } else {
      LAUNCHER_RETURN_IF_ERROR(LaunchGather<uint32_t>(table, ids, out, n, v, row_bytes, s));
    }
  }
  LAUNCHER_RETURN_IF_ERROR(FinishIdCheck(ids, s, flag, check));
  return nullptr;
}

const char* LaunchEmbeddingBackward(bool f64, const void* grad, const int32_t* ids, void* out, int64_t n,
                                    int64_t v, int64_t d, void* stream, IdCheck* check) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  unsigned long long* flag = nullptr;
  LAUNCHER_RETURN_IF_ERROR(StartIdCheck(ids, n, v, s, &flag));
  if (v > 0 && d > 0) {
    if (f64) {
      LAUNCHER_RETURN_IF_ERROR(LaunchScatterAdd<double>(grad, ids, out, n, v, d, s));
    } else {
      LAUNCHER_RETURN_IF_ERROR(LaunchScatterAdd<float>(grad, ids, out, n, v, d, s));
    }
  }
  LAUNCHER_RETURN_IF_ERROR(FinishIdCheck(ids, s, flag, check));
  return nullptr;
}

}  // namespace mimetic::ops::cuda
