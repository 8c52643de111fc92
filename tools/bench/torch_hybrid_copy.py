#!/usr/bin/python3
"""Independent PyTorch peer for training a Mamba 2 / attention hybrid on the copy task (Figs. 2, 4, 5).

Trains the model a mimetic figure config describes (e.g. Fig. 2's: 8 layers of Mamba 2, layer 4 single-head
softmax attention) with plain torch ops on the CPU, written from mamba_ssm's modules and Jelassi et al.'s
copy task rather than from mimetic's C++, so that its loss curve tells whether mimetic's is the model's
or a bug's:
  - model: embedding -> n_layer x [RMSNorm -> mixer] + residual -> RMSNorm -> tied head; Mamba 2 as
    mamba_ssm modules/mamba2.py (torch_copy_step.py's mixer, scan torch_scans.py's ssd_chunked), softmax
    attention as mamba_ssm modules/mha.py (MHA, causal, qkv and out biases, no rotary), linear
    attention as the paper's Fig. 5 (no feature map, no normalizer);
  - init: mamba_ssm's defaults (nn.Linear / nn.Conv1d defaults, Linear biases zeroed, embedding
    N(0, 0.02), A ~ U(1, 16), dt log-uniform in [1e-3, 1e-1], out_proj / sqrt(n_layer) as
    models/mixer_seq_simple.py's _init_weights);
  - task: rows of T + 1 ids packed with `$ s | s .` examples, lengths uniform in [min_len, max_len],
    the overflowing example cut and masked; loss on the answer and EOS (Jelassi et al.'s train_utils.py);
  - training: AdamW (betas 0.9, 0.999, eps 1e-8, weight decay on every parameter), global-norm
    clipping, linear warmup from 0 then linear decay to 0, as mimetic's TrainSpec defaults;
  - eval: exact-string and per-token accuracy of the teacher-forced argmax on single examples of
    each eval length.

Prints one JSON line per log step ({"step", "loss", "lr", "grad_norm"}) and per eval.
Run (one thread, Fig. 2's cpu preset):
  /usr/bin/python3 tools/bench/torch_hybrid_copy.py --attention_layer 3 --seed 1
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_copy_step  # noqa: E402


def rms(x, w, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


class Mamba2(torch_copy_step.Mamba2):
    """torch_copy_step's Mamba 2 mixer with mamba_ssm's full default init: dt log-uniform in
    [dt_min, dt_max] through the inverse softplus, out_proj / sqrt(n_layer)."""

    def __init__(self, D, N, P, chunk, n_layer):
        super().__init__(D, N, P, chunk, "ssd_chunked")
        dt = torch.exp(torch.rand(self.H) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3)).clamp(min=1e-4)
        with torch.no_grad():
            self.dt_bias.copy_(dt + torch.log(-torch.expm1(-dt)))
            self.out_proj.weight /= math.sqrt(n_layer)


class Attention(torch.nn.Module):
    """mamba_ssm's MHA(causal=True): in_proj (3 H P, D) with bias, out_proj (D, H P) with bias."""

    def __init__(self, D, H, n_layer):
        super().__init__()
        self.H, self.P = H, D // H
        self.in_proj = torch.nn.Linear(D, 3 * D)
        self.out_proj = torch.nn.Linear(D, D)
        with torch.no_grad():
            self.in_proj.bias.zero_()
            self.out_proj.bias.zero_()
            self.out_proj.weight /= math.sqrt(n_layer)

    def forward(self, u):
        b, l, _ = u.shape
        q, k, v = [t.reshape(b, l, self.H, self.P).transpose(1, 2) for t in self.in_proj(u).chunk(3, -1)]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.P)
        s = s.masked_fill(torch.triu(torch.ones(l, l, dtype=torch.bool), 1), float("-inf"))
        o = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(b, l, self.H * self.P)
        return self.out_proj(o)


class LinearAttention(torch.nn.Module):
    def __init__(self, D, H, P, n_layer):
        super().__init__()
        self.H, self.P = H, P
        self.q_proj, self.k_proj, self.v_proj = [torch.nn.Linear(D, H * P, bias=False) for _ in range(3)]
        self.out_proj = torch.nn.Linear(H * P, D, bias=False)
        with torch.no_grad():
            self.out_proj.weight /= math.sqrt(n_layer)

    def forward(self, u):
        b, l, _ = u.shape
        q, k, v = [m(u).reshape(b, l, self.H, self.P).transpose(1, 2)
                   for m in (self.q_proj, self.k_proj, self.v_proj)]
        s = (q @ k.transpose(-1, -2)) * torch.tril(torch.ones(l, l))
        return self.out_proj((s @ v).transpose(1, 2).reshape(b, l, self.H * self.P))


