#!/usr/bin/env bash
# Call 4 (carry build/bandjit = 6f70135 + weight-ring-ca.patch: the ring's
# copies by cp.async.ca, through the L1): issue 7's layer_norm forwards at H = 16384 and 65536
# under the default and rings of 2, 4 and 6 pieces, two rounds in opposite order, `check` of
# the H = 65536 forwards under each setting; Nsight Compute's full set on the float16
# H = 65536 forward with a ring of 4.
d=bench/results/2026-12-04-weight-ring
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_CACHE_DIR=/tmp/c4-cache
s=("default" "BANDJIT_ROW_WEIGHT_RING=2" "BANDJIT_ROW_WEIGHT_RING=4" "BANDJIT_ROW_WEIGHT_RING=6")
CHECK_SHAPES=$d/ln-65536.json scripts/sweep-rows $o/r1 $d/ln-long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-long.json "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
export BANDJIT_CACHE_DIR=/tmp/c4-ncu BANDJIT_ROW_WEIGHT_RING=4
build/bandjit pregenerate --shapes $d/ln-f16-65536.json > /dev/null 2>&1
timeout 150 ncu --clock-control none --set full --import-source no -k bandjit_layer_norm --launch-skip 3 --launch-count 1 \
  -o $o/ncu-ring4-ca build/bandjit bench --runs 5 --shapes $d/ln-f16-65536.json > $o/ncu-ring4-ca.log 2>&1
ncu --import $o/ncu-ring4-ca.ncu-rep --print-details all > $o/ncu-ring4-ca.txt 2>&1
rm -f $o/ncu-ring4-ca.ncu-rep
pack done
rm -rf $o
