#!/usr/bin/env bash
# Eighth call (carry build/bandjit-exp2 = f4c0f24 + column-sums.patch): how much of the 16-bit
# H = 65536 layer_norm backward's fixed time is adding its dweight/dbias column sums at the end.
# Timing only: BANDJIT_LN_EXPERIMENT=1 skips those reductions (wrong dweight/dbias, no check).
# 1024, 2048, 4096 rows; two rounds in opposite order.
d=bench/results/2026-12-04-head-order
o=$OUT/c8; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c8.tgz -C $OUT c8; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c8-cache
run() { # name value
  [ $2 = 0 ] && unset BANDJIT_LN_EXPERIMENT || export BANDJIT_LN_EXPERIMENT=$2
  build/bandjit-exp2 pregenerate -j 16 --shapes $d/ln-sizes.json > $o/pregenerate-$1.txt 2>&1
  build/bandjit-exp2 bench --runs 30 --shapes $d/ln-sizes.json --json $o/bench-$1.json > $o/bench-$1.txt 2>&1
}
run default-r1 0; run skip-r1 1; pack r1
run skip-r2 1; run default-r2 0; pack r2
rm -rf $o
