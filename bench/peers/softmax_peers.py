"""PyTorch's softmax on the problems of bench/shapes/issue-7-softmax.json, merged with bandjit's.

For each entry of the shape file and each family in its bandjit results:
  softmax                      torch.softmax(x, -1)
  softmax_backward             torch._softmax_backward_data(dy, y, -1, dtype)
  scale_mask_softmax           torch.softmax(x * scale + mask, -1), the boolean mask turned into an
                               additive one (-inf where masked, [b, 1, sq, sk], broadcast) beforehand
  scale_mask_softmax_backward  torch._softmax_backward_data(dy, y, -1, dtype) * scale
and, for every family, PyTorch's softmax kernel alone on the same x (torch_kernel_us): the issue's
bar is "no slower than PyTorch's own kernel". Times are medians of CUDA-event timings after
warm-up, over rotating buffer sets of at least 256 MB (DRAM, not the L2). Usage:
  build/bandjit bench --shapes bench/shapes/issue-7-softmax.json --json bandjit.json
  python3 bench/peers/softmax_peers.py --shapes bench/shapes/issue-7-softmax.json \
      --bandjit bandjit.json --json merged.json --markdown merged.md
"""
import argparse
import json
import math

import torch

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
WORKING_SET = 256e6


def median_us(fn, sets, warmup=10, runs=50):
    for i in range(warmup):
        fn(i % sets)
    torch.cuda.synchronize()
    times = []
    for i in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(i % sets)
        stop.record()
        times.append((start, stop))
    torch.cuda.synchronize()
    us = sorted(a.elapsed_time(b) * 1000.0 for a, b in times)
    return us[len(us) // 2]


def shape_of(entry):
    """[b, np, sq, sk] of an entry (the plain softmax set: [1, 1, rows, L])."""
    if entry["parameter_set"] == "softmax":
        return 1, 1, entry["rows"], entry["row_length"]
    return entry["batch"], entry["heads"], entry["queries"], entry["row_length"]


def time_entry(entry):
    """{family: torch µs} and PyTorch's softmax kernel alone, for one shape-file entry."""
    b, h, q, L = shape_of(entry)
    dtype = DTYPES[entry["dtype"]]
    scale = entry.get("scale", 1.0)
    mask_kind = entry.get("mask", "none")
    elem = torch.finfo(dtype).bits // 8
    set_bytes = 4 * b * h * q * L * elem
    sets = max(1, min(8, math.ceil(WORKING_SET / set_bytes)))
    xs = [torch.randn(b, h, q, L, device="cuda", dtype=dtype) for _ in range(sets)]
    dys = [torch.randn_like(x) for x in xs]
    ys = [torch.softmax(x, -1) for x in xs]
    masks = []
    for _ in range(sets):
        if mask_kind == "none" and not entry.get("causal", False):
            masks.append(None)
            continue
        removed = torch.rand(b, 1, q, L, device="cuda") < 0.0  # keep every key, as bandjit's bench does
        if entry.get("causal", False):
            removed |= torch.ones(q, L, device="cuda", dtype=torch.bool).triu(L - q + 1)
        masks.append(torch.zeros(b, 1, q, L, device="cuda", dtype=dtype).masked_fill(removed, float("-inf")))
    out = {}
    kernel = median_us(lambda i: torch.softmax(xs[i], -1), sets)
    if entry["parameter_set"] == "softmax":
        out["softmax"] = kernel
        out["softmax_backward"] = median_us(lambda i: torch._softmax_backward_data(dys[i], ys[i], -1, dtype), sets)
    else:
        if masks[0] is None:
            out["scale_mask_softmax"] = median_us(lambda i: torch.softmax(xs[i] * scale, -1), sets)
        else:
            out["scale_mask_softmax"] = median_us(lambda i: torch.softmax(xs[i] * scale + masks[i], -1), sets)
        out["scale_mask_softmax_backward"] = median_us(
            lambda i: torch._softmax_backward_data(dys[i], ys[i], -1, dtype) * scale, sets)
    out["kernel_forward"] = kernel
    out["kernel_backward"] = median_us(lambda i: torch._softmax_backward_data(dys[i], ys[i], -1, dtype), sets)
    del xs, dys, ys, masks
    torch.cuda.empty_cache()
    return out


def matches(entry, problem_json):
    return all(problem_json.get(k) == v for k, v in entry.items() if k not in ("ops", "parameter_set"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--bandjit", required=True, help="JSON of `bandjit bench --json` on the same shape file")
    ap.add_argument("--json", required=True, help="merged results")
    ap.add_argument("--markdown", required=True, help="merged table")
    args = ap.parse_args()
    entries = json.load(open(args.shapes))["problems"]
    bj = json.load(open(args.bandjit))
    rows = []
    for entry in entries:
        mine = [r for r in bj["rows"] if r["parameter_set"] == entry["parameter_set"] and matches(entry, r["problem_json"])]
        if not mine:
            continue
        torch_us = time_entry(entry)
        for r in mine:
            backward = r["family"].endswith("_backward")
            peer = torch_us.get(r["family"])
            kernel = torch_us["kernel_backward" if backward else "kernel_forward"]
            rows.append({"problem": r["problem"], "family": r["family"], "dtype": entry["dtype"],
                         "row_length": entry["row_length"], "bandjit_us": r["median_us"],
                         "fraction_of_copy": r["fraction_of_copy"], "torch_us": peer, "torch_kernel_us": kernel,
                         "speedup": peer / r["median_us"] if peer else None,
                         "speedup_vs_kernel": kernel / r["median_us"]})
            print(f"{r['problem']:<60} {r['family']:<28} {r['median_us']:9.1f} us "
                  f"{100 * r['fraction_of_copy']:5.1f}% copy  torch {peer:9.1f} us  kernel {kernel:9.1f} us", flush=True)
    json.dump({"copy_gbps": bj.get("copy_gbps"), "torch": torch.__version__, "device": torch.cuda.get_device_name(),
               "rows": rows}, open(args.json, "w"), indent=1)
    with open(args.markdown, "w") as md:
        md.write(f"Copy bandwidth {bj.get('copy_gbps', 0):.0f} GB/s (read + written); torch {torch.__version__} on "
                 f"{torch.cuda.get_device_name()}.\n\n")
        md.write("| problem | family | bandjit µs | % copy | torch µs | speed-up | torch kernel µs | vs kernel |\n")
        md.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
        for r in rows:
            md.write(f"| {r['problem']} | {r['family']} | {r['bandjit_us']:.1f} | {100 * r['fraction_of_copy']:.1f} | "
                     f"{r['torch_us']:.1f} | {r['speedup']:.2f}× | {r['torch_kernel_us']:.1f} | "
                     f"{r['speedup_vs_kernel']:.2f}× |\n")


if __name__ == "__main__":
    main()
