"""Torch-facing band functions on CUDA tensors, with autograd through bandjit's backward
kernels (docs/python.md). They run on the current torch stream of the tensors' device.

Tensors: Q, K, V, O [B, N, H, Dh] for layout "bnhd" (HF Longformer) or [B, H, N, Dh] for
"bhnd"; band tensors S, P [B, N, H, C] / [B, H, N, C] with C = window_left + window_right + 1
diagonals, slot j of row i holding key i + D·(j − window_left) (SPEC §2–§3). float32,
float16, bfloat16; head_dim a multiple of 16. Non-contiguous inputs are copied with
.contiguous() (the kernels take dense tensors). Objects with __dlpack__ (CuPy, JAX, …) are
taken through torch.from_dlpack. Errors: bandjit.BandjitError naming the field and range.
"""
import functools
import math

import torch
from torch.autograd.function import once_differentiable

from . import kernels as _kernels

_DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


def _tensor(x, name):
    if not isinstance(x, torch.Tensor):
        if hasattr(x, "__dlpack__"):
            x = torch.from_dlpack(x)
        else:
            raise TypeError(f"{name} must be a torch tensor or support DLPack, not {type(x).__name__}")
    if not x.is_cuda:
        raise ValueError(f"{name} must be on a CUDA device (it is on {x.device})")
    if x.dtype not in _DTYPES:
        raise ValueError(f"{name} has dtype {x.dtype}; bandjit takes float32, float16, bfloat16")
    return x.contiguous()


def _sizes(x, layout, name):
    if x.dim() != 4:
        raise ValueError(f"{name} must have 4 dimensions ([B, N, H, *] or [B, H, N, *]), not {tuple(x.shape)}")
    if layout == "bnhd":
        return x.shape[0], x.shape[1], x.shape[2], x.shape[3]
    if layout == "bhnd":
        return x.shape[0], x.shape[2], x.shape[1], x.shape[3]
    raise ValueError(f'layout must be "bnhd" or "bhnd", not {layout!r}')


def _problem(batch, seq_len, heads, head_dim, dtype, window_left, window_right, dilation, layout, scale=1.0,
             key_mask="none"):
    return {"batch": int(batch), "heads": int(heads), "seq_len": int(seq_len), "head_dim": int(head_dim),
            "window_left": int(window_left), "window_right": int(window_right),
            "dilation": dilation if isinstance(dilation, int) else [int(d) for d in dilation],
            "dtype": _DTYPES[dtype], "layout": layout, "scale": float(scale), "key_mask": key_mask}


def _band_shape(batch, seq_len, heads, c, layout):
    return (batch, seq_len, heads, c) if layout == "bnhd" else (batch, heads, seq_len, c)


def _same_device(*named):
    devices = {t.device for _, t in named}
    if len(devices) > 1:
        raise ValueError("tensors on different devices: " + ", ".join(f"{n} on {t.device}" for n, t in named))


@functools.lru_cache(maxsize=64)
def _off_sequence(seq_len, heads, window_left, window_right, dilation, layout, device):
    """Bool [N, H, C] (bnhd) or [H, N, C] (bhnd): slots whose key is outside the sequence."""
    dil = torch.tensor([dilation] * heads if isinstance(dilation, int) else list(dilation), device=device)
    i = torch.arange(seq_len, device=device)[:, None, None]
    j = torch.arange(window_left + window_right + 1, device=device)[None, None, :]
    key = i + dil[None, :, None] * (j - window_left)
    off = (key < 0) | (key >= seq_len)
    return off if layout == "bnhd" else off.transpose(0, 1).contiguous()


def _launch(family, problem, tensors):
    device = tensors[0].device
    with torch.cuda.device(device):
        kernel = _kernels.get_kernel(family, problem)
        kernel.launch([t.data_ptr() for t in tensors], stream=torch.cuda.current_stream(device).cuda_stream)


def _mask(key_mask, batch, seq_len, device):
    """(kind, tensor): bool → uint8 "bool" (True = the key takes part); float →
    float32 "additive" (a negative value removes the key, e.g. HF's -10000)."""
    if key_mask is None:
        return "none", None
    key_mask = torch.from_dlpack(key_mask) if not isinstance(key_mask, torch.Tensor) else key_mask
    if tuple(key_mask.shape) != (batch, seq_len):
        raise ValueError(f"key_mask must be [B, N] = [{batch}, {seq_len}], not {tuple(key_mask.shape)}")
    if key_mask.dtype == torch.bool:
        return "bool", key_mask.to(device=device, dtype=torch.uint8).contiguous()
    return "additive", key_mask.to(device=device, dtype=torch.float32).contiguous()


# -- the three forward kernels, each with its backward -------------------------------------

