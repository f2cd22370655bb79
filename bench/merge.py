"""Merges `bandjit bench --json` and `peers.py --json` of one run into two tables.

Writes OUT/bench.json (both, matched by problem), OUT/bench.md (markdown tables: forward,
then backward against autograd through HF's sliding-chunks forward) and
OUT/bench.png (time against sequence length per implementation, log axes).
Usage: python3 bench/merge.py BANDJIT.json PEERS.json OUT_DIR
"""
import json
import os
import sys

KEY = ("batch", "heads", "seq_len", "head_dim", "window_left", "window_right", "dilation", "dtype", "runtime_batch")
DEFAULTS = {"dilation": 1, "runtime_batch": False}


def key_of(p):
    # runtime_batch is part of the key: a run-time-batch kernel is its own row (peers have none)
    return tuple(p.get(k, DEFAULTS.get(k)) for k in KEY)


def main(bandjit_path, peers_path, out):
    ours = json.load(open(bandjit_path))
    peers = json.load(open(peers_path)) if os.path.exists(peers_path) else {"rows": []}
    problems = {}
    for r in ours["rows"]:
        entry = problems.setdefault(key_of(r["problem_json"]), {"problem": r["problem"], "bandjit": {}, "peers": {}})
        entry["bandjit"][r["family"]] = r
    for r in peers["rows"]:
        k = key_of(r)
        if k in problems and "median_us" in r:
            problems[k]["peers"][r["peer"]] = r["median_us"]
    for entry in problems.values():
        pe = entry["peers"]
        if "hf_layer_forward" in pe and "hf_projections" in pe:
            pe["hf_attention_part"] = round(pe["hf_layer_forward"] - pe["hf_projections"], 2)

    copy = ours["copy_gbps"]
    lines = [f"Device: {ours['environment'].get('gpu')}; copy bandwidth measured in this run: {copy:.0f} GB/s; "
             f"peers: torch {peers.get('torch')}, transformers {peers.get('transformers')}.", "",
             "Times in µs (median of CUDA events); `%copy` = achieved bytes/s over the copy bandwidth.", "",
             "| problem | qk | %copy | softmax | %copy | pv | %copy | forward | HF chunks qk | unfold qk | "
             "HF attention part | HF layer | flex fwd | SDPA band | fwd vs HF attn | qk vs HF qk |",
             "|---" * 16 + "|"]

    def fmt(x):
        return "—" if x is None else (f"{x:.1f}" if x < 1000 else f"{x:.0f}")

    for entry in problems.values():
        b, pe = entry["bandjit"], entry["peers"]
        cell = lambda f: (fmt(b[f]["median_us"]), f"{100 * b[f]['fraction_of_copy']:.0f}%") if f in b else ("—", "—")
        qk, sm, pv = cell("band_qk"), cell("band_softmax"), cell("band_pv")
        fwd = b.get("forward", {}).get("median_us")
        attn = pe.get("hf_attention_part")
        ratio_f = f"{attn / fwd:.1f}×" if attn and fwd else "—"
        ratio_q = f"{pe['hf_chunks_qk'] / b['band_qk']['median_us']:.1f}×" if "hf_chunks_qk" in pe and "band_qk" in b else "—"
        lines.append(f"| {entry['problem']} | {qk[0]} | {qk[1]} | {sm[0]} | {sm[1]} | {pv[0]} | {pv[1]} | {fmt(fwd)} | "
                     f"{fmt(pe.get('hf_chunks_qk'))} | {fmt(pe.get('unfold_qk'))} | {fmt(attn)} | "
                     f"{fmt(pe.get('hf_layer_forward'))} | {fmt(pe.get('flex_forward'))} | "
                     f"{fmt(pe.get('sdpa_band_forward'))} | {ratio_f} | {ratio_q} |")
    lines += ["", "Backward (attention_backward: dP, dS, dQ, dK, dV in five launches) against PyTorch's autograd "
              "through the same HF sliding-chunks forward; `band_tpv` timed as dV = band_tpv(P, dO).", "",
              "| problem | tpv | %copy | softmax bwd | %copy | backward | %copy | HF chunks bwd (autograd) | "
              "bwd vs autograd | fwd + bwd | HF chunks fwd+bwd | fwd+bwd vs HF |",
              "|---" * 12 + "|"]
    for entry in problems.values():
        b, pe = entry["bandjit"], entry["peers"]
        if "backward" not in b:
            continue
        cell = lambda f: (fmt(b[f]["median_us"]), f"{100 * b[f]['fraction_of_copy']:.0f}%") if f in b else ("—", "—")
        tpv, smb, bwd = cell("band_tpv"), cell("band_softmax_backward"), cell("backward")
        bwd_us = b["backward"]["median_us"]
        fwd_bwd = bwd_us + b["forward"]["median_us"] if "forward" in b else None
        ag, ag_fb = pe.get("hf_chunks_backward"), pe.get("hf_chunks_fwd_bwd")
        ratio = f"{ag / bwd_us:.1f}×" if ag else "—"
        ratio_fb = f"{ag_fb / fwd_bwd:.1f}×" if ag_fb and fwd_bwd else "—"
        lines.append(f"| {entry['problem']} | {tpv[0]} | {tpv[1]} | {smb[0]} | {smb[1]} | {bwd[0]} | {bwd[1]} | "
                     f"{fmt(ag)} | {ratio} | {fmt(fwd_bwd)} | {fmt(ag_fb)} | {ratio_fb} |")
    lines += ["", "Fused forward (sliding_window_attention: O and LSE in one kernel) against bandjit's unfused "
              "forward and flex_attention with a (dilated) sliding-window block mask; TFLOP/s on band FLOPs "
              "4·B·H·N·C·Dh.", "",
              "| problem | fused | TFLOP/s | unfused forward | fused vs unfused | flex fwd | fused vs flex |",
              "|---" * 7 + "|"]
    for entry in problems.values():
        b, pe = entry["bandjit"], entry["peers"]
        if "sliding_window_attention" not in b:
            continue
        us, tflops = b["sliding_window_attention"]["median_us"], b["sliding_window_attention"]["tflops"]
        fwd, flex = b.get("forward", {}).get("median_us"), pe.get("flex_forward")
        ratio = lambda other: f"{other / us:.2f}×" if other else "—"
        lines.append(f"| {entry['problem']} | {fmt(us)} | {tflops:.0f} | {fmt(fwd)} | {ratio(fwd)} | {fmt(flex)} | "
                     f"{ratio(flex)} |")
    os.makedirs(out, exist_ok=True)
    open(os.path.join(out, "bench.md"), "w").write("\n".join(lines) + "\n")
    json.dump({"copy_gbps": copy, "environment": ours["environment"], "peers_env": {k: peers.get(k) for k in ("device", "torch", "transformers")},
               "problems": [{"key": dict(zip(KEY, k)), **v} for k, v in problems.items()]},
              open(os.path.join(out, "bench.json"), "w"), indent=1)
    plot(problems, os.path.join(out, "bench.png"))
    print("\n".join(lines))


