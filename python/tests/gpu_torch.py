"""GPU checks of the Python package (issue 5), as one script: exits 77 (skipped) without
torch or a CUDA device. Writes its measurements as JSON to argv[1] when given.

1. The torch functions against float64 PyTorch references of the same formulas (SPEC §3),
   forward and gradients (relative error ‖out − ref‖ / ‖ref‖ ≤ 1e-5 float32, 1e-2 float16/bfloat16).
2. A LongformerModel of the longformer-base-4096 configuration (random weights), unpatched
   and patched (bandjit.hf), on 4096 tokens with global tokens and padding: outputs and
   every parameter's gradient after one loss.backward, float32 and float16.
3. Times (CUDA-event medians): the model's forward and forward+backward, one layer's
   LongformerSelfAttention forward, and its attention part (that forward minus its three
   Q/K/V projections, timed alone), unpatched and patched.
"""
import json
import math
import sys

try:
    import torch
except ImportError:
    print("skipped: torch is not installed")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device")
    sys.exit(77)

import bandjit
import bandjit.torch as bt

TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 1e-2}
failures = []
results = {"functions": [], "longformer": [], "timings": {}}


def rel(out, ref):
    out, ref = out.double(), ref.double()
    finite = torch.isfinite(ref)
    if not torch.equal(finite, torch.isfinite(out)):
        return math.inf
    num = (out[finite] - ref[finite]).norm().item()
    den = ref[finite].norm().item()
    return num / den if den > 0 else num


def expect(name, err, tol, group="functions"):
    ok = err <= tol
    print(f"{'PASS' if ok else 'FAIL'} {name}: rel {err:.2e} (tol {tol:.0e})")
    results[group].append({"name": name, "rel_error": err, "tolerance": tol, "passed": ok})
    if not ok:
        failures.append(name)


# -- float64 references of SPEC §3 (bnhd) -------------------------------------------------

def key_index(n, wl, wr, dil, heads, device):
    """[H, N, C] key index and validity for each head's dilation."""
    dil = [dil] * heads if isinstance(dil, int) else dil
    i = torch.arange(n, device=device)[:, None]
    j = torch.arange(wl + wr + 1, device=device)[None, :]
    keys = torch.stack([i + d * (j - wl) for d in dil])
    return keys.clamp(0, n - 1), (keys >= 0) & (keys < n)


def ref_qk(q, k, wl, wr, dil, scale):
    b, n, h, d = q.shape
    keys, valid = key_index(n, wl, wr, dil, h, q.device)
    kg = k.permute(0, 2, 1, 3)[:, torch.arange(h)[:, None, None], keys]  # [B, H, N, C, D]
    s = torch.einsum("bnhd,bhncd->bnhc", q, kg) * scale
    return s.masked_fill(~valid.permute(1, 0, 2)[None], -math.inf)


def ref_softmax(s, wl, wr, dil, scale, mask):
    b, n, h, c = s.shape
    allowed = torch.isfinite(s)
    x = s * scale
    if mask is not None:
        keys, _ = key_index(n, wl, wr, dil, h, s.device)
        m = mask[:, keys].permute(0, 2, 1, 3)  # [B, N, H, C]
        if mask.dtype == torch.bool:
            allowed = allowed & m
        else:  # additive: added; a negative value removes the key
            allowed = allowed & (m >= 0)
            x = x + m.double()
    any_allowed = allowed.any(-1, keepdim=True)
    # Rows without an allowed key give zeros (SPEC §3.2); keep them finite for autograd.
    x = torch.where(allowed, x, torch.full_like(s, -math.inf))
    x = torch.where(any_allowed, x, torch.zeros_like(x))
    return torch.softmax(x, dim=-1) * (allowed & any_allowed)


def ref_pv(p, v, wl, wr, dil):
    b, n, h, d = v.shape
    keys, valid = key_index(n, wl, wr, dil, h, v.device)
    vg = v.permute(0, 2, 1, 3)[:, torch.arange(h)[:, None, None], keys]  # [B, H, N, C, D]
    pm = p.masked_fill(~valid.permute(1, 0, 2)[None], 0.0)
    return torch.einsum("bnhc,bhncd->bnhd", pm, vg)


