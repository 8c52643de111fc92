#include "mimetic/init/transfer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "mimetic/init/tree_edit.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"

namespace mimetic::init {
namespace {

// Copies rows [src_begin, src_begin + dst.size) of the (., width) source weight into rows `dst`.
absl::StatusOr<ParamTree> CopyRows(const ParamTree& dst_tree, const std::string& dst_path, RowRange dst,
                                   const Tensor& src, int64_t src_begin) {
  std::vector<double> s;
  if (src.dtype() == core::DType::kF64) {
    ASSIGN_OR_RETURN(s, src.ToVector<double>());
  } else {
    ASSIGN_OR_RETURN(std::vector<float> f, src.ToVector<float>());
    s.assign(f.begin(), f.end());
  }
  const int64_t width = src.dim(1);
  return EditRows(dst_tree, dst_path, [&](RowEditor& w) -> absl::Status {
    if (w.width() != width) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", dst_path, "' rows have ", w.width(), " columns; the source rows have ", width));
    }
    return w.CopyFrom(dst, s, src_begin);
  });
}

}  // namespace

LayerTransform TransferFromAttention(Model source, int source_layer) {
  return LayerTransform(
      absl::StrCat("transfer_from_attention(layer ", source_layer, ")"),
      [source, source_layer](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
        RETURN_IF_ERROR(CheckLayer(m, layer));
        RETURN_IF_ERROR(CheckLayer(source, source_layer));
        const LayerSpec& src = source.spec.layers(source_layer);
        const LayerSpec& dst = m.spec.layers(layer);
        if (dst.mixer_case() != LayerSpec::kMamba2) {
          return absl::InvalidArgumentError(absl::StrCat("attention transfer targets a Mamba 2 layer; layer ",
                                                         layer, " is ", models::MixerKind(dst)));
        }
        const std::string sp = MixerPath(source_layer, "");
        Tensor wq, wk, wv;
        int64_t hp = 0;
        if (src.mixer_case() == LayerSpec::kAttention) {
          ASSIGN_OR_RETURN(Tensor in_proj, source.params.Get(sp + "in_proj/weight"));
          hp = in_proj.dim(0) / 3;
          wq = in_proj;  // rows [0, hp) q, [hp, 2hp) k, [2hp, 3hp) v
        } else if (src.mixer_case() == LayerSpec::kLinearAttention) {
          ASSIGN_OR_RETURN(wq, source.params.Get(sp + "q_proj/weight"));
          ASSIGN_OR_RETURN(wk, source.params.Get(sp + "k_proj/weight"));
          ASSIGN_OR_RETURN(wv, source.params.Get(sp + "v_proj/weight"));
          hp = wq.dim(0);
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat("attention transfer needs an attention source layer; layer ", source_layer, " is ",
                           models::MixerKind(src)));
        }
        const models::Mamba2Dims d = models::Mamba2DimsOf(dst.mamba2(), m.spec.d_model());
        if (d.E != hp || d.G * d.N != hp) {
          return absl::InvalidArgumentError(absl::StrCat(
              "attention transfer: the source's H·P = ", hp, " must equal the target's d_inner (", d.E,
              ") and ngroups·d_state (", d.G * d.N, "); use expand 1, ngroups = heads, d_state = head_dim"));
        }
        const models::Mamba2InProj in = models::Mamba2InProjOf(d);
        const std::string in_path = MixerPath(layer, "in_proj/weight");
        RETURN_IF_ERROR(CheckShape(m.params, in_path, {in.rows(), d.D}));
        Model out = m;
        const bool fused = src.mixer_case() == LayerSpec::kAttention;
        // x <- V, B <- K, C <- Q (the fused attention in_proj is [q | k | v]).
        ASSIGN_OR_RETURN(out.params,
                         CopyRows(out.params, in_path, in.x, fused ? wq : wv, fused ? 2 * hp : 0));
        ASSIGN_OR_RETURN(out.params, CopyRows(out.params, in_path, in.B, fused ? wq : wk, fused ? hp : 0));
        ASSIGN_OR_RETURN(out.params, CopyRows(out.params, in_path, in.C, wq, 0));
        ASSIGN_OR_RETURN(Tensor wo, source.params.Get(sp + "out_proj/weight"));
        ASSIGN_OR_RETURN(out.params, out.params.Replace(MixerPath(layer, "out_proj/weight"), wo));
        const std::string norm_src = absl::StrCat("layers/", source_layer, "/norm/");
        const std::string norm_dst = absl::StrCat("layers/", layer, "/norm/");
        for (const std::string& leaf : {std::string("weight"), std::string("bias")}) {
          if (!source.params.Contains(norm_src + leaf)) continue;
          ASSIGN_OR_RETURN(Tensor t, source.params.Get(norm_src + leaf));
          ASSIGN_OR_RETURN(out.params, out.params.Replace(norm_dst + leaf, t));
        }
        return out;
      });
}

LayerTransform Transplant(Model source, int source_layer) {
  return LayerTransform(
      absl::StrCat("transplant(layer ", source_layer, ")"),
      [source, source_layer](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
        RETURN_IF_ERROR(CheckLayer(m, layer));
        RETURN_IF_ERROR(CheckLayer(source, source_layer));
        const LayerSpec& src = source.spec.layers(source_layer);
        if (src.mixer_case() != m.spec.layers(layer).mixer_case()) {
          return absl::InvalidArgumentError(absl::StrCat("transplant: source layer ", source_layer, " is ",
                                                         models::MixerKind(src), " but target layer ", layer,
                                                         " is ", models::MixerKind(m.spec.layers(layer))));
        }
        const std::string src_prefix = absl::StrCat("layers/", source_layer, "/");
        const std::string dst_prefix = absl::StrCat("layers/", layer, "/");
        Model out = m;
        *out.spec.mutable_layers(layer) = src;
        int copied = 0;
        for (size_t i = 0; i < source.params.size(); ++i) {
          const std::string& path = source.params.Paths()[i];
          if (!absl::StartsWith(path, src_prefix)) continue;
          const std::string dst_path = dst_prefix + path.substr(src_prefix.size());
          // Replace checks that the target has this leaf with the same shape.
          absl::StatusOr<ParamTree> next = out.params.Replace(dst_path, source.params.Leaves()[i]);
          if (!next.ok())
            return absl::InvalidArgumentError(absl::StrCat("transplant: ", next.status().message()));
          out.params = *std::move(next);
          ++copied;
        }
        if (copied == 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("transplant: the source has no parameters under '", src_prefix, "'"));
        }
        return out;
      });
}

}  // namespace mimetic::init
