#!/usr/bin/python3
"""Reads a finished mimetic run with other people's readers, on the GPU machine of the GPU check.

For each point directory under RUN_DIR (one holding checkpoints/):
  1. TensorBoard: EventAccumulator reads tb/<run>/ and lists its scalar tags and event counts.
  2. safetensors: safetensors.torch.load_file reads the newest checkpoints/step_*.safetensors; its
     metadata must say format "mimetic-checkpoint-1".
  3. mamba_ssm names: the parameters, renamed as mamba_ssm's MambaLMHeadModel names them
     ("layers/0/mixer/A_log" -> "backbone.layers.0.mixer.A_log", the tied "lm_head.weight" added), load
     with load_state_dict(strict=True) into a module tree of mamba_ssm's Mamba 2 names and shapes.
  4. An independent forward: tools/golden/make_golden.py's plain-PyTorch Mamba 2 (float64, on the GPU)
     with the loaded weights predicts fresh copy examples; its exact-match accuracy at each eval length
     is printed beside the run's own final evaluation (metrics.jsonl), which it should match within
     sampling noise (different strings).

  python3 tools/gpu/check_readers.py RUN_DIR [--examples 64]
Exit status 1 when a reader fails or the state dict does not load.
"""
import argparse
import glob
import json
import os
import re
import sys

import torch

DEVICE = "cuda"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "golden"))


def mamba_ssm_name(path):
    if path.startswith("lm_head/"):
        return path.replace("/", ".")
    return "backbone." + path.replace("/", ".")


def a_log_scales(spec, params):
    """{A_log tensor name: a_log_scale} from a single-line ModelSpec text: one value per `layers { }`
    block where the spec lists layers, else default_layer's for every layer, else 1."""
    names = sorted((k for k in params if k.endswith("/A_log")), key=lambda k: int(k.split("/")[1]))
    blocks = re.split(r"\blayers \{", spec)[1:]
    if blocks:
        values = [float(m.group(1)) if m else 1.0
                  for m in (re.search(r"a_log_scale: ([-+0-9.eE]+)", b) for b in blocks)]
    else:
        m = re.search(r"a_log_scale: ([-+0-9.eE]+)", spec)
        values = [float(m.group(1)) if m else 1.0] * len(names)
    if len(values) != len(names):
        raise ValueError("model_spec lists %d layers, the checkpoint has %d A_log" % (len(values), len(names)))
    return dict(zip(names, values))


def mamba2_lm_skeleton(sd):
    """A module tree with mamba_ssm's names (models/mixer_seq_simple.py, modules/mamba2.py), sized
    from the state dict's embedding and in_proj shapes."""
    nn = torch.nn
    V, D = sd["backbone.embedding.weight"].shape
    n_layer = 1 + max(int(m.group(1)) for k in sd for m in [re.match(r"backbone\.layers\.(\d+)\.", k)] if m)

    class Mixer(nn.Module):
        def __init__(self, i):
            super().__init__()
            pre = "backbone.layers.%d.mixer." % i
            H = sd[pre + "A_log"].shape[0]
            E = sd[pre + "out_proj.weight"].shape[1]
            conv_dim, _, K = sd[pre + "conv1d.weight"].shape
            self.in_proj = nn.Linear(D, sd[pre + "in_proj.weight"].shape[0], bias=False)
            self.conv1d = nn.Conv1d(conv_dim, conv_dim, K, groups=conv_dim, padding=K - 1)
            self.dt_bias = nn.Parameter(torch.empty(H))
            self.A_log = nn.Parameter(torch.empty(H))
            self.D = nn.Parameter(torch.empty(H))
            self.norm = nn.Module()
            self.norm.weight = nn.Parameter(torch.empty(E))
            self.out_proj = nn.Linear(E, D, bias=False)

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            self.norm = nn.Module()
            self.norm.weight = nn.Parameter(torch.empty(D))
            self.mixer = Mixer(i)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Module()
            self.backbone.embedding = nn.Embedding(V, D)
            self.backbone.layers = nn.ModuleList([Block(i) for i in range(n_layer)])
            self.backbone.norm_f = nn.Module()
            self.backbone.norm_f.weight = nn.Parameter(torch.empty(D))
            self.lm_head = nn.Linear(D, V, bias=False)

    return LM(), n_layer


def copy_accuracy(p, model, length, n, vocab=26, seed=0):
    """Exact-match accuracy of teacher-forced greedy predictions on `$ s | s .` (tokens.h's layout)."""
    import make_golden
    g = torch.Generator(device="cpu").manual_seed(seed)
    s = torch.randint(0, vocab, (n, length), generator=g, device="cpu")
    bos, sep, eos = [torch.full((n, 1), vocab + i, device="cpu") for i in range(3)]
    tokens = torch.cat([bos, s, sep, s, eos], 1).to(DEVICE)
    with torch.no_grad():
        logits = make_golden.forward(p, model, tokens)  # (n, 2l+3, V)
    pred = logits[:, length + 1:2 * length + 1, :vocab + 4].argmax(-1)  # after '|' .. the last letter
    right = pred == tokens[:, length + 2:2 * length + 2]
    return right.all(-1).double().mean().item(), right.double().mean().item()


