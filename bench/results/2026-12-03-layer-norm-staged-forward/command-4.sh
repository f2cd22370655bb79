#!/usr/bin/env bash
# Call 4 on the H200 (carry build/bandjit): the overlapped backward in 1024-thread blocks (one
# 16-byte piece a thread; BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=1024) against the
# defaults (512 threads) on the H = 16384 and 65536 rows; 3, 4, 6 stages; `check` of the
# 1024-thread kernels. Two rounds of the default and the 1024-thread setting.
d=bench/results/2026-12-03-layer-norm-staged-forward
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
W="BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=1024"
CHECK_SHAPES=$d/ln-long.json timeout 200 scripts/sweep-rows $o/sweep-1 $d/ln-long.json default "$W" \
  "$W BANDJIT_ROW_STAGES=3" "$W BANDJIT_ROW_STAGES=6" > $o/sweep-1.txt 2>&1
pack sweep-1
timeout 100 scripts/sweep-rows $o/sweep-2 $d/ln-long.json default "$W" > $o/sweep-2.txt 2>&1
pack done
rm -rf $o
