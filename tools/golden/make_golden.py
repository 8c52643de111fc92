#!/usr/bin/python3
"""Golden values for mimetic's model tests, from an independent PyTorch implementation.

Builds tiny Mamba 1, Mamba 2, attention, linear-attention and hybrid language models with plain
torch ops (written from mamba_ssm's modules and the paper, not from mimetic's C++), draws their
weights with torch's own RNG following mamba_ssm's default init, optionally applies the paper's
mimetic init in Python, and
writes for each case one safetensors file holding the weights, a batch, the logits, the masked
cross-entropy loss and the gradient of every parameter. The C++ test (//mimetic/models:golden_test)
reads these files and needs no PyTorch.

Run (Debian's python3-torch; not a product dependency):
  /usr/bin/python3 tools/golden/make_golden.py mimetic/models/testdata
"""
import json
import math
import struct
import sys

import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)  # golden values in f64; the C++ test runs f32


def softplus(x):
    return torch.where(x > 20, x, torch.log1p(torch.exp(x)))


def silu(x):
    return x * torch.sigmoid(x)


def inv_softplus(y):
    return y + math.log(-math.expm1(-y))


def causal_conv(x, w, b):
    """x (B, L, C), w (C, 1, K), b (C): tap K-1 multiplies the current token."""
    K = w.shape[-1]
    xt = F.pad(x.transpose(1, 2), (K - 1, 0))
    return (F.conv1d(xt, w, b, groups=x.shape[-1])).transpose(1, 2)


def norm(x, p, prefix, kind, eps):
    w = p[prefix + "weight"]
    if kind == "layer":
        return F.layer_norm(x, (x.shape[-1],), w, p[prefix + "bias"], eps)
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * w


def mamba1(u, p, pre, cfg):
    E, N, R = cfg["E"], cfg["N"], cfg["R"]
    xz = u @ p[pre + "in_proj/weight"].T
    x, z = xz[..., :E], xz[..., E:]
    xc = silu(causal_conv(x, p[pre + "conv1d/weight"], p[pre + "conv1d/bias"]))
    dbl = xc @ p[pre + "x_proj/weight"].T
    dt, Bm, Cm = dbl[..., :R], dbl[..., R:R + N], dbl[..., R + N:]
    delta = softplus(dt @ p[pre + "dt_proj/weight"].T + p[pre + "dt_proj/bias"])
    A = -torch.exp(cfg["a_log_scale"] * p[pre + "A_log"])  # (E, N)
    Bsz, L, _ = u.shape
    h = torch.zeros(Bsz, E, N)
    ys = []
    for t in range(L):
        dA = torch.exp(delta[:, t, :, None] * A)
        h = dA * h + delta[:, t, :, None] * Bm[:, t, None, :] * xc[:, t, :, None]
        ys.append((h * Cm[:, t, None, :]).sum(-1) + p[pre + "D"] * xc[:, t])
    y = torch.stack(ys, 1) * silu(z)
    return y @ p[pre + "out_proj/weight"].T


