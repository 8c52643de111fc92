"""The Triton peer of //mimetic/experiments:ssd_gpu_benchmark (mimetic's CUDA SSD op, Mamba 2).

For each safetensors file that the benchmark wrote (inputs x, dt, A, B, C, D, dt_bias, dy and mimetic's
outputs y, last_state, dx, ddt, dA, dB, dC, dD, ddt_bias; metadata preset, chunk):
  1. a float64 reference on the same inputs, differentiated by autograd with cotangent dy:
       dtp = softplus(dt + dt_bias)                        (identity above 20, as mimetic's ssd.h)
       y   = ssd_minimal(x dtp, A dtp, B, C, chunk) + D x  (tools/bench/torch_scans.py)
       last_state = sum_t exp(sum_{s>t} A dtp_s) dtp_t x_t (x) B_t
  2. relative errors |out - ref| / |ref| (Frobenius) of mimetic's outputs (from the file) and of
     mamba_ssm's Triton kernel mamba_chunk_scan_combined (f32 inputs, dt_softplus=True, D, dt_bias),
  3. Triton's forward and forward + backward time (triton.testing.do_bench, median), and the ratio
     mimetic / Triton when --mimetic_log holds the benchmark's "[ssd] preset=..." lines.
Exits 1 when a mimetic error exceeds --tol (1e-3; f32 against f64 is ~1e-6 here) or is NaN, or a
tensor is missing. Triton's errors (TF32 dots, ~1e-3) are reported, never failed.

  python3 tools/bench/triton_ssd.py --mamba_path DIR [--mimetic_log LOG] ssd_fig1.safetensors ...
  python3 tools/bench/triton_ssd.py --no_triton --device cpu FILE    # the reference check only
DIR holds mamba_ssm (DIR/mamba_ssm/ops/triton/ssd_combined.py); needs torch, triton, einops.
"""
import argparse
import json
import os
import re
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_scans import ssd_minimal  # noqa: E402

INPUTS = ["x", "dt", "A", "B", "C", "D", "dt_bias"]
GRADS = {"dx": "x", "ddt": "dt", "dA": "A", "dB": "B", "dC": "C", "dD": "D", "ddt_bias": "dt_bias"}
OUTPUTS = ["y", "last_state"] + list(GRADS)

_DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32}


def load(path, device):
    """(tensors, metadata) of a safetensors file; the safetensors package when present, else a reader."""
    try:
        from safetensors import safe_open
    except ImportError:
        safe_open = None
    if safe_open is not None:
        with safe_open(path, framework="pt", device="cpu") as f:
            meta = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}
    else:
        with open(path, "rb") as f:
            raw = f.read()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        meta = header.pop("__metadata__", {}) or {}
        data = raw[8 + n:]
        tensors = {}
        for k, v in header.items():
            a, b = v["data_offsets"]
            t = torch.frombuffer(bytearray(data[a:b]), dtype=_DTYPES[v["dtype"]])
            tensors[k] = t.reshape(v["shape"])
    return {k: t.to(device) for k, t in tensors.items()}, meta


def softplus20(z):
    return torch.where(z > 20, z, torch.log1p(torch.exp(torch.clamp(z, max=20))))


def reference(t, chunk):
    """float64 y, last_state and input grads (cotangent dy on y only) of the SSD on t's inputs."""
    leaves = {k: t[k].double().detach().requires_grad_() for k in INPUTS}
    x, dt, A, B, C, D, dt_bias = (leaves[k] for k in INPUTS)
    b, l, h, p = x.shape
    assert B.shape[2] == 1, "the reference takes one group (G = 1)"
    q = chunk if l % chunk == 0 else l  # ssd_minimal needs whole chunks; the result does not depend on q
    dtp = softplus20(dt + dt_bias)  # (b, l, h)
    xd = x * dtp[..., None]  # (b, l, h, p)
    a = A * dtp  # (b, l, h)
    y = ssd_minimal(xd, a, B[:, :, 0], C[:, :, 0], q) + D[:, None] * x
    acs = torch.cumsum(a, dim=1)
    last = torch.einsum("blh,blhp,bln->bhpn", torch.exp(acs[:, -1:] - acs), xd, B[:, :, 0])
    grads = torch.autograd.grad(y, [leaves[k] for k in INPUTS], t["dy"].double())
    out = {"y": y.detach(), "last_state": last.detach()}
    out.update({g: grads[INPUTS.index(name)] for g, name in GRADS.items()})
    return out


