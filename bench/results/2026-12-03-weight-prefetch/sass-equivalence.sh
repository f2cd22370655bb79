#!/usr/bin/env bash
# SASS of each kernel's generated source compiled against 0c9b281's templates (/tmp/headinc/bandjit,
# from `git archive 0c9b281 templates`) and this change's (/tmp/inc/bandjit -> templates/); CU: a cuobjdump.
cd /work/main
export CU=/tmp/tv/lib/python3.11/site-packages/triton/backends/nvidia/bin/cuobjdump
one() {  # file index family
  local f=$1 i=$2 fam=$3 tag=$(basename $1 .json)-$2-$3
  ./build/bandjit emit --shapes $f --index $i --family $fam > /tmp/eq/$tag.cu 2>/dev/null || { echo "$tag emit-failed"; return; }
  for v in head new; do
    inc=/tmp/headinc; [ $v = new ] && inc=/tmp/inc
    /usr/local/cuda/bin/nvcc -std=c++17 -I$inc -I/usr/local/cuda/include -cubin -arch=sm_90a /tmp/eq/$tag.cu -o /tmp/eq/$tag.$v.cubin 2>/dev/null || { echo "$tag $v compile-failed"; return; }
    $CU -sass /tmp/eq/$tag.$v.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's#/\* 0x[0-9a-f]* \*/##' > /tmp/eq/$tag.$v.sass
  done
  if cmp -s /tmp/eq/$tag.head.sass /tmp/eq/$tag.new.sass; then echo "$tag same $(wc -l < /tmp/eq/$tag.new.sass)"; else echo "$tag DIFFERENT $(wc -l < /tmp/eq/$tag.head.sass) -> $(wc -l < /tmp/eq/$tag.new.sass)"; fi
  rm -f /tmp/eq/$tag.cu /tmp/eq/$tag.*.cubin
}
export -f one
python3 - <<'PY' > /tmp/eq/jobs.txt
import json
for f in ['bench/shapes/issue-7-softmax.json','bench/shapes/issue-7-layer-norm.json']:
    for i,p in enumerate(json.load(open(f))['problems']):
        if 'softmax' in f and p['dtype']!='float16': continue
        s=p['parameter_set']
        for fam in [s, s+'_backward']: print(f,i,fam)
PY
cat /tmp/eq/jobs.txt | xargs -P 2 -n 3 bash -c 'one "$@"' _ | sort > /tmp/eq/result.txt