def mamba2(u, p, pre, cfg):
    E, N, P, H, G = cfg["E"], cfg["N"], cfg["P"], cfg["H"], cfg["G"]
    zxbcdt = u @ p[pre + "in_proj/weight"].T
    z = zxbcdt[..., :E]
    xbc = zxbcdt[..., E:2 * E + 2 * G * N]
    dt = zxbcdt[..., 2 * E + 2 * G * N:]
    xbc = silu(causal_conv(xbc, p[pre + "conv1d/weight"], p[pre + "conv1d/bias"]))
    Bsz, L, _ = u.shape
    x = xbc[..., :E].reshape(Bsz, L, H, P)
    Bm = xbc[..., E:E + G * N].reshape(Bsz, L, G, N)
    Cm = xbc[..., E + G * N:].reshape(Bsz, L, G, N)
    delta = softplus(dt + p[pre + "dt_bias"])  # (B, L, H)
    A = -torch.exp(cfg["a_log_scale"] * p[pre + "A_log"])  # (H)
    group = torch.arange(H) // (H // G)
    state = torch.zeros(Bsz, H, P, N)
    ys = []
    for t in range(L):
        dA = torch.exp(delta[:, t] * A)  # (B, H)
        Bt, Ct = Bm[:, t, group], Cm[:, t, group]  # (B, H, N)
        state = dA[..., None, None] * state + (delta[:, t, :, None] * x[:, t])[..., None] * Bt[:, :, None, :]
        ys.append((state * Ct[:, :, None, :]).sum(-1) + p[pre + "D"][:, None] * x[:, t])
    y = torch.stack(ys, 1).reshape(Bsz, L, E)
    n = y * silu(z)
    gs = E // G
    n = n.reshape(Bsz, L, G, gs)
    n = n * torch.rsqrt((n * n).mean(-1, keepdim=True) + cfg["norm_eps"])
    y = n.reshape(Bsz, L, E) * p[pre + "norm/weight"]
    return y @ p[pre + "out_proj/weight"].T


def attention(u, p, pre, cfg):
    H, P = cfg["H"], cfg["P"]
    Bsz, L, _ = u.shape
    qkv = u @ p[pre + "in_proj/weight"].T + p[pre + "in_proj/bias"]
    q, k, v = [t.reshape(Bsz, L, H, P).transpose(1, 2) for t in qkv.split(H * P, -1)]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(P)
    s = s.masked_fill(torch.triu(torch.ones(L, L, dtype=torch.bool), 1), float("-inf"))
    o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(Bsz, L, H * P)
    return o @ p[pre + "out_proj/weight"].T + p[pre + "out_proj/bias"]


def linear_attention(u, p, pre, cfg):
    H, P = cfg["H"], cfg["P"]
    Bsz, L, _ = u.shape
    q, k, v = [(u @ p[pre + n + "/weight"].T).reshape(Bsz, L, H, P).transpose(1, 2)
               for n in ("q_proj", "k_proj", "v_proj")]
    s = (q @ k.transpose(-1, -2)) * torch.tril(torch.ones(L, L))
    o = (s @ v).transpose(1, 2).reshape(Bsz, L, H * P)
    return o @ p[pre + "out_proj/weight"].T


def forward(p, model, tokens):
    h = p["embedding/weight"][tokens]
    for i, layer in enumerate(model["layers"]):
        pre = "layers/%d/" % i
        u = norm(h, p, pre + "norm/", model["norm"], model["eps"])
        fn = {"mamba1": mamba1, "mamba2": mamba2, "attention": attention, "linear_attention": linear_attention}
        h = h + fn[layer["kind"]](u, p, pre + "mixer/", layer)
        if model["d_intermediate"]:
            I = model["d_intermediate"]
            v = norm(h, p, pre + "norm2/", model["norm"], model["eps"])
            yg = v @ p[pre + "mlp/fc1/weight"].T
            h = h + (yg[..., :I] * silu(yg[..., I:])) @ p[pre + "mlp/fc2/weight"].T
    hf = norm(h, p, "norm_f/", model["norm"], model["eps"])
    return hf @ p["embedding/weight"].T


def uniform(shape, bound):
    return (torch.rand(shape) * 2 - 1) * bound


