# Prints call N's sweep: each setting's µs and % of copy per problem, both rounds (python3 table.py N).
import json, glob, os
names = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}
import sys
c = "c" + (sys.argv[1] if len(sys.argv) > 1 else "1")
for r in ("r1", "r2"):
    print(f"\n### {c}, {r}\n")
    files = sorted(f for f in glob.glob(f"out/{c}/{r}/*.json") if "check" not in f)
    probs = None
    for f in files:
        d = json.load(open(f))
        row = {x["problem"]: x for x in d["rows"]}
        if probs is None:
            probs = list(row)
            print("| setting | " + " | ".join(f"{row[p]['problem_json']['dtype']} H = {row[p]['problem_json']['hidden']}" for p in probs) + " |")
            print("| --- |" + " ---: |" * len(probs))
        print(f"| {os.path.basename(f)[:-5]} | " + " | ".join(f"{row[p]['median_us']:.1f} µs {100*row[p]['fraction_of_copy']:.1f} %" for p in probs) + " |")
