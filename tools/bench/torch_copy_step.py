#!/usr/bin/python3
"""PyTorch peer for //mimetic/experiments:speed_benchmark: the same copy-task training step
(embedding -> n_layer x [RMSNorm -> Mamba mixer] + residual -> RMSNorm -> tied head, masked
cross-entropy, backward, global-norm clipping, AdamW) written with plain torch ops on CPU, as a
researcher without mamba_ssm's CUDA kernels would. The scan core is chosen with --scan from
tools/bench/torch_scans.py (Mamba 1: loop, fused, pscan; Mamba 2: ssd_minimal, ssd_chunked,
quadratic). Before timing, the whole step (loss and every parameter gradient) with the chosen core is
compared in float64 against the same step with the reference core (mamba_ssm's selective_scan_ref
loop / ssd_minimal_discrete), which is what tools/golden/make_golden.py checks mimetic against; a
peer that disagrees is not timed (exit status 3).

Prints one JSON line: {"ms_per_step": ..., "scan": ..., "check": {...}, "threads": ..., "blas": ...}.
Run: /usr/bin/python3 tools/bench/torch_copy_step.py --mixer mamba2 --scan quadratic --d_model 64 ...
"""
import argparse
import json
import math
import os
import re
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_scans  # noqa: E402


class Mamba2(torch.nn.Module):
    def __init__(self, D, N, P, chunk, scan):
        super().__init__()
        E = 2 * D
        self.E, self.N, self.P, self.H, self.chunk, self.scan = E, N, P, E // P, chunk, scan
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
        Xd, Ad = x4 * dt[..., None], A * dt
        if pad:
            Xd, Ad, B, C = [F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad)) for t in (Xd, Ad, B, C)]
        y = torch_scans.SSDS[self.scan](Xd, Ad, B, C, self.chunk)[:, :l]
        y = (y + x4 * self.D[:, None]).reshape(b, l, E)
        y = y * F.silu(z)
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5) * self.norm_weight
        return self.out_proj(y)


class Mamba1(torch.nn.Module):
    def __init__(self, D, N, scan):
        super().__init__()
        E, R = 2 * D, math.ceil(D / 16)
        self.E, self.N, self.R, self.scan = E, N, R, scan
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
        y = torch_scans.SCANS[self.scan](x, delta, A, B, C) + x * self.D
        return self.out_proj(y * F.silu(z))


class LM(torch.nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = torch.nn.Embedding(a.vocab, a.d_model)
        mk = (lambda: Mamba2(a.d_model, a.d_state, a.headdim, a.chunk, a.scan)) if a.mixer == "mamba2" else (
            lambda: Mamba1(a.d_model, a.d_state, a.scan))
        self.mixers = torch.nn.ModuleList([mk() for _ in range(a.n_layer)])
        self.norms = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(a.d_model)) for _ in range(a.n_layer + 1)])

    def set_scan(self, scan):
        for m in self.mixers:
            m.scan = scan

    def rms(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w

    def forward(self, tokens):
        h = self.emb(tokens)
        for mixer, w in zip(self.mixers, self.norms):
            h = h + mixer(self.rms(h, w))
        return self.rms(h, self.norms[-1]) @ self.emb.weight.T


def masked_loss(logits, targets, mask):
    ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")
    return (ce * mask.reshape(-1)).sum() / mask.sum()


def check_against_reference(a, tokens, targets, mask):
    """Loss and every parameter gradient of the step with a.scan vs the reference core, in float64 on
    the first 4 rows; returns the largest differences, relative to each gradient's largest entry."""
    torch.manual_seed(0)
    model = LM(a).double().to(tokens.device)
    # The reference cores keep every step's state for backward: Mamba 1's loop holds (rows, L, E, N)
    # float64 per layer, 10 GB a row at Fig. 3's size, so big models check fewer rows (at least 1).
    state_bytes = a.seq_len * 2 * a.d_model * a.d_state * 8 * a.n_layer * 3
    rows = slice(0, max(1, min(4, a.batch, (4 << 30) // state_bytes)))

    def loss_and_grads(scan):
        model.set_scan(scan)
        model.zero_grad()
        loss = masked_loss(model(tokens[rows]), targets[rows], mask[rows].double())
        loss.backward()
        return float(loss), [p.grad.clone() for p in model.parameters()]

    ref_loss, ref_grads = loss_and_grads(torch_scans.REFERENCE[a.mixer])
    loss, grads = loss_and_grads(a.scan)
    grad_err = max(float((g - r).abs().max() / r.abs().max().clamp_min(1e-30)) for g, r in zip(grads, ref_grads))
    return {"against": torch_scans.REFERENCE[a.mixer], "loss_abs_err": abs(loss - ref_loss),
            "max_grad_rel_err": grad_err}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mixer", default="mamba2")
    p.add_argument("--scan", default="", help="the scan core (default: the fastest we know for the mixer)")
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
    p.add_argument("--no_check", action="store_true", help="skip the float64 check against the reference")
    a = p.parse_args()
    cores = torch_scans.SSDS if a.mixer == "mamba2" else torch_scans.SCANS
    if not a.scan:
        a.scan = "quadratic" if a.mixer == "mamba2" else "fused"
    if a.scan not in cores:
        sys.exit(f"--scan for {a.mixer} must be one of {sorted(cores)}, got '{a.scan}'")
    torch.set_num_threads(a.threads)
    # Decaying SSM states underflow into denormals, which x86 handles ~100x slower; flushing them
    # is what a careful PyTorch user does (mimetic's kernels never produce many: exp2-based decay).
    torch.set_flush_denormal(True)
    dev = torch.device(a.device)
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, a.vocab - 4, (a.batch, a.seq_len), generator=gen).to(dev)
    targets = torch.randint(0, a.vocab - 4, (a.batch, a.seq_len), generator=gen).to(dev)
    mask = (torch.rand(a.batch, a.seq_len, generator=gen) < 0.5).float().to(dev)
    check = None
    if not a.no_check:
        check = check_against_reference(a, tokens, targets, mask)
        if check["loss_abs_err"] > 1e-9 or check["max_grad_rel_err"] > 1e-8:
            print(json.dumps({"scan": a.scan, "check": check, "error": "disagrees with the reference"}))
            sys.exit(3)
    torch.manual_seed(0)
    model = LM(a).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    forward = torch.compile(model) if a.compile else model

    def step():
        loss = masked_loss(forward(tokens), targets, mask)
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
    print(json.dumps({"ms_per_step": ms, "scan": a.scan, "check": check, "threads": torch.get_num_threads(),
                      "torch": torch.__version__, "device": a.device, "compile": a.compile, "blas": blas}))


if __name__ == "__main__":
    main()