def check_functions():
    torch.manual_seed(0)
    cases = [dict(b=2, n=300, h=3, d=32, wl=17, wr=5, dil=1), dict(b=1, n=257, h=3, d=64, wl=9, wr=0, dil=[1, 2, 3]),
             dict(b=2, n=128, h=2, d=16, wl=4, wr=6, dil=2)]
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for c in cases:
            name = f"{str(dtype)[6:]} b{c['b']} n{c['n']} h{c['h']} d{c['d']} wl{c['wl']} wr{c['wr']} dil{c['dil']}"
            q, k, v = (torch.randn(c["b"], c["n"], c["h"], c["d"], device="cuda", dtype=torch.float64) / 2
                       for _ in range(3))
            mask = torch.rand(c["b"], c["n"], device="cuda") > 0.2
            scale = 1 / math.sqrt(c["d"])
            args = (c["wl"], c["wr"], c["dil"])
            # Forward and gradients of each function and the composition, against float64 autograd.
            qx, kx, vx = (t.to(dtype).requires_grad_() for t in (q, k, v))
            qr, kr, vr = (t.to(dtype).double().requires_grad_() for t in (q, k, v))
            s = bt.band_qk(qx, kx, *args, scale=1.0)
            s_ref = ref_qk(qr, kr, *args, 1.0)
            expect(f"band_qk {name}", rel(s, s_ref), TOL[dtype])
            p = bt.band_softmax(s, *args, scale=scale, key_mask=mask, head_dim=c["d"])
            p_ref = ref_softmax(s_ref, *args, scale, mask)
            expect(f"band_softmax {name}", rel(p, p_ref), TOL[dtype])
            o = bt.band_pv(p, vx, *args)
            o_ref = ref_pv(p_ref, vr, *args)
            expect(f"band_pv {name}", rel(o, o_ref), TOL[dtype])
            do = torch.randn_like(o_ref)
            o.backward(do.to(dtype))
            o_ref.backward(do)
            for t, r, g in ((qx, qr, "dq"), (kx, kr, "dk"), (vx, vr, "dv")):
                expect(f"chain {g} {name}", rel(t.grad, r.grad), TOL[dtype])
            # The composed attention.
            qa, ka, va = (t.to(dtype).requires_grad_() for t in (q, k, v))
            oa = bt.sliding_window_attention(qa, ka, va, *args, scale=scale, key_mask=mask)
            qr2, kr2, vr2 = (t.to(dtype).double().requires_grad_() for t in (q, k, v))
            oa_ref = ref_pv(ref_softmax(ref_qk(qr2, kr2, *args, 1.0), *args, scale, mask), vr2, *args)
            expect(f"attention {name}", rel(oa, oa_ref), TOL[dtype])
            oa.backward(do.to(dtype))
            oa_ref.backward(do)
            for t, r, g in ((qa, qr2, "dq"), (ka, kr2, "dk"), (va, vr2, "dv")):
                expect(f"attention {g} {name}", rel(t.grad, r.grad), TOL[dtype])
        # bhnd layout, an additive mask (HF's -10000 = removed, other values added) and a
        # non-contiguous q (copied by the function), through the composed attention.
        b, n, h, d, wl, wr, dil = 2, 200, 4, 32, 11, 7, [1, 3, 1, 2]
        name = f"{str(dtype)[6:]} bhnd additive-mask non-contiguous-q"
        q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.float64) / 2 for _ in range(3))
        add = torch.randn(b, n, device="cuda", dtype=torch.float64).abs() * 0.5
        add[torch.rand(b, n, device="cuda") < 0.2] = -10000.0
        qa, ka, va = (t.to(dtype).transpose(1, 2).contiguous().requires_grad_() for t in (q, k, v))
        q_view = qa.transpose(1, 2).contiguous().transpose(1, 2)  # same values, bhnd shape, not contiguous
        oa = bt.sliding_window_attention(q_view, ka, va, wl, wr, dil, scale=0.2, key_mask=add, layout="bhnd")
        qr, kr, vr = (t.to(dtype).double().requires_grad_() for t in (q, k, v))
        oa_ref = ref_pv(ref_softmax(ref_qk(qr, kr, wl, wr, dil, 1.0), wl, wr, dil, 0.2, add), vr, wl, wr, dil)
        expect(f"attention {name}", rel(oa.transpose(1, 2), oa_ref), TOL[dtype])
        do = torch.randn_like(oa_ref)
        oa.backward(do.to(dtype).transpose(1, 2))
        oa_ref.backward(do)
        for t, r, g in ((qa, qr, "dq"), (ka, kr, "dk"), (va, vr, "dv")):
            expect(f"attention {g} {name}", rel(t.grad.transpose(1, 2), r.grad), TOL[dtype])


class DLPackOnly:
    """A tensor from "another library": only the DLPack protocol, no torch.Tensor type."""

    def __init__(self, t):
        self._t = t

    def __dlpack__(self, **kwargs):
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


def check_dlpack():
    q, k = (torch.randn(1, 64, 2, 16, device="cuda", dtype=torch.float16) for _ in range(2))
    s = bt.band_qk(DLPackOnly(q), DLPackOnly(k), 3, 2)
    expect("band_qk through DLPack equals the torch call", 0.0 if torch.equal(s, bt.band_qk(q, k, 3, 2)) else math.inf, 0.0)


