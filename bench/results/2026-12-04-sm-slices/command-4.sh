#!/usr/bin/env bash
# Call 4 (carry build/bandjit = 73a22e9's code): issue 7's layer_norm forwards at H = 65536
# with row pairs (each weight and bias read once for two rows) in clusters of 8 × 256 and
# 4 × 512 threads in 8-byte pieces, against the default, two rounds in opposite order, with
# `check` of the H = 65536 forwards under each setting.
d=bench/results/2026-12-04-sm-slices
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_CACHE_DIR=/tmp/c4-cache
p="BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_VEC_BYTES=8"
s=("default" "$p BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_WEIGHT_AHEAD=1" "$p BANDJIT_ROW_BLOCK_THREADS=256" "$p BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_WEIGHT_AHEAD=1")
CHECK_SHAPES=$d/ln-check.json scripts/sweep-rows $o/r1 $d/ln-65536.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-65536.json "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack done
rm -rf $o
