#!/usr/bin/env bash
# First call (carry build/bandjit = d43ac2d, the head-order knob): issue 7's
# boolean-masked 16-bit softmax rows with blocks taking the rows head-fastest
# (BANDJIT_ROW_HEAD_ORDER=1) against the default, two rounds in opposite order, with `check`
# of the same shapes under each setting; then the rows below 80 % at 1, 2 and 4 times
# issue 7's row count (default settings), to see how much of their time is fixed.
d=bench/results/2026-12-04-head-order
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s=("default" "BANDJIT_ROW_HEAD_ORDER=1")
CHECK_SHAPES=$d/masked.json scripts/sweep-rows $o/r1 $d/masked.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/masked.json "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
scripts/sweep-rows $o/sizes $d/sizes.json default > $o/sizes.txt 2>&1; pack sizes
scripts/sweep-rows $o/sizes-ho $d/sizes.json "BANDJIT_ROW_HEAD_ORDER=1" > $o/sizes-ho.txt 2>&1; pack done
rm -rf $o
