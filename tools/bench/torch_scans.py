"""Plain-PyTorch scan cores for the speed peer (tools/bench/torch_copy_step.py): the strongest CPU forms
we could write for each block, and the straightforward references they are checked against.

Mamba 1 (selective scan, without the D skip): f(x, delta, A, B, C) -> y with
  x, delta (b, l, e), A (e, n), B, C (b, l, n), y (b, l, e);
  h_t = exp(delta_t A) h_{t-1} + delta_t x_t B_t,  y_t = h_t C_t.
  loop:  mamba_ssm's selective_scan_ref, a per-step loop differentiated by autograd (the reference).
  fused: the same loop as one autograd.Function with a hand-written backward (a reverse loop): each
         step forms its decay and input in cache, only the states are stored, and autograd records
         one node instead of ~3 per step.
  pscan: a work-efficient parallel scan (pairwise combine, recurse on half the length, expand) over
         time, log2(l) levels of whole-tensor ops, as an autograd.Function whose backward is the same
         scan run backwards in time.

Mamba 2 (SSD core, without the D skip): f(X, A, B, C, chunk) -> Y with
  X (b, l, h, p) already multiplied by dt, A (b, l, h) = A dt, B, C (b, l, n) shared by all heads.
  ssd_minimal: mamba_ssm's ssd_minimal_discrete (mamba_ssm/modules/ssd_minimal.py) with B and C
               expanded to every head (the reference).
  ssd_chunked: the same chunked algorithm with B and C kept per group (one group), so C B^T is formed
               once per chunk instead of once per head, and every einsum a single pairwise contraction.
  quadratic:   the exact masked-attention form Y = (L o C B^T) X with L[t, s] = exp(sum_{s<r<=t} A_r),
               O(l^2) but a few large matmuls, cheap at l = 128.

  y = SCANS["pscan"](x, delta, A, B, C)
"""
import torch
import torch.nn.functional as F


# ----------------------------------------------------------------------------------------------------
# Mamba 1


def scan_loop(x, delta, A, B, C):
    dA = torch.exp(delta[..., None] * A)  # (b, l, e, n)
    dBx = delta[..., None] * B[:, :, None, :] * x[..., None]  # (b, l, e, n)
    h = torch.zeros_like(dA[:, 0])
    ys = []
    # unbind rather than dA[:, t] slicing, whose backward would materialise a full-size zero gradient
    # per step (an easy 50x slowdown on CPU).
    for dA_t, dBx_t, C_t in zip(dA.unbind(1), dBx.unbind(1), C.unbind(1)):
        h = dA_t * h + dBx_t
        ys.append(torch.einsum("bdn,bn->bd", h, C_t))
    return torch.stack(ys, 1)


class FusedScan(torch.autograd.Function):
    """The per-step loop in time-major layout (l, b, e, n): each step computes its own decay and input
    (b, e, n) while they are in cache instead of materialising (l, b, e, n) tensors of them; only the
    states are kept. The backward is a reverse loop that recomputes each step's decay and adds up the
    parameter gradients step by step."""

    @staticmethod
    def forward(ctx, x, delta, A, B, C):
        xt, dt = x.transpose(0, 1).contiguous(), delta.transpose(0, 1).contiguous()  # (l, b, e)
        Bt, Ct = B.transpose(0, 1).contiguous(), C.transpose(0, 1).contiguous()  # (l, b, n)
        dtx = dt * xt
        hs = torch.empty(*xt.shape, A.shape[1], dtype=x.dtype, device=x.device)  # (l, b, e, n)
        for t in range(hs.shape[0]):
            if t == 0:
                torch.mul(dtx[0, :, :, None], Bt[0, :, None, :], out=hs[0])
            else:
                torch.mul(torch.exp(dt[t, :, :, None] * A), hs[t - 1], out=hs[t])
                hs[t].addcmul_(dtx[t, :, :, None], Bt[t, :, None, :])
        y = torch.matmul(hs, Ct[..., None]).squeeze(-1)  # (l, b, e)
        ctx.save_for_backward(xt, dt, A, Bt, Ct, hs)
        return y.transpose(0, 1)

    @staticmethod
    def backward(ctx, gy):
        xt, dt, A, Bt, Ct, hs = ctx.saved_tensors
        gyt = gy.transpose(0, 1).contiguous()  # (l, b, e)
        dC = torch.matmul(gyt[..., None, :], hs).squeeze(-2)  # (l, b, n)
        dtx = dt * xt
        g_x, g_delta, g_B = torch.empty_like(xt), torch.empty_like(xt), torch.empty_like(Bt)
        g_A = torch.zeros_like(A)
        gh, dA_next = None, None  # dL/dh_t, carried backwards; the decay of step t + 1
        for t in range(xt.shape[0] - 1, -1, -1):
            direct = gyt[t, :, :, None] * Ct[t, :, None, :]  # (b, e, n)
            gh = direct if gh is None else direct.addcmul_(dA_next, gh)
            gh_B = torch.matmul(gh, Bt[t, :, :, None]).squeeze(-1)  # (b, e): sum_n gh B
            torch.mul(gh_B, dt[t], out=g_x[t])
            torch.matmul(dtx[t, :, None, :], gh, out=g_B[t, :, None, :])
            if t > 0:
                dA = torch.exp(dt[t, :, :, None] * A)
                s = gh * hs[t - 1] * dA  # d/d(delta A) of step t
                g_delta[t] = (s * A).sum(-1) + gh_B * xt[t]
                g_A += torch.einsum("ben,be->en", s, dt[t])
                dA_next = dA
            else:
                g_delta[t] = gh_B * xt[t]
        return (g_x.transpose(0, 1), g_delta.transpose(0, 1), g_A, g_B.transpose(0, 1),
                dC.transpose(0, 1))


