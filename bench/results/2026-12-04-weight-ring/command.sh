#!/usr/bin/env bash
# Call 1 (carry build/bandjit = bd1c032 + the weight ring, BANDJIT_ROW_WEIGHT_RING): issue 7's
# layer_norm forwards at H = 16384 and 65536 under the default and rings of 2 … 6 pieces, two
# rounds in opposite order, `check` of the H = 65536 forwards under every setting, and of every
# issue-7 forward under a ring of 6.
d=bench/results/2026-12-04-weight-ring
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s=("default")
for r in 2 3 4 5 6; do s+=("BANDJIT_ROW_WEIGHT_RING=$r"); done
CHECK_SHAPES=$d/ln-65536.json scripts/sweep-rows $o/r1 $d/ln-long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-long.json "${s[5]}" "${s[4]}" "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
BANDJIT_ROW_WEIGHT_RING=6 build/bandjit pregenerate -j 16 --shapes $d/ln-forward.json > $o/check-ring6-pregenerate.txt 2>&1
BANDJIT_ROW_WEIGHT_RING=6 timeout 240 build/bandjit check --timing-runs 1 --shapes $d/ln-forward.json --json $o/check-ring6.json > $o/check-ring6.txt 2>&1
echo "exit $?" >> $o/check-ring6.txt; pack done
rm -rf $o