def sequential(t):
    """reference()'s results by the recurrence of mimetic/ops/ssd/ssd.h, one step at a time (slow)."""
    leaves = {k: t[k].double().detach().requires_grad_() for k in INPUTS}
    x, dt, A, B, C, D, dt_bias = (leaves[k] for k in INPUTS)
    b, l, h, p = x.shape
    g = B.shape[2]
    hg = h // g
    dtp = softplus20(dt + dt_bias)
    state = torch.zeros(b, h, p, B.shape[3], dtype=torch.float64, device=x.device)
    ys = []
    for s in range(l):
        Bs = B[:, s].repeat_interleave(hg, dim=1)  # (b, h, n)
        Cs = C[:, s].repeat_interleave(hg, dim=1)
        state = torch.exp(dtp[:, s] * A)[..., None, None] * state + \
            (dtp[:, s, :, None] * x[:, s])[..., None] * Bs[:, :, None, :]
        ys.append(torch.einsum("bhpn,bhn->bhp", state, Cs) + D[:, None] * x[:, s])
    y = torch.stack(ys, dim=1)
    grads = torch.autograd.grad(y, [leaves[k] for k in INPUTS], t["dy"].double())
    out = {"y": y.detach(), "last_state": state.detach()}
    out.update({g: grads[INPUTS.index(name)] for g, name in GRADS.items()})
    return out


def relerr(out, ref):
    if out is None:
        return float("nan")
    out = out.double()
    if out.shape != ref.shape:
        return float("nan")
    den = torch.linalg.norm(ref).item()
    num = torch.linalg.norm(out - ref).item()
    return num / den if den > 0 else num


def triton_run(t, chunk, mcsc):
    """Triton's y, last_state and grads (f32) on t's inputs."""
    leaves = {k: t[k].float().detach().clone().requires_grad_() for k in INPUTS}
    x, dt, A, B, C, D, dt_bias = (leaves[k] for k in INPUTS)
    y = mcsc(x, dt, A, B, C, chunk, D=D, dt_bias=dt_bias, dt_softplus=True)
    grads = torch.autograd.grad(y, [leaves[k] for k in INPUTS], t["dy"].float())
    with torch.no_grad():
        _, last = mcsc(x, dt, A, B, C, chunk, D=D, dt_bias=dt_bias, dt_softplus=True,
                       return_final_states=True)
    out = {"y": y.detach(), "last_state": last}
    out.update({g: grads[INPUTS.index(name)] for g, name in GRADS.items()})
    return out


def triton_times(t, chunk, mcsc):
    """Median ms of Triton's forward and forward + backward (triton.testing.do_bench)."""
    import triton.testing

    def bench(fn):
        try:
            return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
        except TypeError:  # older Triton: no return_mode
            return triton.testing.do_bench(fn, warmup=25, rep=100, quantiles=[0.5])

    plain = [t[k].float().contiguous() for k in INPUTS]
    leaves = [v.detach().clone().requires_grad_() for v in plain]
    dy = t["dy"].float().contiguous()

    def fwd():
        with torch.no_grad():
            x, dt, A, B, C, D, dt_bias = plain
            return mcsc(x, dt, A, B, C, chunk, D=D, dt_bias=dt_bias, dt_softplus=True)

    def fwdbwd():
        x, dt, A, B, C, D, dt_bias = leaves
        y = mcsc(x, dt, A, B, C, chunk, D=D, dt_bias=dt_bias, dt_softplus=True)
        return torch.autograd.grad(y, leaves, dy)

    return bench(fwd), bench(fwdbwd)


def _config_cost(cfg):
    cost = 1
    for key, val in cfg.kwargs.items():
        if key.startswith("BLOCK_SIZE_"):
            cost *= val
    return cost * (getattr(cfg, "num_stages", 1) or 1)


def trim_autotune(n):
    """Keeps the n configs of each mamba_ssm Triton autotuner that need the least shared memory (block
    sizes times stages, mamba_ssm's own cost estimate): less compile time, maybe slower kernels. The
    first n (the largest tiles) can all exceed a GPU's shared memory, and a kernel left with no config
    that fits fails (seen on an H100: 492544 bytes asked, 232448 there)."""
    trimmed = 0
    for name, mod in list(sys.modules.items()):
        if not name.startswith("mamba_ssm.ops.triton") or mod is None:
            continue
        for obj in list(vars(mod).values()):
            while obj is not None and not isinstance(obj, type):  # through triton.heuristics wrappers
                configs = getattr(obj, "configs", None)
                if isinstance(configs, list) and hasattr(obj, "run"):
                    if len(configs) > n:
                        obj.configs = sorted(configs, key=_config_cost)[:n]
                        trimmed += 1
                    break
                obj = getattr(obj, "fn", None)
    return trimmed


