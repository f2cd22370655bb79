"""What a Longformer user runs today, timed on the problems bandjit benchmarks.

For each problem of the given shape files (SPEC §6 form) and each peer that supports it:
  hf_chunks_qk       transformers' LongformerSelfAttention._sliding_chunks_query_key_matmul
  hf_chunks_forward  HF's attention part: chunked Q.K^T, diagonal mask, float32 softmax, chunked P.V
  unfold_qk          gather the key window (any dilation) and einsum
  flex_forward       torch.compile(flex_attention) with a (dilated) sliding-window block mask
  sdpa_band_forward  SDPA with a boolean band mask (dense cost)
  hf_layer_forward   the whole LongformerSelfAttention forward (Q/K/V projections included)
  hf_projections     its three projections alone (hf_layer_forward minus this = attention part)
  hf_chunks_backward autograd through hf_chunks_forward: the backward alone (graph built once), dQ, dK, dV
  hf_chunks_fwd_bwd  the same forward and its autograd backward, together
Times are medians of CUDA-event timings after warm-up. Usage:
  python3 bench/peers/peers.py --shapes bench/shapes/issue-3.json --json OUT.json
"""
import argparse
import json
import math
import sys
import traceback

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
DEV = "cuda"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def median_ms(fn, warmup=5, runs=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def unfold_qk(q, k, wl, wr, dil):
    """q, k: [B, N, H, D] -> [B, N, H, wl + wr + 1]; -inf off the sequence."""
    B, N, H, D = q.shape
    offsets = torch.arange(-wl, wr + 1, device=DEV) * dil
    idx = torch.arange(N, device=DEV)[:, None] + offsets[None, :]
    valid = (idx >= 0) & (idx < N)
    kw = k[:, idx.clamp(0, N - 1)]  # [B, N, C, H, D]
    s = torch.einsum("bnhd,bnchd->bnhc", q, kw)
    return s.masked_fill(~valid[None, :, None, :], float("-inf"))


def flex_forward_fn(q, k, v, wl, wr, dil):
    import torch._dynamo
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    # A fresh compile per problem: one compiled function past dynamo's recompile limit (8 shapes)
    # runs flex_attention eagerly, materialising the N×N scores (3.9–95 ms rows in earlier runs).
    torch._dynamo.reset()
    flex = torch.compile(flex_attention, dynamic=False)
    N = q.shape[2]

    def mask_mod(b, h, qi, ki):
        d = ki - qi
        return (d >= -wl * dil) & (d <= wr * dil) & (d % dil == 0)

    block_mask = create_block_mask(mask_mod, None, None, N, N, device=DEV)
    return lambda: flex(q, k, v, block_mask=block_mask)


def hf_layer(hidden, heads, window, dtype, seq_len):
    from transformers import LongformerConfig
    from transformers.models.longformer import modeling_longformer as ml

    cfg = LongformerConfig(attention_window=[window] * 1, num_hidden_layers=1, hidden_size=hidden,
                           num_attention_heads=heads, max_position_embeddings=seq_len + 2)
    return ml.LongformerSelfAttention(cfg, layer_id=0).to(DEV, dtype).eval()


def peers_for(p, rows, runs):
    B, H, N, D = p["batch"], p["heads"], p["seq_len"], p["head_dim"]
    wl, wr = p["window_left"], p["window_right"]
    dil = p.get("dilation", 1)
    if isinstance(dil, list):
        return  # the peers take one dilation for all heads
    dt = DTYPES[p["dtype"]]
    base = {"batch": B, "heads": H, "seq_len": N, "head_dim": D, "window_left": wl, "window_right": wr,
            "dilation": dil, "dtype": p["dtype"], "layout": p.get("layout", "bnhd")}

    def record(peer, fn, note=""):
        try:
            ms = median_ms(fn, runs=runs)
            row = {**base, "peer": peer, "median_us": round(ms * 1000, 2), "note": note}
        except Exception as ex:  # a peer that cannot run this problem says why
            row = {**base, "peer": peer, "error": f"{type(ex).__name__}: {str(ex)[:200]}"}
            torch.cuda.empty_cache()
        print(json.dumps(row), flush=True)
        rows.append(row)

    g = torch.Generator(device=DEV).manual_seed(0)
    q = torch.randn(B, N, H, D, device=DEV, dtype=dt, generator=g)
    k = torch.randn(B, N, H, D, device=DEV, dtype=dt, generator=g)
    v = torch.randn(B, N, H, D, device=DEV, dtype=dt, generator=g)
    C = wl + wr + 1
    if C * B * N * H * D * q.element_size() < 16e9:
        record("unfold_qk", lambda: unfold_qk(q, k, wl, wr, dil))
    sym = wl == wr and dil == 1 and N % (2 * wl) == 0 and wl > 0
    if sym:
        layer = hf_layer(H * D, H, 2 * wl, dt, N)
        w = wl
        record("hf_chunks_qk", lambda: layer._sliding_chunks_query_key_matmul(q, k, w))
        float_mask = torch.zeros(B, N, device=DEV, dtype=dt)
        masked = float_mask != 0

        def hf_forward():
            s = layer._sliding_chunks_query_key_matmul(q, k, w)
            diag = layer._sliding_chunks_query_key_matmul(float_mask.new_ones(float_mask.size())[:, :, None, None],
                                                          float_mask[:, :, None, None], w)
            s += diag
            probs = F.softmax(s, dim=-1, dtype=torch.float32)
            probs = torch.masked_fill(probs, masked[:, :, None, None], 0.0).type_as(s)
            return layer._sliding_chunks_matmul_attn_probs_value(probs, v, w)

        record("hf_chunks_forward", hf_forward, "chunked QK^T + diagonal mask + fp32 softmax + chunked PV")

        # Training through the same forward: PyTorch's autograd of the chunked attention.
        qg, kg, vg = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        d_o = torch.randn_like(q)

        def chunks_attention(q_, k_, v_):
            s = layer._sliding_chunks_query_key_matmul(q_, k_, w)
            s = s + layer._sliding_chunks_query_key_matmul(float_mask.new_ones(float_mask.size())[:, :, None, None],
                                                           float_mask[:, :, None, None], w)
            probs = F.softmax(s, dim=-1, dtype=torch.float32)
            probs = torch.masked_fill(probs, masked[:, :, None, None], 0.0).type_as(s)
            return layer._sliding_chunks_matmul_attn_probs_value(probs, v_, w)

        out = chunks_attention(qg, kg, vg)
        record("hf_chunks_backward", lambda: torch.autograd.grad(out, (qg, kg, vg), d_o, retain_graph=True),
               "autograd backward of hf_chunks_forward alone (dQ, dK, dV; graph built once)")
        record("hf_chunks_fwd_bwd", lambda: torch.autograd.grad(chunks_attention(qg, kg, vg), (qg, kg, vg), d_o),
               "hf_chunks_forward and its autograd backward")
        del out, qg, kg, vg, d_o
        x = torch.randn(B, N, H * D, device=DEV, dtype=dt, generator=g)
        mask = torch.zeros(B, N, device=DEV, dtype=dt)
        with torch.no_grad():
            record("hf_layer_forward", lambda: layer(x, attention_mask=mask, is_index_masked=mask < 0,
                                                     is_index_global_attn=mask > 0, is_global_attn=False),
                   "LongformerSelfAttention, projections included")
            record("hf_projections", lambda: (layer.query(x), layer.key(x), layer.value(x)))
        del layer
    if dt != torch.float32:
        qh, kh, vh = (t.transpose(1, 2).contiguous() for t in (q, k, v))
        try:
            record("flex_forward", flex_forward_fn(qh, kh, vh, wl, wr, dil), "fused sliding window, block mask")
        except Exception as ex:
            rows.append({**base, "peer": "flex_forward", "error": repr(ex)[:200]})
        if N <= 16384:
            i = torch.arange(N, device=DEV)
            d = i[None, :] - i[:, None]
            band = (d >= -wl * dil) & (d <= wr * dil) & (d % dil == 0)
            record("sdpa_band_forward", lambda: F.scaled_dot_product_attention(qh, kh, vh, attn_mask=band))
    del q, k, v
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", nargs="+", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    rows = []
    for path in args.shapes:
        for p in json.load(open(path))["problems"]:
            try:
                peers_for(p, rows, args.runs)
            except Exception:
                traceback.print_exc()
    import transformers

    json.dump({"command": "peers", "device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "transformers": transformers.__version__, "rows": rows}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
