// Where each named block sits in the rows of the Mamba projections, written down once. Dimension
// letters (docs/dimensions.md): D width, E inner width, N state, R dt rank, H heads, P head dim,
// G groups, K conv width.
//
//   Mamba 2 in_proj (2E + 2GN + H, D):  [ z (E) | x (E) | B (GN) | C (GN) | dt (H) ]
//           conv1d  (E + 2GN, 1, K):    over xBC = [ x | B | C ], the in_proj rows x.begin .. C.end
//   Mamba 1 in_proj (2E, D):            [ x (E) | z (E) ]
//           x_proj  (R + 2N, E):        [ dt (R) | B (N) | C (N) ]
//
// (mamba_ssm modules/mamba2.py and modules/mamba_simple.py split their projections in this order.)
//
//   const Mamba2InProj rows = Mamba2InProjOf(Mamba2DimsOf(spec, d_model));
//   for (int64_t r = rows.dt.begin; r < rows.dt.end(); ++r) ...;   // the dt rows
#ifndef MIMETIC_MODELS_PROJ_LAYOUT_H_
#define MIMETIC_MODELS_PROJ_LAYOUT_H_

#include <cstdint>

#include "mimetic/models/spec.h"

namespace mimetic::models {

// Rows [begin, begin + size) of a projection weight (or channels of its output).
struct RowRange {
  int64_t begin = 0;
  int64_t size = 0;
  int64_t end() const { return begin + size; }
};

struct Mamba2InProj {
  RowRange z, x, B, C, dt;
  // The conv's input channels, [x | B | C].
  RowRange xBC() const { return {x.begin, C.end() - x.begin}; }
  int64_t rows() const { return dt.end(); }
};

inline Mamba2InProj Mamba2InProjOf(const Mamba2Dims& d) {
  const int64_t gn = d.G * d.N;
  return Mamba2InProj{/*z=*/{0, d.E}, /*x=*/{d.E, d.E}, /*B=*/{2 * d.E, gn}, /*C=*/{2 * d.E + gn, gn},
                      /*dt=*/{2 * d.E + 2 * gn, d.H}};
}

struct Mamba1InProj {
  RowRange x, z;
  int64_t rows() const { return z.end(); }
};

inline Mamba1InProj Mamba1InProjOf(const Mamba1Dims& d) { return Mamba1InProj{{0, d.E}, {d.E, d.E}}; }

struct Mamba1XProj {
  RowRange dt, B, C;
  int64_t rows() const { return C.end(); }
};

inline Mamba1XProj Mamba1XProjOf(const Mamba1Dims& d) {
  return Mamba1XProj{{0, d.R}, {d.R, d.N}, {d.R + d.N, d.N}};
}

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_PROJ_LAYOUT_H_
