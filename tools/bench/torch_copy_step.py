#!/usr/bin/python3
"""PyTorch peer for //mimetic/experiments:speed_benchmark: the same copy-task training step
(embedding -> n_layer x [RMSNorm -> Mamba mixer] + residual -> RMSNorm -> tied head, masked
cross-entropy, backward, global-norm clipping, AdamW) written with plain torch ops on CPU, as a
researcher without mamba_ssm's CUDA kernels would: Mamba 2 uses mamba_ssm's own pure-PyTorch SSD
reference (ssd_minimal_discrete, chunked einsums), Mamba 1 the sequential selective_scan_ref.

Prints one JSON line: {"ms_per_step": ..., "threads": ..., "blas": ...}.
Run: /usr/bin/python3 tools/bench/torch_copy_step.py --mixer mamba2 --d_model 64 ...
"""
import argparse
import json
import math
import os
import re
import time

import torch
import torch.nn.functional as F


def segsum(x):
    T = x.size(-1)
    x = x[..., None].repeat(*([1] * x.dim()), T)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), -1)
    x = x.masked_fill(~mask, 0)
    s = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), 0)
    return s.masked_fill(~mask, -torch.inf)


def ssd_minimal(X, A, B, C, block_len):
    """mamba_ssm's ssd_minimal_discrete: X (b, l, h, p), A (b, l, h), B/C (b, l, h, n)."""
    b, l, h, p = X.shape
    X, A, B, C = [t.reshape(b, l // block_len, block_len, *t.shape[2:]) for t in (X, A, B, C)]
    A = A.permute(0, 3, 1, 2)  # b h c l
    A_cumsum = torch.cumsum(A, dim=-1)
    L = torch.exp(segsum(A))
    Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L, X)
    decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay_states, X)
    initial_states = torch.zeros_like(states[:, :1])
    states = torch.cat([initial_states, states], dim=1)
    decay_chunk = torch.exp(segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    states = new_states[:, :-1]
    state_decay_out = torch.exp(A_cumsum)
    Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", C, states, state_decay_out)
    return (Y_diag + Y_off).reshape(b, l, h, p)


class Mamba2(torch.nn.Module):
    def __init__(self, D, N, P, chunk):
        super().__init__()
        E = 2 * D
        self.E, self.N, self.P, self.H, self.chunk = E, N, P, E // P, chunk
        self.in_proj = torch.nn.Linear(D, 2 * E + 2 * N + self.H, bias=False)
        self.conv1d = torch.nn.Conv1d(E + 2 * N, E + 2 * N, 4, groups=E + 2 * N, padding=3)
        self.dt_bias = torch.nn.Parameter(torch.rand(self.H) - 4)
        self.A_log = torch.nn.Parameter(torch.log(torch.rand(self.H) * 15 + 1))
        self.D = torch.nn.Parameter(torch.ones(self.H))
        self.norm_weight = torch.nn.Parameter(torch.ones(E))
        self.out_proj = torch.nn.Linear(E, D, bias=False)

    def forward(self, u):
        b, l, _ = u.shape
        E, N, H, P = self.E, self.N, self.H, self.P
        z, xbc, dt = torch.split(self.in_proj(u), [E, E + 2 * N, H], -1)
        xbc = F.silu(self.conv1d(xbc.transpose(1, 2))[..., :l].transpose(1, 2))
        x, B, C = torch.split(xbc, [E, N, N], -1)
        dt = F.softplus(dt + self.dt_bias)
        A = -torch.exp(self.A_log)
        pad = (-l) % self.chunk
        x4 = x.reshape(b, l, H, P)
        Xd = x4 * dt[..., None]
        Ad = A * dt
        Bh = B[:, :, None, :].expand(b, l, H, N)
        Ch = C[:, :, None, :].expand(b, l, H, N)
        if pad:
            Xd, Ad, Bh, Ch = [F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad)) for t in (Xd, Ad, Bh, Ch)]
        y = ssd_minimal(Xd, Ad, Bh, Ch, self.chunk)[:, :l]
        y = (y + x4 * self.D[:, None]).reshape(b, l, E)
        y = y * F.silu(z)
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5) * self.norm_weight
        return self.out_proj(y)


