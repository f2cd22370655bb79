#!/usr/bin/env bash
# Call 3 (carry build/bandjit = the working tree after 09bd18f with BANDJIT_ROW_CLUSTER_ROWS):
# issue 7's layer_norm forwards at H = 16384 and 65536 under the default and with two rows
# side by side in clusters of twice the blocks (with and without the float16 weights ahead),
# two rounds in opposite order, `check` of the H = 65536 forwards under each setting; then
# Nsight Compute's full set on the float16 H = 65536 forward with two rows a cluster.
d=bench/results/2026-12-04-weight-ring
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_CACHE_DIR=/tmp/c3-cache
s=("default" "BANDJIT_ROW_CLUSTER_ROWS=2" "BANDJIT_ROW_CLUSTER_ROWS=2 BANDJIT_ROW_WEIGHT_AHEAD=0")
CHECK_SHAPES=$d/ln-65536.json scripts/sweep-rows $o/r1 $d/ln-long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-long.json "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
export BANDJIT_CACHE_DIR=/tmp/c3-ncu BANDJIT_ROW_CLUSTER_ROWS=2
build/bandjit pregenerate --shapes $d/ln-f16-65536.json > /dev/null 2>&1
timeout 150 ncu --clock-control none --set full --import-source no -k bandjit_layer_norm --launch-skip 3 --launch-count 1 \
  -o $o/ncu-rows2 build/bandjit bench --runs 5 --shapes $d/ln-f16-65536.json > $o/ncu-rows2.log 2>&1
ncu --import $o/ncu-rows2.ncu-rep --print-details all > $o/ncu-rows2.txt 2>&1
rm -f $o/ncu-rows2.ncu-rep
pack done
rm -rf $o