def init(model):
    """mamba_ssm's default init (modules/mamba_simple.py, modules/mamba2.py,
    models/mixer_seq_simple.py), drawn with torch's RNG."""
    D, V, n = model["D"], model["V"], len(model["layers"])
    # out_proj/fc2 / sqrt(n_layer): MambaLMHeadModel's _init_weights pass runs last with
    # n_residuals_per_layer = 1, with or without an MLP (mamba_ssm models/mixer_seq_simple.py).
    scale = 1 / math.sqrt(n)
    p = {"embedding/weight": torch.randn(V, D) * 0.02}
    for i, L in enumerate(model["layers"]):
        pre = "layers/%d/" % i
        m = pre + "mixer/"
        p[pre + "norm/weight"] = torch.ones(D)
        if model["norm"] == "layer":
            p[pre + "norm/bias"] = torch.zeros(D)
        if L["kind"] == "mamba1":
            E, N, R, K = L["E"], L["N"], L["R"], 4
            p[m + "in_proj/weight"] = uniform((2 * E, D), 1 / math.sqrt(D))
            p[m + "conv1d/weight"] = uniform((E, 1, K), 0.5)
            p[m + "conv1d/bias"] = uniform((E,), 0.5)
            p[m + "x_proj/weight"] = uniform((R + 2 * N, E), 1 / math.sqrt(E))
            p[m + "dt_proj/weight"] = uniform((E, R), R ** -0.5)
            dt = torch.exp(torch.rand(E) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)).clamp(min=1e-4)
            p[m + "dt_proj/bias"] = dt + torch.log(-torch.expm1(-dt))
            p[m + "A_log"] = torch.log(torch.arange(1, N + 1, dtype=torch.float64)).repeat(E, 1)
            p[m + "D"] = torch.ones(E)
            p[m + "out_proj/weight"] = uniform((D, E), 1 / math.sqrt(E)) * scale
        elif L["kind"] == "mamba2":
            E, N, H, G, K = L["E"], L["N"], L["H"], L["G"], 4
            p[m + "in_proj/weight"] = uniform((2 * E + 2 * G * N + H, D), 1 / math.sqrt(D))
            p[m + "conv1d/weight"] = uniform((E + 2 * G * N, 1, K), 0.5)
            p[m + "conv1d/bias"] = uniform((E + 2 * G * N,), 0.5)
            dt = torch.exp(torch.rand(H) * (math.log(0.1) - math.log(0.001)) + math.log(0.001)).clamp(min=1e-4)
            p[m + "dt_bias"] = dt + torch.log(-torch.expm1(-dt))
            p[m + "A_log"] = torch.log(torch.rand(H) * 15 + 1)
            p[m + "D"] = torch.ones(H)
            p[m + "norm/weight"] = torch.ones(E)
            p[m + "out_proj/weight"] = uniform((D, E), 1 / math.sqrt(E)) * scale
        elif L["kind"] == "attention":
            H, P = L["H"], L["P"]
            p[m + "in_proj/weight"] = uniform((3 * H * P, D), 1 / math.sqrt(D))
            p[m + "in_proj/bias"] = torch.zeros(3 * H * P)
            p[m + "out_proj/weight"] = uniform((D, H * P), 1 / math.sqrt(H * P)) * scale
            p[m + "out_proj/bias"] = torch.zeros(D)
        else:
            H, P = L["H"], L["P"]
            for name in ("q_proj", "k_proj", "v_proj"):
                p[m + name + "/weight"] = uniform((H * P, D), 1 / math.sqrt(D))
            p[m + "out_proj/weight"] = uniform((D, H * P), 1 / math.sqrt(H * P)) * scale
        if model["d_intermediate"]:
            I = model["d_intermediate"]
            p[pre + "norm2/weight"] = torch.ones(D)
            if model["norm"] == "layer":
                p[pre + "norm2/bias"] = torch.zeros(D)
            p[pre + "mlp/fc1/weight"] = uniform((2 * I, D), 1 / math.sqrt(D))
            p[pre + "mlp/fc2/weight"] = uniform((D, I), 1 / math.sqrt(I)) * scale
    p["norm_f/weight"] = torch.ones(D)
    if model["norm"] == "layer":
        p["norm_f/bias"] = torch.zeros(D)
    return p