def event_median(fn, warmup=3, runs=10):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000)
    return sorted(times)[len(times) // 2]


def check_longformer():
    try:
        from transformers import LongformerConfig, LongformerModel
    except ImportError:
        print("transformers is not installed: the Longformer checks are skipped")
        results["longformer"].append({"name": "skipped: transformers not installed", "passed": False})
        failures.append("transformers not installed")
        return
    import bandjit.hf

    config = LongformerConfig(attention_window=512, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                              intermediate_size=3072, max_position_embeddings=4098, vocab_size=50265, pad_token_id=1,
                              type_vocab_size=1, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(1)
    n = 4096
    ids = torch.randint(3, 50000, (2, n), device="cuda")
    attention = torch.ones(2, n, dtype=torch.long, device="cuda")
    attention[1, -300:] = 0  # padding in the second sequence
    ids[1, -300:] = config.pad_token_id
    global_mask = torch.zeros_like(attention)
    global_mask[:, [0, 7, 1000]] = 1
    for dtype in (torch.float32, torch.float16):
        tag = str(dtype)[6:]
        model = LongformerModel(config).to("cuda", dtype).train()
        head = torch.randn(768, device="cuda", dtype=dtype)

        def step():
            model.zero_grad(set_to_none=True)
            out = model(input_ids=ids, attention_mask=attention, global_attention_mask=global_mask).last_hidden_state
            (out.float() @ head.float()).pow(2).mean().backward()
            return out.detach(), {k: p.grad.detach().clone() for k, p in model.named_parameters() if p.grad is not None}

        out_ref, grads_ref = step()
        assert bandjit.hf.patch_longformer(model) == 12
        out, grads = step()
        bound = 1e-4 if dtype == torch.float32 else 1e-2
        keep = attention.bool()[..., None].expand_as(out)  # padded positions are not compared (HF leaves them arbitrary)
        expect(f"longformer {tag} output", rel(out[keep], out_ref[keep]), bound, "longformer")
        # Per parameter ‖Δ‖/‖g_ref‖. The key biases' gradients are zero in exact arithmetic
        # (softmax is shift-invariant), so theirs are rounding noise in both runs: those with
        # ‖g_ref‖ below 1e-3 of the median norm are compared on that median's scale instead.
        norms = sorted(g.double().norm().item() for g in grads_ref.values())
        median = norms[len(norms) // 2]
        worst, vanishing = (0.0, ""), []
        for k, g_ref in grads_ref.items():
            if k not in grads:
                worst = (math.inf, k + " (no gradient when patched)")
                continue
            diff = (grads[k].double() - g_ref.double()).norm().item()
            ref = g_ref.double().norm().item()
            if ref < 1e-3 * median:
                vanishing.append(k)
                err = diff / median
            else:
                err = diff / ref
            worst = max(worst, (err, k))
        expect(f"longformer {tag} gradients ({len(grads_ref)} parameters; worst {worst[1]}; "
               f"{len(vanishing)} vanishing on the median scale)", worst[0], bound, "longformer")
        results["longformer"].append({"name": f"{tag} vanishing gradients", "parameters": vanishing})

        # Timings: the whole model and one layer's attention part, unpatched and patched.
        attn = model.encoder.layer[0].attention.self
        captured = {}

        def grab(module, args, kwargs):
            captured["args"], captured["kwargs"] = args, kwargs

        handle = attn.register_forward_pre_hook(grab, with_kwargs=True)
        with torch.no_grad():
            model(input_ids=ids, attention_mask=attention, global_attention_mask=global_mask)
        handle.remove()
        t = {}
        hidden = captured["args"][0] if captured["args"] else captured["kwargs"]["hidden_states"]

        def projections():
            h = hidden.transpose(0, 1)
            return attn.query(h), attn.key(h), attn.value(h)

        with torch.no_grad():
            t["projections_us"] = event_median(projections, runs=30)
        for patched in (False, True):
            (bandjit.hf.patch_longformer if patched else bandjit.hf.unpatch_longformer)(model)
            key = "patched" if patched else "hf"
            with torch.no_grad():
                t[f"forward_{key}_us"] = event_median(
                    lambda: model(input_ids=ids, attention_mask=attention, global_attention_mask=global_mask))
                t[f"self_attention_{key}_us"] = event_median(
                    lambda: attn(*captured["args"], **captured["kwargs"]), runs=30)
            t[f"attention_part_{key}_us"] = t[f"self_attention_{key}_us"] - t["projections_us"]
            t[f"forward_backward_{key}_us"] = event_median(step, warmup=2, runs=5)
        for part in ("forward", "forward_backward", "self_attention", "attention_part"):
            t[f"{part}_speedup"] = t[f"{part}_hf_us"] / t[f"{part}_patched_us"]
        results["timings"][tag] = t
        print(tag, json.dumps(t, indent=1))
        assert bandjit.hf.unpatch_longformer(model) == 12 and bandjit.hf.unpatch_longformer(model) == 0
        assert bandjit.hf.patch_longformer(model) == 12 and bandjit.hf.patch_longformer(model) == 0
        assert bandjit.hf.unpatch_longformer(model) == 12
        del model


results["environment"] = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "bandjit": bandjit.version()}
check_functions()
check_dlpack()
check_longformer()
results["failures"] = failures
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(results, f, indent=1)
print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