def plot(problems, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return
    sweep = sorted((k, v) for k, v in problems.items()
                   if k[0] == 1 and k[1] == 12 and k[3] == 64 and k[4] == 256 and k[5] == 256 and k[6] == 1 and k[7] == "float16")
    series = {"bandjit forward (3 kernels)": lambda e: e["bandjit"].get("forward", {}).get("median_us"),
              "bandjit fused forward": lambda e: e["bandjit"].get("sliding_window_attention", {}).get("median_us"),
              "bandjit backward (5 kernels)": lambda e: e["bandjit"].get("backward", {}).get("median_us"),
              "HF chunks backward (autograd)": lambda e: e["peers"].get("hf_chunks_backward"),
              "bandjit band_qk": lambda e: e["bandjit"].get("band_qk", {}).get("median_us"),
              "HF sliding chunks Q·Kᵀ": lambda e: e["peers"].get("hf_chunks_qk"),
              "HF attention part": lambda e: e["peers"].get("hf_attention_part"),
              "unfold/gather Q·Kᵀ": lambda e: e["peers"].get("unfold_qk"),
              "flex_attention fwd": lambda e: e["peers"].get("flex_forward"),
              "SDPA + band mask": lambda e: e["peers"].get("sdpa_band_forward")}
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, get in series.items():
        pts = [(k[2], get(v)) for k, v in sweep if get(v)]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length N (B=1, H=12, Dh=64, w=256+256, float16)")
    ax.set_ylabel("time (µs, median of CUDA events)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main(*sys.argv[1:4])
