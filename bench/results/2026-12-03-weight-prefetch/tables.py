#!/usr/bin/env python3
"""Tables of the record's sweeps: % of the copy bandwidth per setting, both rounds of each call
(out/cN/r1, r2: sweep-rows JSONs). Usage: python3 tables.py > tables.md"""
import glob, json, os

here = os.path.dirname(os.path.abspath(__file__))
short = [("BANDJIT_ROW_", ""), ("WEIGHT_PREFETCH-", "L1-prefetch-"), ("VEC_BYTES-", "vec"),
         ("WEIGHT_AHEAD_LATE-1", "late"), ("WEIGHT_AHEAD-", "ahead"), ("STREAM_X-1", "stream-x"),
         ("SM_THREADS-", "sm"), ("REGISTERS-", "reg"), ("BLOCK_THREADS-", "thr"), ("PAIRS-1", "pairs")]
for call in sorted(glob.glob(os.path.join(here, "out", "c[1-68]"))):
    print(f"## {os.path.basename(call)}\n")
    for rnd in ("r1", "r2"):
        table, names = {}, []
        for f in sorted(glob.glob(os.path.join(call, rnd, "*.json"))):
            n = os.path.basename(f)[:-5]
            for a, b in short:
                n = n.replace(a, b)
            names.append(n)
            for r in json.load(open(f))["rows"]:
                p = r["problem"].replace("bias_", "").replace("_epsilon1e-05", "")
                table.setdefault(p, {})[n] = 100 * r["fraction_of_copy"]
        print(f"{rnd}\n\n| problem | " + " | ".join(names) + " |")
        print("| --- |" + " ---: |" * len(names))
        for p, v in table.items():
            print(f"| {p} | " + " | ".join(f"{v[n]:.1f}" if n in v else "" for n in names) + " |")
        print()