class _BandQK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, window_left, window_right, dilation, scale, layout):
        b, n, h, dh = _sizes(q, layout, "q")
        p = _problem(b, n, h, dh, q.dtype, window_left, window_right, dilation, layout, scale)
        s = torch.empty(_band_shape(b, n, h, window_left + window_right + 1, layout), dtype=q.dtype, device=q.device)
        _launch("band_qk", p, [q, k, s])
        ctx.save_for_backward(q, k)
        ctx.problem, ctx.scale = p, scale
        return s

    @staticmethod
    @once_differentiable
    def backward(ctx, ds):
        q, k = ctx.saved_tensors
        ds = ds.contiguous()
        # dQ = scale·band_pv(dS, K), dK = scale·band_tpv(dS, Q) (SPEC §3.4); slots off the
        # sequence (S = −inf there) are never read by either.
        dq, dk = torch.empty_like(q), torch.empty_like(k)
        _launch("band_pv", ctx.problem, [ds, k, dq])
        _launch("band_tpv", ctx.problem, [ds, q, dk])
        if ctx.scale != 1.0:
            dq.mul_(ctx.scale)
            dk.mul_(ctx.scale)
        return dq, dk, None, None, None, None, None


class _BandSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, s, window_left, window_right, dilation, scale, key_mask, layout, head_dim):
        b, n, h, c = _sizes(s, layout, "s")
        if c != window_left + window_right + 1:
            raise ValueError(f"s has {c} diagonals; window_left + window_right + 1 = {window_left + window_right + 1}")
        kind, mask = _mask(key_mask, b, n, s.device)
        # head_dim is part of every band problem (and its cache key): the caller's Q/K head_dim.
        p = _problem(b, n, h, head_dim, s.dtype, window_left, window_right, dilation, layout, scale, kind)
        out = torch.empty_like(s)
        _launch("band_softmax", p, [s, out] + ([mask] if mask is not None else []))
        ctx.save_for_backward(out, *([mask] if mask is not None else []))
        ctx.problem = p
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, dp):
        saved = ctx.saved_tensors
        ds = torch.empty_like(saved[0])
        _launch("band_softmax_backward", ctx.problem, [saved[0], dp.contiguous(), ds] + list(saved[1:]))
        return ds, None, None, None, None, None, None, None


class _BandPV(torch.autograd.Function):
    @staticmethod
    def forward(ctx, prob, v, window_left, window_right, dilation, layout):
        b, n, h, dh = _sizes(v, layout, "v")
        p = _problem(b, n, h, dh, v.dtype, window_left, window_right, dilation, layout)
        o = torch.empty_like(v)
        _launch("band_pv", p, [prob, v, o])
        ctx.save_for_backward(prob, v)
        ctx.problem = p
        return o

    @staticmethod
    @once_differentiable
    def backward(ctx, do):
        prob, v = ctx.saved_tensors
        do = do.contiguous()
        # dP = band_qk(dO, V): −inf off the sequence, where band_pv never read P, so the
        # gradient there is 0; dV = band_tpv(P, dO).
        dp, dv = torch.empty_like(prob), torch.empty_like(v)
        pr = ctx.problem
        _launch("band_qk", dict(pr, scale=1.0), [do, v, dp])
        dil = pr["dilation"] if isinstance(pr["dilation"], int) else tuple(pr["dilation"])
        dp.masked_fill_(_off_sequence(pr["seq_len"], pr["heads"], pr["window_left"], pr["window_right"], dil,
                                      pr["layout"], dp.device), 0.0)
        _launch("band_tpv", ctx.problem, [prob, do, dv])
        return dp, dv, None, None, None, None


def band_qk(q, k, window_left, window_right, dilation=1, scale=1.0, layout="bnhd"):
    """S[i, j] = scale · Q[i]·K[i + D·(j − window_left)], −inf where the key is outside the
    sequence (SPEC §3.1). q, k: [B, N, H, Dh] ("bnhd") or [B, H, N, Dh]; returns S with C
    diagonals in the same layout. Differentiable in q and k."""
    q, k = _tensor(q, "q"), _tensor(k, "k")
    _same_device(("q", q), ("k", k))
    if q.shape != k.shape or q.dtype != k.dtype:
        raise ValueError(f"q and k must match: {tuple(q.shape)} {q.dtype} vs {tuple(k.shape)} {k.dtype}")
    return _BandQK.apply(q, k, window_left, window_right, dilation, scale, layout)


def band_softmax(s, window_left, window_right, dilation=1, scale=1.0, key_mask=None, layout="bnhd", head_dim=64):
    """P[i, :] = softmax(scale · S[i, :] + M[i, :]) over the slots whose key is in the
    sequence and kept by key_mask ([B, N]: bool, True = kept; or float, added, negative =
    removed); rows without such a slot give zeros (SPEC §3.2). Differentiable in s.
    head_dim (that of the Q and K behind S) only names the kernel: pass it so that the
    kernels of a pregenerated problem are found."""
    return _BandSoftmax.apply(_tensor(s, "s"), window_left, window_right, dilation, scale, key_mask, layout,
                              head_dim)