def scan_fused(x, delta, A, B, C):
    return FusedScan.apply(x, delta, A, B, C)


def _linear_scan(a, x):
    """h_t = a_t h_{t-1} + x_t over dim 0 (h_{-1} = 0): combine neighbours pairwise, scan the half
    length recursively (it yields h at odd t), then fill in even t; O(l) work in log2(l) levels."""
    n = x.shape[0]
    if n == 1:
        return x.clone()
    if n % 2:
        h = _linear_scan(a[:-1], x[:-1])
        return torch.cat([h, torch.addcmul(x[-1:], a[-1:], h[-1:])])
    a0, a1, x0, x1 = a[0::2], a[1::2], x[0::2], x[1::2]
    h_odd = _linear_scan(a1 * a0, torch.addcmul(x1, a1, x0))
    h = torch.empty_like(x)
    h[1::2] = h_odd
    h[0] = x0[0]
    torch.addcmul(x0[1:], a0[1:], h_odd[:-1], out=h[2::2])
    return h


class PScan(torch.autograd.Function):
    """h = _linear_scan(a, x) over time (dim 0); the backward is a scan backwards in time:
    g_t = gh_t + a_{t+1} g_{t+1}, dx = g, da_t = g_t h_{t-1}."""

    @staticmethod
    def forward(ctx, a, x):
        h = _linear_scan(a, x)
        ctx.save_for_backward(a, h)
        return h

    @staticmethod
    def backward(ctx, gh):
        a, h = ctx.saved_tensors
        a_next = torch.cat([a[1:], torch.zeros_like(a[:1])]).flip(0)
        g = _linear_scan(a_next, gh.flip(0)).flip(0)
        ga = torch.zeros_like(a)
        torch.mul(g[1:], h[:-1], out=ga[1:])
        return ga, g


def scan_pscan(x, delta, A, B, C):
    xt, dt = x.transpose(0, 1), delta.transpose(0, 1)  # (l, b, e)
    Bt, Ct = B.transpose(0, 1), C.transpose(0, 1)  # (l, b, n)
    dA = torch.exp(dt[..., None] * A)  # (l, b, e, n)
    dBx = (dt * xt)[..., None] * Bt[:, :, None, :]
    h = PScan.apply(dA, dBx)
    return torch.matmul(h, Ct[..., None]).squeeze(-1).transpose(0, 1)


# ----------------------------------------------------------------------------------------------------
# Mamba 2


def _segsum(x):
    """Stable segment sums of x (..., T): out[..., i, j] = sum_{j<k<=i} x_k for j <= i, -inf above."""
    T = x.size(-1)
    x = x[..., None].repeat(*([1] * x.dim()), T)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), -1)
    x = x.masked_fill(~mask, 0)
    s = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=x.device), 0)
    return s.masked_fill(~mask, -torch.inf)


