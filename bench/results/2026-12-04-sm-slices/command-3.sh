#!/usr/bin/env bash
# Call 3 (carry build/bandjit: the working tree after 73a22e9 with BANDJIT_ROW_L1_POLICY):
# issue 7's layer_norm forwards at H = 65536 with L1 hints on their loads (x past the L1,
# the weights marked evict_last, both) against the default, two rounds in opposite order,
# with `check` of the H = 65536 forwards under each setting.
d=bench/results/2026-12-04-sm-slices
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_CACHE_DIR=/tmp/c3-cache
s=("default" "BANDJIT_ROW_L1_POLICY=2" "BANDJIT_ROW_L1_POLICY=3" "BANDJIT_ROW_L1_POLICY=4")
CHECK_SHAPES=$d/ln-check.json scripts/sweep-rows $o/r1 $d/ln-65536.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-65536.json "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
scripts/sweep-rows $o/r3 $d/ln-65536.json "${s[@]}" > $o/r3.txt 2>&1; pack done
rm -rf $o
