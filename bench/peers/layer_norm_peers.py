"""PyTorch's own layer_norm kernels timed on the problems of a layer_norm bench shape file,
merged with the JSON `bandjit bench --json` wrote for the same file on the same card.

  forward   torch.nn.functional.layer_norm(x, (H,), weight, bias, eps); weight and bias are
            float32 next to float16/bfloat16 x (as Apex) when PyTorch accepts the mix, else in
            x's dtype (the row's note says so)
  backward  torch.ops.aten.native_layer_norm_backward(dy, x, (H,), mean, rstd, weight, bias,
            [True, weight, bias]) with mean/rstd from aten.native_layer_norm

Times: median of CUDA-event timings after warm-up, over rotating buffer sets of at least
256 MB (DRAM, not L2). Usage (on a machine with torch and a GPU):

  build/bandjit bench --shapes bench/shapes/issue-7-layer-norm.json --json bandjit.json
  python3 bench/peers/layer_norm_peers.py --shapes bench/shapes/issue-7-layer-norm.json \
      --bandjit bandjit.json --json merged.json --markdown merged.md
"""
import argparse
import json
import math

import torch
import torch.nn.functional as F

DEV = "cuda"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
MIN_WORKING_SET = 256e6


def timed_median_us(fn, sets, warmup=10, runs=50):
    for i in range(warmup):
        fn(i % sets)
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i % sets)
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1000)
    times.sort()
    return times[len(times) // 2]


def canonical(p):
    return {"rows": p["rows"], "hidden": p["hidden"], "dtype": p["dtype"], "weight": p.get("weight", True),
            "bias": p.get("bias", True), "epsilon": p.get("epsilon", 1e-5)}


def key(c):
    return (c["rows"], c["hidden"], c["dtype"], bool(c["weight"]), bool(c["bias"]), float(c["epsilon"]))


def time_problem(c):
    rows, H, dt, eps = c["rows"], c["hidden"], DTYPES[c["dtype"]], c["epsilon"]
    es = torch.tensor([], dtype=dt).element_size()
    sets = max(1, min(8, math.ceil(MIN_WORKING_SET / (4 * rows * H * es))))
    g = torch.Generator(device=DEV).manual_seed(0)
    xs = [torch.randn(rows, H, device=DEV, dtype=dt, generator=g) for _ in range(sets)]
    dys = [torch.randn(rows, H, device=DEV, dtype=dt, generator=g) for _ in range(sets)]
    w = torch.rand(H, device=DEV, dtype=torch.float32, generator=g) + 0.5 if c["weight"] else None
    b = torch.rand(H, device=DEV, dtype=torch.float32, generator=g) - 0.5 if c["bias"] else None
    note = "weight/bias float32"
    try:
        F.layer_norm(xs[0], (H,), w, b, eps)
    except RuntimeError as ex:  # no mixed precision in this PyTorch: parameters in x's dtype
        w = w.to(dt) if w is not None else None
        b = b.to(dt) if b is not None else None
        note = f"weight/bias {c['dtype']} (mixed refused: {str(ex)[:80]})"
    out = {}
    out["layer_norm"] = timed_median_us(lambda i: F.layer_norm(xs[i], (H,), w, b, eps), sets)
    saved = [torch.ops.aten.native_layer_norm(xs[i], [H], w, b, eps) for i in range(sets)]
    mask = [True, w is not None, b is not None]
    out["layer_norm_backward"] = timed_median_us(
        lambda i: torch.ops.aten.native_layer_norm_backward(dys[i], xs[i], [H], saved[i][1], saved[i][2], w, b, mask),
        sets)
    del xs, dys, saved
    torch.cuda.empty_cache()
    return out, note


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True, help="layer_norm bench shape file")
    ap.add_argument("--bandjit", required=True, help="JSON of `bandjit bench --json` on the same shape file")
    ap.add_argument("--json", required=True, help="merged JSON to write")
    ap.add_argument("--markdown", required=True, help="markdown table to write")
    args = ap.parse_args()
    with open(args.shapes) as f:
        problems = [canonical(p) for p in json.load(f)["problems"] if p.get("parameter_set") == "layer_norm"]
    with open(args.bandjit) as f:
        bench = json.load(f)
    ours = {}
    for r in bench["rows"]:
        if r.get("parameter_set") == "layer_norm":
            ours[(key(canonical(r["problem_json"])), r["family"])] = r
    merged = []
    lines = ["| rows | H | dtype | family | bandjit µs | % copy | torch µs | speed-up |",
             "| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |"]
    for c in problems:
        times, note = time_problem(c)
        for family, torch_us in times.items():
            r = ours.get((key(c), family), {})
            us = r.get("median_us")
            row = {**c, "family": family, "bandjit_us": us, "fraction_of_copy": r.get("fraction_of_copy"),
                   "torch_us": round(torch_us, 2), "speedup": (torch_us / us) if us else None, "torch_note": note}
            print(json.dumps(row), flush=True)
            merged.append(row)
            lines.append("| {} | {} | {} | {} | {} | {} | {:.1f} | {} |".format(
                c["rows"], c["hidden"], c["dtype"], family, f"{us:.1f}" if us else "—",
                f"{100 * r['fraction_of_copy']:.0f} %" if us else "—", torch_us,
                f"{torch_us / us:.2f}×" if us else "—"))
    with open(args.json, "w") as f:
        json.dump({"copy_gbps": bench.get("copy_gbps"), "environment": bench.get("environment"),
                   "torch": torch.__version__, "device": torch.cuda.get_device_name(), "rows": merged}, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
