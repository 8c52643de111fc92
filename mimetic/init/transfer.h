// Moving trained weights between models.
//
// TransferFromAttention (Wang et al. 2024, "The Mamba in the Llama", §2): a Mamba 2 layer
// takes an attention layer's projections, x <- W_V, B <- W_K, C <- W_Q, out_proj <- W_O, and the
// block norm; z and dt rows, conv, dt_bias, A_log, D and the gated norm keep their (fresh) init.
// Needs d_inner = H·P of the attention layer and G·N = H·P (MIL: expand 1, ngroups = heads,
// d_state = head_dim).
//
// Transplant (paper §6, Fig. 11): a layer of another model (e.g. a pretrained teacher) replaces the
// chosen layers, spec included, so "all student layers from teacher layer T_31" is
//   OnLayers({0, 1, ..., 11}, Transplant(teacher, 31)).
#ifndef MIMETIC_INIT_TRANSFER_H_
#define MIMETIC_INIT_TRANSFER_H_

#include "mimetic/init/transform.h"

namespace mimetic::init {

LayerTransform TransferFromAttention(Model source, int source_layer);
LayerTransform Transplant(Model source, int source_layer);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_TRANSFER_H_