class LM(torch.nn.Module):
    def __init__(self, a, model_vocab):
        super().__init__()
        V = (model_vocab + 7) // 8 * 8  # mamba_ssm's pad_vocab_size_multiple = 8
        self.emb = torch.nn.Embedding(V, a.d_model)
        torch.nn.init.normal_(self.emb.weight, std=0.02)
        layers = []
        for i in range(a.n_layer):
            if i == a.attention_layer:
                layers.append(Attention(a.d_model, a.attention_heads, a.n_layer))
            elif i == a.linear_attention_layer:
                layers.append(LinearAttention(a.d_model, a.attention_heads, a.linear_head_dim, a.n_layer))
            else:
                layers.append(Mamba2(a.d_model, a.d_state, a.headdim, a.chunk, a.n_layer))
        self.mixers = torch.nn.ModuleList(layers)
        self.norms = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.ones(a.d_model)) for _ in range(a.n_layer + 1)])

    def forward(self, tokens):
        h = self.emb(tokens)
        for mixer, w in zip(self.mixers, self.norms):
            h = h + mixer(rms(h, w))
        return rms(h, self.norms[-1]) @ self.emb.weight.T


def copy_example(gen, vocab, length, reverse=False):
    """`$ s | s .` (or `$ s | reverse(s) .`, stack-order copy) and its mask (0 on `$ s |`, 1 on the
    answer and EOS)."""
    s = torch.randint(0, vocab, (length,), generator=gen).tolist()
    ids = [vocab] + s + [vocab + 1] + (s[::-1] if reverse else s) + [vocab + 2]
    return ids, [0.0] * (length + 2) + [1.0] * (length + 1)


def train_batch(gen, a):
    rows, masks = [], []
    for _ in range(a.batch):
        ids, mask = [], []
        while len(ids) < a.context_len + 1:
            length = int(torch.randint(a.min_len, a.max_len + 1, (1,), generator=gen))
            e, m = copy_example(gen, a.vocab, length, a.reverse)
            if len(ids) + len(e) > a.context_len + 1:  # the overflowing example is cut and not trained on
                m = [0.0] * len(m)
            ids, mask = ids + e, mask + m
        rows.append(ids[:a.context_len + 1])
        masks.append(mask[:a.context_len + 1])
    ids, mask = torch.tensor(rows), torch.tensor(masks)
    return ids[:, :-1], ids[:, 1:], mask[:, 1:]


@torch.no_grad()
def evaluate(model, gen, a, length, n):
    rows = [copy_example(gen, a.vocab, length, a.reverse)[0] for _ in range(n)]
    ids = torch.tensor(rows)
    pred = model(ids[:, :-1]).argmax(-1)
    # Scored: the predictions from '|' through the answer's last-but-one token (EOS not scored).
    cols = slice(length + 1, 2 * length + 1)
    right = pred[:, cols] == ids[:, 1:][:, cols]
    return float(right.all(-1).float().mean()), float(right.float().mean())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--d_model", type=int, default=32)
    p.add_argument("--n_layer", type=int, default=8)
    p.add_argument("--d_state", type=int, default=32)
    p.add_argument("--headdim", type=int, default=16)
    p.add_argument("--chunk", type=int, default=32)
    p.add_argument("--attention_layer", type=int, default=-1, help="index of the softmax-attention layer")
    p.add_argument("--linear_attention_layer", type=int, default=-1,
                   help="index of the linear-attention layer")
    p.add_argument("--attention_heads", type=int, default=1)
    p.add_argument("--linear_head_dim", type=int, default=32)
    p.add_argument("--vocab", type=int, default=26)
    p.add_argument("--reverse", action="store_true", help="stack-order copy (Fig. 4)")
    p.add_argument("--model_vocab", type=int, default=0, help="model vocabulary (0: vocab + 4)")
    p.add_argument("--min_len", type=int, default=5)
    p.add_argument("--max_len", type=int, default=16)
    p.add_argument("--context_len", type=int, default=64)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--weight_decay", type=float, default=0.1)
    p.add_argument("--max_grad_norm", type=float, default=1.0)
    p.add_argument("--eval_lengths", default="16,32")
    p.add_argument("--eval_every", type=int, default=100)
    p.add_argument("--eval_batch", type=int, default=64)
    p.add_argument("--log_every", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_flush_denormal(True)
    torch.manual_seed(a.seed)
    model = LM(a, a.model_vocab or a.vocab + 4)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=a.weight_decay)

    def lr_factor(step):  # mimetic's Schedule::LearningRate (linear warmup from 0, linear decay to 0)
        if step < a.warmup:
            return step / max(1, a.warmup)
        return max(0.0, 1.0 - min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)
    data, evals = torch.Generator().manual_seed(a.seed), torch.Generator().manual_seed(10_000 + a.seed)
    lengths = [int(x) for x in a.eval_lengths.split(",")]
    t0, window = time.time(), []
    for step in range(1, a.steps + 1):
        tokens, targets, mask = train_batch(data, a)
        loss = torch_copy_step.masked_loss(model(tokens), targets, mask)
        opt.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), a.max_grad_norm)
        lr = opt.param_groups[0]["lr"]
        opt.step()
        sched.step()
        window.append(float(loss))
        if step % a.log_every == 0:
            record = {"step": step, "loss": sum(window) / len(window), "last_loss": float(loss), "lr": lr,
                      "grad_norm": float(norm), "s": round(time.time() - t0, 1)}
            print(json.dumps(record), flush=True)
            window = []
        if step % a.eval_every == 0 or step == a.steps:
            out = {"step": step}
            for length in lengths:
                exact, token = evaluate(model, evals, a, length, a.eval_batch)
                out["exact@%d" % length], out["token@%d" % length] = exact, token
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
