#!/usr/bin/env bash
# Call 6 (carry build/bandjit = 0ea6584 + ring-l1-policy.patch: ../2026-12-04-sm-slices/l1-policy.patch
# on the ring's code; BANDJIT_ROW_L1_POLICY=2 loads x past the L1): issue 7's forwards at
# H = 16384 and 65536 under the default, x past the L1, and rings of 2 and 4 with x past the
# L1, two rounds in opposite order, `check` of the H = 65536 forwards under each setting.
d=bench/results/2026-12-04-weight-ring
o=$OUT/c6; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c6.tgz -C $OUT c6; }
export BANDJIT_CACHE_DIR=/tmp/c6-cache
s=("default" "BANDJIT_ROW_L1_POLICY=2" "BANDJIT_ROW_L1_POLICY=2 BANDJIT_ROW_WEIGHT_RING=2" "BANDJIT_ROW_L1_POLICY=2 BANDJIT_ROW_WEIGHT_RING=4" "BANDJIT_ROW_WEIGHT_RING=4")
CHECK_SHAPES=$d/ln-65536.json scripts/sweep-rows $o/r1 $d/ln-long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-long.json "${s[4]}" "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