class Mamba1(torch.nn.Module):
    def __init__(self, D, N, chunk):
        super().__init__()
        E, R = 2 * D, math.ceil(D / 16)
        self.E, self.N, self.R = E, N, R
        self.in_proj = torch.nn.Linear(D, 2 * E, bias=False)
        self.conv1d = torch.nn.Conv1d(E, E, 4, groups=E, padding=3)
        self.x_proj = torch.nn.Linear(E, R + 2 * N, bias=False)
        self.dt_proj = torch.nn.Linear(R, E)
        self.A_log = torch.nn.Parameter(torch.log(torch.arange(1, N + 1, dtype=torch.float32)).repeat(E, 1))
        self.D = torch.nn.Parameter(torch.ones(E))
        self.out_proj = torch.nn.Linear(E, D, bias=False)

    def forward(self, u):
        b, l, _ = u.shape
        x, z = self.in_proj(u).chunk(2, -1)
        x = F.silu(self.conv1d(x.transpose(1, 2))[..., :l].transpose(1, 2))
        dt, B, C = torch.split(self.x_proj(x), [self.R, self.N, self.N], -1)
        delta = F.softplus(self.dt_proj(dt))
        A = -torch.exp(self.A_log)
        dA = torch.exp(delta[..., None] * A)  # b l e n
        dBu = delta[..., None] * B[:, :, None, :] * x[..., None]
        h = torch.zeros(b, self.E, self.N, device=u.device)
        ys = []
        # selective_scan_ref's loop; unbind rather than dA[:, t] slicing, whose backward would
        # materialise a full-size zero gradient per step (an easy 50x slowdown on CPU).
        for dA_t, dBu_t, C_t in zip(dA.unbind(1), dBu.unbind(1), C.unbind(1)):
            h = dA_t * h + dBu_t
            ys.append(torch.einsum("bdn,bn->bd", h, C_t))
        y = torch.stack(ys, 1) + x * self.D
        return self.out_proj(y * F.silu(z))


class LM(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = torch.nn.Embedding(a.vocab, a.d_model)
        mk = (lambda: Mamba2(a.d_model, a.d_state, a.headdim, a.chunk)) if a.mixer == "mamba2" else (
            lambda: Mamba1(a.d_model, a.d_state, a.chunk))
        self.mixers = torch.nn.ModuleList([mk() for _ in range(a.n_layer)])
        self.norms = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(a.d_model)) for _ in range(a.n_layer + 1)])

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def forward(self, tokens):
        h = self.emb(tokens)
        for mixer, w in zip(self.mixers, self.norms):
            h = h + mixer(self.rms(h, w))
        return self.rms(h, self.norms[-1]) @ self.emb.weight.T


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mixer", default="mamba2")
    p.add_argument("--d_model", type=int, default=64)
    p.add_argument("--n_layer", type=int, default=2)
    p.add_argument("--d_state", type=int, default=32)
    p.add_argument("--headdim", type=int, default=16)
    p.add_argument("--chunk", type=int, default=32)
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seq_len", type=int, default=128)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    # Decaying SSM states underflow into denormals, which x86 handles ~100x slower; flushing them
    # is what a careful PyTorch user does (mimetic's kernels never produce many: exp2-based decay).
    torch.set_flush_denormal(True)
    torch.manual_seed(0)
    dev = torch.device(a.device)
    model = LM(a).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    tokens = torch.randint(0, a.vocab - 4, (a.batch, a.seq_len), device=dev)
    targets = torch.randint(0, a.vocab - 4, (a.batch, a.seq_len), device=dev)
    mask = (torch.rand(a.batch, a.seq_len, device=dev) < 0.5).float()
    forward = torch.compile(model) if a.compile else model

    def step():
        logits = forward(tokens)
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
        loss = (ce * mask.reshape(-1)).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss)

    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for _ in range(a.warmup):
        step()
    sync()
    t0 = time.perf_counter()
    for _ in range(a.steps):
        step()
    sync()
    ms = (time.perf_counter() - t0) / a.steps * 1000
    config = torch.__config__.show()
    blas = re.findall(r"BLAS_INFO=(\w+)", config)
    try:  # Debian's torch calls whatever libblas.so.3 the alternatives system points at
        blas.append(os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3"))
    except OSError:
        pass
    print(json.dumps({"ms_per_step": ms, "threads": torch.get_num_threads(), "torch": torch.__version__,
                      "device": a.device, "compile": a.compile, "blas": blas}))


if __name__ == "__main__":
    main()