def last_eval(point):
    last = {}
    with open(os.path.join(point, "metrics.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            for k, v in rec.items():
                if k.startswith("eval/exact@") or k.startswith("eval/token@"):
                    length = int(k.split("@")[1])
                    last.setdefault(length, {})[k.split("/")[1].split("@")[0]] = v
    return last


def check_point(point, examples):
    from safetensors import safe_open
    from safetensors.torch import load_file
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    ok = True
    for run in sorted(glob.glob(os.path.join(point, "tb", "**", "events.out.tfevents.*"), recursive=True)):
        acc = EventAccumulator(os.path.dirname(run))
        acc.Reload()
        tags = acc.Tags()["scalars"]
        counts = {t: len(acc.Scalars(t)) for t in tags}
        print("  tensorboard %s: %d scalar tags %s" % (os.path.relpath(run, point), len(tags), counts))
        ok = ok and len(tags) > 0
    ckpts = sorted(glob.glob(os.path.join(point, "checkpoints", "step_*.safetensors")))
    if not ckpts:
        print("  FAIL: no checkpoint")
        return False
    tensors = load_file(ckpts[-1], device=DEVICE)
    with safe_open(ckpts[-1], "pt") as f:
        meta = f.metadata()
    print("  safetensors %s: %d tensors, metadata format=%s step=%s" %
          (os.path.basename(ckpts[-1]), len(tensors), meta.get("format"), meta.get("step")))
    ok = ok and meta.get("format") == "mimetic-checkpoint-1"
    params = {k: v for k, v in tensors.items() if not k.startswith("opt/")}
    # mimetic's A = -exp(a_log_scale A_log) (the mimetic init sets a_log_scale = -c in the model spec,
    # which the checkpoint's metadata "model_spec" records); mamba_ssm's A = -exp(A_log).
    scales = a_log_scales(meta.get("model_spec", ""), params)
    for name, scale in scales.items():
        params[name] = params[name] * scale
    print("  A_log scales from the checkpoint's model_spec: %s" % sorted(set(scales.values())))
    sd = {mamba_ssm_name(k): v for k, v in params.items()}
    sd.setdefault("lm_head.weight", sd["backbone.embedding.weight"])  # tied, as mamba_ssm ties them
    lm, n_layer = mamba2_lm_skeleton(sd)
    try:
        lm.load_state_dict(sd, strict=True)
        print("  load_state_dict(strict=True) into mamba_ssm names: OK (%d tensors, %d layers)" % (len(sd), n_layer))
    except RuntimeError as e:
        print("  FAIL load_state_dict: %s" % e)
        return False
    p = {k: v.double() for k, v in params.items()}
    cfg0 = "layers/0/mixer/"
    H = p[cfg0 + "A_log"].shape[0]
    E = p[cfg0 + "out_proj/weight"].shape[1]
    N = (p[cfg0 + "conv1d/weight"].shape[0] - E) // 2
    layer = {"kind": "mamba2", "E": E, "N": N, "P": E // H, "H": H, "G": 1, "norm_eps": 1e-5, "a_log_scale": 1.0}
    model = {"layers": [layer] * n_layer, "norm": "rms", "eps": 1e-5, "d_intermediate": 0}
    run_eval = last_eval(point)
    for length in sorted(run_eval):
        exact, token = copy_accuracy(p, model, length, examples)
        print("  independent forward at %d: exact %.3f token %.3f (%d fresh strings); the run's last eval:"
              " exact %.3f token %.3f" % (length, exact, token, examples, run_eval[length].get("exact", -1),
                                           run_eval[length].get("token", -1)))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir")
    ap.add_argument("--examples", type=int, default=64)
    ap.add_argument("--device", default="cuda", help="where the forward runs (cpu for a check without a GPU)")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    if hasattr(torch, "set_default_device"):  # torch >= 2.0; make_golden's loops allocate on it
        torch.set_default_device(DEVICE)
    points = sorted({os.path.dirname(os.path.dirname(c)) for c in
                     glob.glob(os.path.join(args.run_dir, "**", "checkpoints", "step_*.safetensors"), recursive=True)})
    if not points:
        print("check_readers: no checkpoints under %s" % args.run_dir)
        return 1
    ok = True
    for point in points:
        print("[readers] %s" % os.path.relpath(point, args.run_dir))
        ok = check_point(point, args.examples) and ok
    print("[readers] %s" % ("all readers OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