def ssd_minimal(X, A, B, C, block_len):
    """mamba_ssm's ssd_minimal_discrete with B, C (b, l, n) expanded to (b, l, h, n)."""
    b, l, h, p = X.shape
    B = B[:, :, None, :].expand(b, l, h, B.shape[-1])
    C = C[:, :, None, :].expand(b, l, h, C.shape[-1])
    X, A, B, C = [t.reshape(b, l // block_len, block_len, *t.shape[2:]) for t in (X, A, B, C)]
    A = A.permute(0, 3, 1, 2)  # b h c l
    A_cumsum = torch.cumsum(A, dim=-1)
    L = torch.exp(_segsum(A))
    Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C, B, L, X)
    decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B, decay_states, X)
    initial_states = torch.zeros_like(states[:, :1])
    states = torch.cat([initial_states, states], dim=1)
    decay_chunk = torch.exp(_segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    states = new_states[:, :-1]
    state_decay_out = torch.exp(A_cumsum)
    Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", C, states, state_decay_out)
    return (Y_diag + Y_off).reshape(b, l, h, p)


def ssd_chunked(X, A, B, C, block_len):
    b, l, h, p = X.shape
    c, q, n = l // block_len, block_len, B.shape[-1]
    X = X.reshape(b, c, q, h, p)
    B, C = B.reshape(b, c, q, n), C.reshape(b, c, q, n)
    A_cs = torch.cumsum(A.reshape(b, c, q, h).permute(0, 3, 1, 2), dim=-1)  # (b, h, c, q)
    # Within a chunk the cumulative sums are small, so their differences are exact enough.
    seg = (A_cs[..., :, None] - A_cs[..., None, :])  # (b, h, c, q, q)
    causal = torch.tril(torch.ones(q, q, dtype=torch.bool, device=X.device))
    M = torch.exp(seg.masked_fill(~causal, -torch.inf)) * torch.matmul(C, B.transpose(-1, -2))[:, None]
    Xh = X.permute(0, 3, 1, 2, 4)  # (b, h, c, q, p)
    Y_diag = torch.matmul(M, Xh)  # (b, h, c, q, p)
    decay_states = torch.exp(A_cs[..., -1:] - A_cs)  # (b, h, c, q)
    states = torch.matmul((Xh * decay_states[..., None]).transpose(-1, -2), B[:, None])  # (b, h, c, p, n)
    states = torch.cat([torch.zeros_like(states[:, :, :1]), states], dim=2)
    decay_chunk = torch.exp(_segsum(F.pad(A_cs[..., -1], (1, 0))))  # (b, h, c+1, c+1)
    states = torch.matmul(decay_chunk, states.reshape(b, h, c + 1, p * n)).reshape(b, h, c + 1, p, n)
    Y_off = torch.matmul(C[:, None], states[:, :, :-1].transpose(-1, -2)) * torch.exp(A_cs)[..., None]
    return (Y_diag + Y_off).permute(0, 2, 3, 1, 4).reshape(b, l, h, p)


def ssd_quadratic(X, A, B, C, block_len=None):
    b, l, h, p = X.shape
    A_cs = torch.cumsum(A, dim=1).transpose(1, 2)  # (b, h, l)
    causal = torch.tril(torch.ones(l, l, dtype=torch.bool, device=X.device))
    L = torch.exp((A_cs[..., :, None] - A_cs[..., None, :]).masked_fill(~causal, -torch.inf))
    M = L * torch.matmul(C, B.transpose(1, 2))[:, None]  # (b, h, l, l)
    return torch.matmul(M, X.transpose(1, 2)).transpose(1, 2)


SCANS = {"loop": scan_loop, "fused": scan_fused, "pscan": scan_pscan}
SSDS = {"ssd_minimal": ssd_minimal, "ssd_chunked": ssd_chunked, "quadratic": ssd_quadratic}
REFERENCE = {"mamba1": "loop", "mamba2": "ssd_minimal"}


def _self_check():
    """Every core against its reference in float64 on small odd-sized shapes (outputs and gradients)."""
    torch.manual_seed(0)
    torch.set_default_dtype(torch.float64)
    b, l, e, n = 2, 37, 6, 4  # odd l exercises pscan's odd-length path
    args = [torch.randn(b, l, e), F.softplus(torch.randn(b, l, e) - 1), -3 * torch.rand(e, n),
            torch.randn(b, l, n), torch.randn(b, l, n)]
    cases = [(SCANS, "loop", args, (), torch.randn(b, l, e))]
    b, l, h, p, n = 2, 64, 3, 4, 5
    args = [torch.randn(b, l, h, p), -torch.rand(b, l, h), torch.randn(b, l, n), torch.randn(b, l, n)]
    cases.append((SSDS, "ssd_minimal", args, (16,), torch.randn(b, l, h, p)))
    for table, ref, args, extra, gy in cases:
        outs = {}
        for name, f in table.items():
            leaves = [t.clone().requires_grad_() for t in args]
            y = f(*leaves, *extra)
            outs[name] = [y] + list(torch.autograd.grad(y, leaves, gy))
        for name, got in outs.items():
            err = max(float((g - r).abs().max()) for g, r in zip(got, outs[ref]))
            print(f"{name:12s} vs {ref}: max abs error {err:.1e}")
            assert err < 1e-10, name


if __name__ == "__main__":
    _self_check()