def mimetic(p, model, c=8.0):
    """The paper's recipe (paper §3; docs/mimetic_recipe.md): Mamba 1: Δ, A, BC; Mamba 2: Δ, A,
    BC, conv. Returns new weights and the per-layer a_log_scale (A = -exp(-c A_log))."""
    p = {k: v.clone() for k, v in p.items()}
    for i, L in enumerate(model["layers"]):
        m = "layers/%d/mixer/" % i
        if L["kind"] == "mamba1":
            E, N, R = L["E"], L["N"], L["R"]
            p[m + "dt_proj/weight"].zero_()
            p[m + "dt_proj/bias"].fill_(inv_softplus(1.0))
            L["a_log_scale"] = -c
            w = p[m + "x_proj/weight"]
            w[R + N:R + 2 * N] = 0.5 * (w[R + N:R + 2 * N] + w[R:R + N])
        elif L["kind"] == "mamba2":
            E, N, H, G = L["E"], L["N"], L["H"], L["G"]
            w = p[m + "in_proj/weight"]
            w[2 * E + 2 * G * N:].zero_()
            p[m + "dt_bias"].fill_(inv_softplus(1.0))
            L["a_log_scale"] = -c
            w[2 * E + G * N:2 * E + 2 * G * N] = 0.5 * (w[2 * E + G * N:2 * E + 2 * G * N] + w[2 * E:2 * E + G * N])
            cw = p[m + "conv1d/weight"]
            cw.zero_()
            cw[:, 0, -1] = 1.0
            p[m + "conv1d/bias"].zero_()
    return p


def write_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        if t.dtype == torch.int64:
            t = t.to(torch.int32)
        dtype = {torch.float64: "F64", torch.float32: "F32", torch.int32: "I32"}[t.dtype]
        data = t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def spec_text(model):
    """The same model as a mimetic ModelSpec in protobuf text format."""
    parts = ["vocab_size: %d d_model: %d" % (model["vocab"], model["D"]),
             "norm: %s" % ("LAYER_NORM" if model["norm"] == "layer" else "RMS_NORM"),
             "pad_vocab_size_multiple: %d" % model["pad"], "d_intermediate: %d" % model["d_intermediate"]]
    for L in model["layers"]:
        if L["kind"] == "mamba1":
            parts.append("layers { mamba1 { d_state: %d dt_rank: %d scan_chunk: 4 } }" % (L["N"], L["R"]))
        elif L["kind"] == "mamba2":
            parts.append("layers { mamba2 { d_state: %d headdim: %d ngroups: %d chunk_size: %d } }"
                         % (L["N"], L["P"], L["G"], L.get("chunk", 4)))
        elif L["kind"] == "attention":
            parts.append("layers { attention { num_heads: %d } }" % L["H"])
        else:
            parts.append("layers { linear_attention { num_heads: %d head_dim: %d } }" % (L["H"], L["P"]))
    return " ".join(parts)


def copy_rows(B, L, V):
    """B training rows of the copy task (Jelassi et al.): `$ s | s .` examples (content ids 0..V-1, then
    $ | . as V, V+1, V+2) packed into L + 1 ids, strings of 5..16, loss on the answer and EOS; the
    example that overflows the row is cut and masked. Returns tokens, targets, mask (B, L)."""
    ids, mask = [], []
    for _ in range(B):
        row, m = [], []
        while len(row) < L + 1:
            n = int(torch.randint(5, 17, ()))
            s = torch.randint(0, V, (n,)).tolist()
            e, em = [V] + s + [V + 1] + s + [V + 2], [0.0] * (n + 2) + [1.0] * (n + 1)
            row, m = row + e, m + (em if len(row) + len(e) <= L + 1 else [0.0] * len(e))
        ids.append(row[:L + 1])
        mask.append(m[:L + 1])
    ids = torch.tensor(ids)
    return ids[:, :-1], ids[:, 1:], torch.tensor(mask)[:, 1:]


def M1(D):
    return {"kind": "mamba1", "E": 2 * D, "N": 4, "R": 1, "a_log_scale": 1.0}


