#!/usr/bin/env bash
# Fourth call (carry build/bandjit = 09962b1):
# the boolean-masked 16-bit softmax forward with −inf written over the removed keys in the
# staged slots (and its statistics pass unrolled) against the default, two rounds in opposite
# order, `check` of the same shapes in round 1 and of tests/shapes/softmax.json under the knob;
# Nsight Compute's instruction count and duration of the float16 L = 65536 forward both ways.
d=bench/results/2026-12-04-head-order
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c4-cache
s=("default" "BANDJIT_ROW_MASK_WORDS=1")
CHECK_SHAPES=$d/masked-forward.json scripts/sweep-rows $o/r1 $d/masked-forward.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/masked-forward.json "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
for v in 0 1; do
  BANDJIT_ROW_MASK_WORDS=$v timeout 90 ncu --clock-control none -k bandjit_scale_mask_softmax --launch-skip 3 --launch-count 1 \
    --metrics smsp__inst_executed.sum,gpu__time_duration.sum,sm__inst_issued.avg.pct_of_peak_sustained_active,dram__bytes_read.sum \
    build/bandjit bench --runs 5 --shapes $d/masked-f16-65536.json > $o/ncu-words-$v.txt 2>&1; pack ncu-$v
done
export BANDJIT_ROW_MASK_WORDS=1
build/bandjit pregenerate -j 16 --shapes tests/shapes/softmax.json > $o/check-pregenerate.txt 2>&1
build/bandjit check --timing-runs 1 --shapes tests/shapes/softmax.json --json $o/check-softmax.json > $o/check-softmax.txt 2>&1
tail -1 $o/check-softmax.txt; pack done
rm -rf $o
