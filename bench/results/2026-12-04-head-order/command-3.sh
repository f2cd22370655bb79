#!/usr/bin/env bash
# Third call (carry build/bandjit = 78dba5a): the boolean-masked 16-bit softmax forward
# with its mask bytes loaded past the L1 (BANDJIT_ROW_MASK_NO_ALLOCATE=1) against the
# default, two rounds in opposite order, `check` in round 1; then Nsight Compute's full set
# on the float16 L = 65536 forward with and without the mask, and on the float16 H = 65536
# layer_norm forward (clocks not locked).
d=bench/results/2026-12-04-head-order
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c3-cache
s=("default" "BANDJIT_ROW_MASK_NO_ALLOCATE=1")
CHECK_SHAPES=$d/masked-forward.json scripts/sweep-rows $o/r1 $d/masked-forward.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/masked-forward.json "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
prof() {  # name kernel shapes
  build/bandjit pregenerate --shapes $3 > /dev/null 2>&1
  timeout 150 ncu --clock-control none --set full --import-source no -k $2 --launch-skip 3 --launch-count 1 \
    -o $o/$1 build/bandjit bench --runs 5 --shapes $3 > $o/$1.log 2>&1
  ncu --import $o/$1.ncu-rep --print-details all > $o/$1.txt 2>&1
  ncu --import $o/$1.ncu-rep --page source --csv --print-source sass > $o/$1-sass.csv 2>&1
  pack $1
}
prof ncu-masked bandjit_scale_mask_softmax $d/masked-f16-65536.json
prof ncu-plain bandjit_softmax $d/plain-f16-65536.json
prof ncu-ln bandjit_layer_norm $d/ln-f16-65536.json
pack done
rm -rf $o