def M2(D, G=1, N=8, P=8, chunk=4):
    return {"kind": "mamba2", "E": 2 * D, "N": N, "P": P, "H": 2 * D // P, "G": G, "norm_eps": 1e-5,
            "a_log_scale": 1.0, "chunk": chunk}


def case(name, layers, norm_kind="rms", pad=8, d_intermediate=0, D=16, vocab=13, batch=2, length=9, copy=False,
         mimetic_variant=True):
    V = (vocab + pad - 1) // pad * pad
    # mamba_ssm's GatedMLP rounds its width up to a multiple of 128 (modules/mlp.py, multiple_of).
    d_intermediate = (d_intermediate + 127) // 128 * 128
    return name, {"D": D, "vocab": vocab, "V": V, "pad": pad, "norm": norm_kind, "eps": 1e-5,
                  "d_intermediate": d_intermediate, "layers": layers, "batch": batch, "length": length,
                  "copy": copy, "mimetic_variant": mimetic_variant}


def main(out_dir):
    D = 16
    cases = [
        case("mamba1", [M1(D), M1(D)], norm_kind="layer", pad=1),
        case("mamba2", [M2(D), M2(D, G=2)]),
        case("attention", [{"kind": "attention", "H": 2, "P": 8}] * 2),
        case("linear_attention", [{"kind": "linear_attention", "H": 1, "P": 8}] * 2),
        case("hybrid", [M2(D), M1(D), {"kind": "attention", "H": 1, "P": 16},
                        {"kind": "linear_attention", "H": 2, "P": 4}], d_intermediate=24),
        # Fig. 2's cpu preset exactly (width 32, 8 layers of Mamba 2 with N 32, P 16, chunk 32, layer
        # index 3 single-head softmax attention) on two copy rows of its context length 64: two
        # attention row blocks (kAttentionRowBlock 32) and two scan chunks.
        case("fig2_hybrid", [M2(32, N=32, P=16, chunk=32)] * 3 + [{"kind": "attention", "H": 1, "P": 32}]
             + [M2(32, N=32, P=16, chunk=32)] * 4, D=32, vocab=30, length=64, copy=True, mimetic_variant=False),
    ]
    for seed, (name, model) in enumerate(cases):
        for variant in ("default", "mimetic"):
            if variant == "mimetic" and not (model["mimetic_variant"] and
                                             any(L["kind"].startswith("mamba") for L in model["layers"])):
                continue
            torch.manual_seed(1000 + seed)
            layers = [dict(L) for L in model["layers"]]
            model = dict(model, layers=layers)
            default = init(model)
            p = mimetic(default, model) if variant == "mimetic" else default
            B, L = model["batch"], model["length"]
            if model["copy"]:
                tokens, targets, mask = copy_rows(B, L, model["vocab"] - 4)
            else:
                tokens = torch.randint(0, model["vocab"], (B, L))
                targets = torch.randint(0, model["vocab"], (B, L))
                mask = (torch.rand(B, L) < 0.7).double()
            params = {k: v.clone().requires_grad_(True) for k, v in p.items()}
            logits = forward(params, model, tokens)
            ce = F.cross_entropy(logits.reshape(B * L, -1), targets.reshape(-1), reduction="none")
            loss = (ce * mask.reshape(-1)).sum() / mask.sum()
            loss.backward()
            tensors = {"tokens": tokens, "targets": targets, "mask": mask, "logits": logits, "loss": loss.reshape(())}
            for k in p:
                tensors["param/" + k] = params[k]
                tensors["grad/" + k] = params[k].grad
                if variant == "mimetic":
                    tensors["default/" + k] = default[k]
            meta = {"spec": spec_text(model), "variant": variant,
                    "a_log_scale": json.dumps([L.get("a_log_scale", 1.0) for L in model["layers"]])}
            path = "%s/golden_%s_%s.safetensors" % (out_dir, name, variant)
            write_safetensors(path, tensors, meta)
            print("wrote", path, "loss", float(loss))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "mimetic/models/testdata")
