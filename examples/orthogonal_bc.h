// An example of a user-written init transform (docs/init_transforms.md): W_B with orthonormal rows
// and W_C := W_B on a Mamba 2 layer, so W_C W_Bᵀ = I_N exactly (to f32 rounding) and W_Cᵀ W_B is the
// orthogonal projection onto W_B's rows. The paper (§3, "Correlated tokens should attend to each
// other") wants W_Cᵀ W_B ≈ I; with N < D no rank-N product equals I, and this is the closest one,
// where the paper's own W_C := (W_C + W_B) / 2 is correlated only on average.
//
// orthogonal_bc.cc also registers it as "orthogonal_bc" (parameter `gain`, the rows' norm), so any
// binary linking //examples:orthogonal_bc (alwayslink) can name it in a config:
//
//   init { named { name: "orthogonal_bc" params { key: "gain" value: "1" } } layers: 3 }
//   Transform t = Compose({DefaultInit(), OnLayers({3}, OrthogonalBC(1.0))});   // in C++
#ifndef EXAMPLES_ORTHOGONAL_BC_H_
#define EXAMPLES_ORTHOGONAL_BC_H_

#include "mimetic/init/transform.h"

namespace examples {

mimetic::init::LayerTransform OrthogonalBC(double gain = 1.0);

}  // namespace examples

#endif  // EXAMPLES_ORTHOGONAL_BC_H_
