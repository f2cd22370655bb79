#!/usr/bin/env python3
# Reduces the Nsight Compute source page of run7.sh (src-VARIANT.csv, `ncu -i … --page source
# --csv --print-source sass`) to runs/r7/stalls-VARIANT.txt: warp stall samples by reason and
# the 40 hottest SASS instructions. Usage: reduce_stalls.py src-qk_base.csv qk_base > stalls-qk_base.txt
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hdr, data = rows[1], rows[2:]
i_s = hdr.index("Warp Stall Sampling (All Samples)")
rc = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
tot = sum(int(r[i_s]) for r in data)
agg = {hdr[i]: sum(int(r[i] or 0) for r in data) for i in rc}
print(f"# {sys.argv[2]}: warp stall samples {tot}; by reason (% of samples): "
      + ", ".join(f"{k} {100 * x / tot:.1f}" for k, x in sorted(agg.items(), key=lambda kv: -kv[1]) if x))
print("# the 40 instructions with most samples: samples, % of all, SASS, reasons")
for r in sorted(data, key=lambda r: -int(r[i_s]))[:40]:
    rs = {hdr[i]: int(r[i]) for i in rc if r[i] not in ("", "0")}
    print(f"{int(r[i_s]):6d} {100 * int(r[i_s]) / tot:5.1f}%  {r[1].strip():60s} {rs}")