def mimetic_times(log_path):
    """{preset: (fwd_ms, fwdbwd_ms)} from the benchmark's stdout."""
    times = {}
    if not log_path:
        return times
    with open(log_path) as f:
        for line in f:
            m = re.search(r"\[ssd\] preset=(\S+) .*fwd_ms=([0-9.eE+-]+) fwdbwd_ms=([0-9.eE+-]+)", line)
            if m:
                times[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--mamba_path", default="", help="folder holding mamba_ssm/")
    ap.add_argument("--mimetic_log", default="", help="ssd_gpu_benchmark's stdout, for the ratio")
    ap.add_argument("--no_triton", action="store_true", help="check mimetic against the reference only")
    ap.add_argument("--sequential", action="store_true",
                    help="also check the reference's y and last_state against the step-by-step recurrence")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--max_configs", type=int, default=0,
                    help="keep only the first N autotune configs of each kernel (0: all); saves compile time")
    ap.add_argument("--tol", type=float, default=1e-3, help="largest mimetic relative error that passes")
    args = ap.parse_args()

    mcsc = None
    if not args.no_triton:
        if args.mamba_path:
            sys.path.insert(0, os.path.abspath(args.mamba_path))
        from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined as mcsc
        import triton
        if args.max_configs > 0:
            n = trim_autotune(args.max_configs)
            print(f"autotune: kept the {args.max_configs} cheapest configs (shared memory) of {n} kernels")
        print(f"torch {torch.__version__}, triton {triton.__version__}, "
              f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}")
    mim_ms = mimetic_times(args.mimetic_log)
    failed = False
    for path in args.files:
        t, meta = load(path, args.device)
        preset = meta.get("preset", os.path.basename(path))
        chunk = int(meta.get("chunk", 64))
        missing = [k for k in INPUTS + ["dy"] if k not in t]
        if missing:
            print(f"[ssd_peer] preset={preset} FAILED: {path} lacks inputs {missing}")
            failed = True
            continue
        ref = reference(t, chunk)
        if args.sequential:
            seq = sequential(t)
            worst = max(relerr(ref[k], seq[k]) for k in OUTPUTS)
            print("  reference vs sequential recurrence: " +
                  " ".join(f"{k} {relerr(ref[k], seq[k]):.1e}" for k in OUTPUTS))
            if not worst <= 1e-10:
                print(f"[ssd_peer] preset={preset} FAILED: reference off the recurrence by {worst:.3e}")
                failed = True
        tri = {}
        if mcsc is not None:
            try:
                tri = triton_run(t, chunk, mcsc)
            except Exception as e:  # report mimetic's check all the same
                print(f"  triton FAILED: {type(e).__name__}: {e}")
        print(f"  {'tensor':<11} {'shape':<22} {'|ref|':>11} {'mimetic':>11} {'triton':>11}")
        err_m, err_t = {}, {}
        for k in OUTPUTS:
            err_m[k] = relerr(t.get(k), ref[k])
            err_t[k] = relerr(tri.get(k), ref[k]) if tri else float("nan")
            flag = "" if err_m[k] <= args.tol else "  <- FAIL" + (" (missing)" if k not in t else "")
            print(f"  {k:<11} {str(tuple(ref[k].shape)):<22} {torch.linalg.norm(ref[k]).item():>11.4e} "
                  f"{err_m[k]:>11.3e} {err_t[k]:>11.3e}{flag}")
        bad = [k for k in OUTPUTS if not err_m[k] <= args.tol]  # NaN fails too
        failed |= bool(bad)
        grads = list(GRADS)
        max_m = max(err_m[k] if err_m[k] == err_m[k] else float("inf") for k in grads)
        max_t = float("nan")
        if tri:
            max_t = max(err_t[k] if err_t[k] == err_t[k] else float("inf") for k in grads)
        if tri and not all(torch.isfinite(v).all().item() for v in tri.values()):
            print("  triton: NON-FINITE values in its outputs")
        line = f"[ssd_peer] preset={preset}"
        fwd = fwdbwd = None
        if tri:
            try:
                fwd, fwdbwd = triton_times(t, chunk, mcsc)
                line += f" triton_fwd_ms={fwd:.4f} triton_fwdbwd_ms={fwdbwd:.4f}"
            except Exception as e:
                print(f"  triton timing FAILED: {type(e).__name__}: {e}")
        line += (f" relerr_mimetic_y={err_m['y']:.3e} relerr_triton_y={err_t['y']:.3e}"
                 f" max_relerr_mimetic_grads={max_m:.3e} max_relerr_triton_grads={max_t:.3e}")
        if mcsc is not None and not tri:
            line += " triton=FAILED"
        if bad:
            line += f" FAILED({','.join(bad)})"
        print(line)
        if fwd is not None and preset in mim_ms:
            mf, mfb = mim_ms[preset]
            print(f"[ssd_ratio] preset={preset} mimetic_fwd_ms={mf:.4f} triton_fwd_ms={fwd:.4f} "
                  f"fwd_ratio={mf / fwd:.2f} mimetic_fwdbwd_ms={mfb:.4f} triton_fwdbwd_ms={fwdbwd:.4f} "
                  f"fwdbwd_ratio={mfb / fwdbwd:.2f} (mimetic / triton)")
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