def band_pv(p, v, window_left, window_right, dilation=1, layout="bnhd"):
    """O[i] = Σ_j P[i, j] · V[i + D·(j − window_left)] over slots whose key is in the sequence
    (SPEC §3.3). p: [B, N, H, C]; v: [B, N, H, Dh] ("bnhd"). Differentiable in p and v."""
    p, v = _tensor(p, "p"), _tensor(v, "v")
    _same_device(("p", p), ("v", v))
    if p.dtype != v.dtype:
        raise ValueError(f"p and v must have one dtype, not {p.dtype} and {v.dtype}")
    b, n, h, _ = _sizes(v, layout, "v")
    expected = _band_shape(b, n, h, window_left + window_right + 1, layout)
    if tuple(p.shape) != expected:
        raise ValueError(f"p must be {list(expected)} for v {list(v.shape)} (layout {layout}), not {list(p.shape)}")
    return _BandPV.apply(p, v, window_left, window_right, dilation, layout)


# -- the composed attention --------------------------------------------------------------

class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, window_left, window_right, dilation, scale, key_mask, layout):
        b, n, h, dh = _sizes(q, layout, "q")
        kind, mask = _mask(key_mask, b, n, q.device)
        masks = [mask] if mask is not None else []
        plain = _problem(b, n, h, dh, q.dtype, window_left, window_right, dilation, layout)
        scaled = dict(plain, scale=scale, key_mask=kind)
        # One fused kernel (SPEC §3.5): S and P never reach memory. LSE is its by-product.
        o = torch.empty_like(v)
        lse = torch.empty((b, h, n), dtype=torch.float32, device=q.device)
        _launch("sliding_window_attention", scaled, [q, k, v, o, lse] + masks)
        ctx.save_for_backward(q, k, v, *masks)
        ctx.plain, ctx.scaled = plain, scaled
        return o

    @staticmethod
    @once_differentiable
    def backward(ctx, do):
        q, k, v, *masks = ctx.saved_tensors
        do = do.contiguous()
        # P is recomputed (band_qk, band_softmax in place), as FlashAttention does: the
        # forward kept no band tensor.
        b, n, h, _ = _sizes(q, ctx.plain["layout"], "q")
        prob = torch.empty(_band_shape(b, n, h, ctx.plain["window_left"] + ctx.plain["window_right"] + 1,
                                       ctx.plain["layout"]), dtype=q.dtype, device=q.device)
        _launch("band_qk", ctx.plain, [q, k, prob])
        _launch("band_softmax", ctx.scaled, [prob, prob] + masks)
        # attention_backward's kernels (SPEC §3.4): dP = dO·Vᵀ, dS = softmax backward (scale
        # applied once, in place on dP), dQ = band_pv(dS, K), dK = band_tpv(dS, Q), dV = band_tpv(P, dO).
        ds = torch.empty_like(prob)
        _launch("band_qk", ctx.plain, [do, v, ds])
        _launch("band_softmax_backward", ctx.scaled, [prob, ds, ds] + masks)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        _launch("band_pv", ctx.plain, [ds, k, dq])
        _launch("band_tpv", ctx.plain, [ds, q, dk])
        _launch("band_tpv", ctx.plain, [prob, do, dv])
        return dq, dk, dv, None, None, None, None, None, None


def sliding_window_attention(q, k, v, window_left, window_right, dilation=1, scale=None, key_mask=None,
                             layout="bnhd"):
    """O = softmax(scale · Q Kᵀ + M) V restricted to the band, in one fused kernel
    (sliding_window_attention, SPEC §3.5); scale defaults to 1/√head_dim. q, k, v:
    [B, N, H, Dh] ("bnhd") or [B, H, N, Dh]; key_mask as for band_softmax. Differentiable in
    q, k, v: the backward recomputes P (band_qk, band_softmax) and runs attention_backward's
    five kernels."""
    q, k, v = _tensor(q, "q"), _tensor(k, "k"), _tensor(v, "v")
    _same_device(("q", q), ("k", k), ("v", v))
    if not (q.shape == k.shape == v.shape) or not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v must have one shape and dtype: {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    return _Attention.apply(q, k, v, window_left, window_right, dilation, scale, key_mask, layout)


def attention_kernels(batch, seq_len, heads, head_dim, dtype, window_left, window_right, dilation=1, scale=None,
                      key_mask="none", layout="bnhd"):
    """The (family, parameters) pairs sliding_window_attention and its backward use for a
    problem — the fused sliding_window_attention at `scale` with the mask kind ("none",
    "bool", "additive"), band_qk at scale 1, band_softmax(_backward) at `scale`, band_pv,
    band_tpv — for bandjit.pregenerate or warmup.
    dtype: a torch dtype or its name."""
    dtype = dtype if isinstance(dtype, torch.dtype) else getattr(torch, dtype)
    scale = 1.0 / math.sqrt(head_dim) if scale is None else scale
    plain = _problem(batch, seq_len, heads, head_dim, dtype, window_left, window_right, dilation, layout)
    scaled = dict(plain, scale=scale, key_mask=key_mask)
    return [("sliding_window_attention", scaled), ("band_qk", plain), ("band_softmax", scaled), ("band_pv", plain),
            ("band_softmax_backward", scaled), ("band_tpv", plain)]
