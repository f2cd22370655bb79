# Compares `bandjit bench` JSON files row by row: median µs / fraction of the copy bandwidth.
# Usage: python3 compare.py A.json B.json ...
import json,sys
def load(f):
    d=json.load(open(f)); return {(json.dumps(r['problem_json'],sort_keys=True),r['family']):r for r in d['rows']}
fs=sys.argv[1:]; ds=[load(f) for f in fs]
for k in ds[0]:
    p=json.loads(k[0]); r=[d[k] for d in ds if k in d]
    desc=f"{k[1][:18]:18} {p.get('dtype','')[:4]:4} L={p.get('row_length')} m={p.get('mask','-')[:4]} c={int(p.get('causal',0))}"
    print(desc.ljust(48), ' '.join(f"{x['median_us']:8.2f}/{100*x['fraction_of_copy']:5.1f}%" for x in r))
